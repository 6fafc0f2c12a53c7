#include "service/config/setting_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "common/str_cat.h"
#include "service/config/config_error.h"
#include "service/config/config_file.h"

namespace strata {
namespace {

[[noreturn]] void bad_value(const std::string& message) { throw ConfigError(message); }

std::string_view trim(std::string_view s) {
  constexpr std::string_view kBlank = " \t\r\n\f\v";
  size_t first = s.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlank) - first + 1);
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

int64_t parse_integer(std::string_view value, int64_t min, int64_t max) {
  int64_t n = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  bool overflow = error == std::errc::result_out_of_range;
  if (!overflow && (error != std::errc{} || end != value.data() + value.size())) {
    bad_value(str_cat("'", value, "' is not an integer"));
  }
  if (overflow || n < min || n > max) {
    // A maximum that is only the type's is no limit a person chose; below the minimum,
    // the minimum is all worth saying.
    bool below = !overflow && n < min;
    bool chosen_max = max < std::numeric_limits<int>::max() ||
                      (!below && max < std::numeric_limits<int64_t>::max());
    bad_value(str_cat(value, " is out of range: must be ",
                      chosen_max ? str_cat(min, " to ", max) : str_cat("at least ", min)));
  }
  return n;
}

int64_t parse_size(std::string_view value, int64_t min) {
  size_t digits = 0;
  while (digits < value.size() && std::isdigit(static_cast<unsigned char>(value[digits]))) {
    ++digits;
  }
  std::string suffix(value.substr(digits));
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.ends_with("IB")) suffix.erase(suffix.size() - 2);
  if (suffix.size() == 2 && suffix.back() == 'B') suffix.pop_back();
  constexpr std::string_view kUnits = "KMGT";
  int shift = 0;
  if (suffix.size() == 1 && kUnits.find(suffix[0]) != std::string_view::npos) {
    shift = 10 * (static_cast<int>(kUnits.find(suffix[0])) + 1);
  } else if (!suffix.empty() && suffix != "B") {
    bad_value(str_cat("'", value, "' is not a size (examples: 512M, 8G, 1T)"));
  }
  if (digits == 0) bad_value(str_cat("'", value, "' is not a size (examples: 512M, 8G, 1T)"));
  const int64_t number = parse_integer(value.substr(0, digits), 0,
                                       std::numeric_limits<int64_t>::max() >> shift);
  const int64_t bytes = number << shift;
  if (bytes < min) bad_value(str_cat(value, " is out of range: must be at least ", min, " bytes"));
  return bytes;
}

std::string format_size(int64_t bytes) {
  constexpr std::string_view kUnits = "TGMK";
  for (size_t i = 0; i < kUnits.size(); ++i) {
    const int shift = 10 * static_cast<int>(kUnits.size() - i);
    if (bytes > 0 && bytes % (int64_t{1} << shift) == 0) {
      return str_cat(bytes >> shift, kUnits[i]);
    }
  }
  return std::to_string(bytes);
}

double parse_seconds(std::string_view value, Zero zero) {
  double seconds = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (error != std::errc{} || end != value.data() + value.size() || !std::isfinite(seconds)) {
    bad_value(str_cat("'", value, "' is not a number of seconds"));
  }
  if (seconds < 0 || (zero == Zero::kRefused && seconds == 0)) {
    bad_value(str_cat(value, " is out of range: must be ",
                      zero == Zero::kRefused ? "more than 0" : "at least 0"));
  }
  return seconds;
}

std::vector<std::string> split_list(std::string_view value) {
  std::vector<std::string> items;
  while (true) {
    size_t comma = value.find(',');
    std::string_view item = trim(value.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    value.remove_prefix(comma + 1);
  }
}

std::string parse_host_name(std::string_view item) {
  bool plain = std::all_of(item.begin(), item.end(), [](char c) {
    return is_alnum(c) || std::string_view(".-_:[]").find(c) != std::string_view::npos;
  });
  if (!plain) {
    bad_value(str_cat("'", item,
                      "' is not a host name: write it as it appears in the URL, "
                      "without scheme or path, e.g. 'box.lan'"));
  }
  return lowercase(item);
}

std::string parse_origin(std::string_view item) {
  if (item == "*") return "*";
  std::string origin = lowercase(item);
  size_t scheme_end = origin.find("://");
  std::string_view rest = scheme_end == std::string::npos
                              ? std::string_view()
                              : std::string_view(origin).substr(scheme_end + 3);
  bool valid = scheme_end != std::string::npos && scheme_end > 0 && !rest.empty() &&
               rest.find_first_of("/?#@ \t") == std::string_view::npos;
  if (!valid) {
    std::string hint;
    if (rest.size() > 1 && rest.find('/') == rest.size() - 1) {
      hint = str_cat(" (without the trailing slash: '", item.substr(0, item.size() - 1), "')");
    }
    bad_value(str_cat("'", item,
                      "' is not an origin: write scheme://host[:port], "
                      "e.g. 'http://localhost:3000', or *",
                      hint));
  }
  return origin;
}

std::string parse_api_key(std::string_view key) {
  // Also catches a key file holding two lines.
  bool printable = std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; });
  if (!printable) bad_value("the API key must be printable ASCII without spaces");
  return std::string(key);
}

std::string read_api_key_file(const std::string& path) {
  std::optional<std::string> contents = read_text_file(path);
  if (!contents) bad_value(str_cat("cannot read '", path, "': No such file or directory"));
  std::string_view key = trim(*contents);
  if (key.empty()) bad_value(str_cat("'", path, "' is empty"));
  return parse_api_key(key);
}

std::string read_chat_template_file(const std::string& path) {
  std::optional<std::string> contents = read_text_file(path);
  if (!contents) bad_value(str_cat("cannot read '", path, "': No such file or directory"));
  if (trim(*contents).empty()) bad_value(str_cat("'", path, "' is empty"));
  return std::move(*contents);
}

}  // namespace strata
