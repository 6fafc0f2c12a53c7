// Readers for one setting's value as written in the config file, the environment or on
// the command line. Each returns the value, or throws ConfigError saying what is wrong
// with it ("'abc' is not an integer") but not where it was written: the caller knows
// that and adds it ("STRATA_PORT: 'abc' is not an integer").
//
// Pure functions, except read_api_key_file and read_chat_template_file (read a file): any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// A decimal integer in min..max ("+5", "5.0", "0x10" and blanks are refused).
int64_t parse_integer(std::string_view value, int64_t min, int64_t max);

// Bytes, as a whole number with an optional binary suffix K, M, G or T (also KB,
// KiB...; any case): "8G" is 8 << 30. At least `min`.
int64_t parse_size(std::string_view value, int64_t min);
// The shortest such spelling of `bytes`: 17179869184 -> "16G", 1000 -> "1000".
std::string format_size(int64_t bytes);

enum class Zero { kAllowed, kRefused };

// A finite, non-negative number of seconds ("2.5"); with Zero::kRefused, more than 0.
double parse_seconds(std::string_view value, Zero zero);

// "a, b,,c" -> {"a", "b", "c"}: blanks around items and empty items are dropped, so an
// empty value is an empty list.
std::vector<std::string> split_list(std::string_view value);

// An allowed-hosts entry: a name or address as it appears in a URL, with or without
// :port ("box.lan", "box.lan:8080", "[fd00::5]"); lower-cased.
std::string parse_host_name(std::string_view item);

// A cors-origins entry: "*", or an origin as browsers send it in the Origin header,
// scheme://host[:port] with no path; lower-cased, as browsers send it.
std::string parse_origin(std::string_view item);

// An API key: printable ASCII without spaces, since it travels in a header and is
// compared byte for byte.
std::string parse_api_key(std::string_view key);

// The key in a file (a systemd credential, a secret mounted by a container runtime),
// without the blanks and line break around it.
std::string read_api_key_file(const std::string& path);

// The text of a chat template file (Jinja), as written; refuses a missing or empty file.
// Whether the template can run is checked when the model loads.
std::string read_chat_template_file(const std::string& path);

}  // namespace strata
