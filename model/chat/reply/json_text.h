// The few JSON text operations the reply parsers need: quoting text as a JSON string,
// reading a string literal back, and checking a number's grammar (RFC 8259).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata {

// `text` (UTF-8) as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

// The characters of `text` escaped for the inside of a JSON string literal.
std::string json_escape(std::string_view text);

struct JsonStringRead {
  enum class Status { kComplete, kIncomplete, kInvalid } status = Status::kInvalid;
  std::string value = {};  // kComplete: the decoded UTF-8 text
  size_t end = 0;     // kComplete: the position after the closing quote
};

// Reads the string literal that starts with the quote at text[pos].
JsonStringRead read_json_string(std::string_view text, size_t pos);

// Whether `text` is exactly a JSON number (e.g. "-1.5e3"; not "01", "+1" or ".5").
bool is_json_number(std::string_view text);

}  // namespace strata
