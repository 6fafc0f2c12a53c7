// Python's str.strip() semantics on UTF-8 text, as chat templates call them (Jinja's
// `trim` filter is str.strip() too). Byte-identical rendering depends on the exact set:
// Python strips every character for which str.isspace() holds, which includes U+00A0,
// U+3000, U+2028 and the ASCII separators U+001C..U+001F, but not U+200B or U+FEFF.
#pragma once

#include <string_view>

namespace strata {

// s.strip(): Python whitespace removed from both ends.
std::string_view python_strip(std::string_view text);

// s.strip(chars), s.lstrip(chars), s.rstrip(chars) for ASCII `chars` (e.g. "\n").
std::string_view python_strip(std::string_view text, std::string_view ascii_chars);
std::string_view python_lstrip(std::string_view text, std::string_view ascii_chars);
std::string_view python_rstrip(std::string_view text, std::string_view ascii_chars);

}  // namespace strata
