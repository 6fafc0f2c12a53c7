#include "model/chat/reply/markup_scan.h"

#include <algorithm>

#include "model/tokenizer/utf8.h"

namespace strata {

Match match_at(std::string_view text, size_t pos, std::string_view literal) {
  const std::string_view rest = text.substr(std::min(pos, text.size()));
  if (rest.starts_with(literal)) return Match::kYes;
  if (rest.size() < literal.size() && literal.starts_with(rest)) return Match::kPartial;
  return Match::kNo;
}

MarkerHit find_first_marker(std::string_view text, std::span<const std::string_view> markers) {
  MarkerHit hit;
  for (size_t i = 0; i < markers.size(); ++i) {
    const size_t pos = text.find(markers[i]);
    if (pos == std::string_view::npos) continue;
    if (pos < hit.pos || (pos == hit.pos && markers[i].size() > markers[hit.marker].size())) {
      hit = {.pos = pos, .marker = i};
    }
  }
  return hit;
}

size_t partial_marker_tail(std::string_view text, std::span<const std::string_view> markers) {
  size_t longest = 0;
  for (const std::string_view marker : markers) {
    const size_t max_len = std::min(text.size(), marker.size() - 1);
    for (size_t len = max_len; len > longest; --len) {
      if (text.ends_with(marker.substr(0, len))) {
        longest = len;
        break;
      }
    }
  }
  return longest;
}

size_t incomplete_utf8_tail(std::string_view text) {
  // A character is at most 4 bytes: only the last 3 can start an unfinished one.
  const size_t first = text.size() > 3 ? text.size() - 3 : 0;
  for (size_t start = first; start < text.size(); ++start) {
    const auto lead = static_cast<unsigned char>(text[start]);
    if ((lead & 0xC0) == 0x80) continue;  // continuation byte
    const utf8::SequenceCheck check = utf8::check_sequence(text.substr(start));
    if (check.status == utf8::SequenceStatus::kIncomplete) return text.size() - start;
  }
  return 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

std::string_view trim_trailing_space(std::string_view text) {
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace strata
