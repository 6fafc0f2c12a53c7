#include "model/chat/python_strip.h"

#include <array>

namespace strata {
namespace {

// The UTF-8 encodings of the characters Python's str.isspace() accepts, apart from the
// single-byte ones (U+0009..U+000D, U+001C..U+001F, U+0020).
constexpr std::array<std::string_view, 19> kMultiByteSpaces = {
    "\xC2\x85",          // U+0085 next line
    "\xC2\xA0",          // U+00A0 no-break space
    "\xE1\x9A\x80",      // U+1680 ogham space mark
    "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84",
    "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89",
    "\xE2\x80\x8A",      // U+2000..U+200A en quad .. hair space
    "\xE2\x80\xA8",      // U+2028 line separator
    "\xE2\x80\xA9",      // U+2029 paragraph separator
    "\xE2\x80\xAF",      // U+202F narrow no-break space
    "\xE2\x81\x9F",      // U+205F medium mathematical space
    "\xE3\x80\x80",      // U+3000 ideographic space
};

bool is_single_byte_space(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte >= 0x09 && byte <= 0x0D) || (byte >= 0x1C && byte <= 0x20);
}

// Byte length of the Python whitespace character that `text` starts with, or 0.
size_t leading_space_bytes(std::string_view text) {
  if (text.empty()) return 0;
  if (is_single_byte_space(text.front())) return 1;
  for (std::string_view space : kMultiByteSpaces) {
    if (text.starts_with(space)) return space.size();
  }
  return 0;
}

// Byte length of the Python whitespace character that `text` ends with, or 0. In valid
// UTF-8 a trailing match is a whole character: its first byte is a lead byte.
size_t trailing_space_bytes(std::string_view text) {
  if (text.empty()) return 0;
  if (is_single_byte_space(text.back())) return 1;
  for (std::string_view space : kMultiByteSpaces) {
    if (text.ends_with(space)) return space.size();
  }
  return 0;
}

}  // namespace

std::string_view python_strip(std::string_view text) {
  while (size_t n = leading_space_bytes(text)) text.remove_prefix(n);
  while (size_t n = trailing_space_bytes(text)) text.remove_suffix(n);
  return text;
}

std::string_view python_lstrip(std::string_view text, std::string_view ascii_chars) {
  const size_t first = text.find_first_not_of(ascii_chars);
  return first == std::string_view::npos ? std::string_view() : text.substr(first);
}

std::string_view python_rstrip(std::string_view text, std::string_view ascii_chars) {
  const size_t last = text.find_last_not_of(ascii_chars);
  return last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
}

std::string_view python_strip(std::string_view text, std::string_view ascii_chars) {
  return python_rstrip(python_lstrip(text, ascii_chars), ascii_chars);
}

}  // namespace strata
