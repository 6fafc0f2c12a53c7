// Byte-level scanning shared by the reply parsers: finding markers in generated text and
// telling whether the end of a chunk could still grow into one.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace strata {

enum class Match {
  kYes,      // the literal is at the position
  kNo,       // it is not, whatever follows
  kPartial,  // the text ends inside what could still be the literal
};

// Whether `literal` starts at text[pos].
Match match_at(std::string_view text, size_t pos, std::string_view literal);

struct MarkerHit {
  size_t pos = std::string_view::npos;  // npos: no marker in the text
  size_t marker = 0;                    // index into the markers searched for
};

// The earliest complete marker in `text` (the longest, where two start at one position).
MarkerHit find_first_marker(std::string_view text, std::span<const std::string_view> markers);

// Bytes at the end of `text` that are a proper prefix of some marker: the tail a
// streaming parser holds back until the next chunk decides it.
size_t partial_marker_tail(std::string_view text, std::span<const std::string_view> markers);

// Bytes at the end of `text` that begin a UTF-8 character not yet complete.
size_t incomplete_utf8_tail(std::string_view text);

bool is_space(char c);  // ASCII whitespace as JSON and the markup formats define it

// The first position at or after `pos` that is not whitespace (text.size() if none).
size_t skip_space(std::string_view text, size_t pos);

// `text` without trailing whitespace.
std::string_view trim_trailing_space(std::string_view text);

}  // namespace strata
