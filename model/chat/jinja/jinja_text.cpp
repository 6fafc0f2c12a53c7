#include "model/chat/jinja/jinja_text.h"

#include <utf8proc.h>

#include <algorithm>

#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

std::string encode_range(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) append_utf8(out, cps[i]);
  return out;
}

bool is_cased_letter(char32_t cp) {
  if (cp > 0x10FFFF) return false;
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category == UTF8PROC_CATEGORY_LU || category == UTF8PROC_CATEGORY_LL || category == UTF8PROC_CATEGORY_LT;
}

char32_t to_lower(char32_t cp) {
  return cp > 0x10FFFF ? cp : static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp)));
}
char32_t to_upper(char32_t cp) {
  return cp > 0x10FFFF ? cp : static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(cp)));
}

std::vector<std::string> split_whitespace(std::string_view text, int64_t maxsplit, bool from_right) {
  std::vector<char32_t> cps = decode_utf8(text);
  if (from_right) std::reverse(cps.begin(), cps.end());
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_python_space(cps[i])) ++i;
    if (i == cps.size()) break;
    size_t end = i;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      end = cps.size();  // the rest, trailing whitespace included, as Python keeps it
    } else {
      while (end < cps.size() && !is_python_space(cps[end])) ++end;
    }
    std::vector<char32_t> part(cps.begin() + static_cast<ptrdiff_t>(i), cps.begin() + static_cast<ptrdiff_t>(end));
    if (from_right) std::reverse(part.begin(), part.end());
    parts.push_back(encode_utf8(part));
    i = end;
  }
  if (from_right) std::reverse(parts.begin(), parts.end());
  return parts;
}

}  // namespace

bool is_python_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_python_alpha(char32_t cp) {
  if (cp > 0x10FFFF) return false;
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO;
}

bool is_python_digit(char32_t cp) {
  return cp <= 0x10FFFF && utf8proc_category(static_cast<utf8proc_int32_t>(cp)) == UTF8PROC_CATEGORY_ND;
}

std::vector<std::string> text_split(std::string_view text, std::optional<std::string_view> sep, int64_t maxsplit) {
  if (!sep) return split_whitespace(text, maxsplit, false);
  std::vector<std::string> parts;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t found = text.find(*sep, start);
    if (found == std::string_view::npos) break;
    parts.emplace_back(text.substr(start, found - start));
    start = found + sep->size();
  }
  parts.emplace_back(text.substr(start));
  return parts;
}

std::vector<std::string> text_rsplit(std::string_view text, std::optional<std::string_view> sep, int64_t maxsplit) {
  if (!sep) return split_whitespace(text, maxsplit, true);
  std::vector<std::string> parts;
  size_t end = text.size();
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    if (end < sep->size()) break;
    const size_t found = text.rfind(*sep, end - sep->size());
    if (found == std::string_view::npos) break;
    parts.emplace_back(text.substr(found + sep->size(), end - found - sep->size()));
    end = found;
  }
  parts.emplace_back(text.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> text_splitlines(std::string_view text) {
  const std::vector<char32_t> cps = decode_utf8(text);
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const bool is_break = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
                          c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!is_break) continue;
    lines.push_back(encode_range(cps, start, i));
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < cps.size()) lines.push_back(encode_range(cps, start, cps.size()));
  return lines;
}

std::string text_strip(std::string_view text, std::optional<std::string_view> chars, StripSide side) {
  const std::vector<char32_t> cps = decode_utf8(text);
  const std::vector<char32_t> set = chars ? decode_utf8(*chars) : std::vector<char32_t>();
  auto strippable = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_python_space(c);
  };
  size_t begin = 0, end = cps.size();
  if (side != StripSide::kRight) while (begin < end && strippable(cps[begin])) ++begin;
  if (side != StripSide::kLeft) while (end > begin && strippable(cps[end - 1])) --end;
  return encode_range(cps, begin, end);
}

std::string text_lower(std::string_view text) {
  std::string out;
  for (char32_t cp : decode_utf8(text)) append_utf8(out, to_lower(cp));
  return out;
}

std::string text_upper(std::string_view text) {
  std::string out;
  for (char32_t cp : decode_utf8(text)) {
    if (cp == 0xDF) out += "SS";  // Python's full mapping of ß; utf8proc's simple one gives ẞ
    else append_utf8(out, to_upper(cp));
  }
  return out;
}

std::string text_title(std::string_view text) {
  std::string out;
  bool previous_cased = false;
  for (char32_t cp : decode_utf8(text)) {
    append_utf8(out, previous_cased ? to_lower(cp) : to_upper(cp));
    previous_cased = is_cased_letter(cp);
  }
  return out;
}

std::string text_capitalize(std::string_view text) {
  std::string out;
  bool first = true;
  for (char32_t cp : decode_utf8(text)) {
    append_utf8(out, first ? to_upper(cp) : to_lower(cp));
    first = false;
  }
  return out;
}

std::string text_replace(std::string_view text, std::string_view old_text, std::string_view new_text, int64_t count) {
  std::string out;
  if (old_text.empty()) {  // Python inserts `new` between characters and at both ends
    const std::vector<char32_t> cps = decode_utf8(text);
    int64_t n = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || n < count) {
        out += new_text;
        ++n;
      }
      if (i < cps.size()) append_utf8(out, cps[i]);
    }
    return out;
  }
  size_t start = 0;
  for (int64_t n = 0; count < 0 || n < count; ++n) {
    const size_t found = text.find(old_text, start);
    if (found == std::string_view::npos) break;
    out.append(text.substr(start, found - start));
    out.append(new_text);
    start = found + old_text.size();
  }
  out.append(text.substr(start));
  return out;
}

int64_t text_count(std::string_view text, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(count_code_points(text)) + 1;
  int64_t n = 0;
  for (size_t at = text.find(sub); at != std::string_view::npos; at = text.find(sub, at + sub.size())) ++n;
  return n;
}

int64_t text_find(std::string_view text, std::string_view sub, bool from_right) {
  const size_t at = from_right ? text.rfind(sub) : text.find(sub);
  if (at == std::string_view::npos) return -1;
  return static_cast<int64_t>(count_code_points(text.substr(0, at)));
}

}  // namespace strata::jinja
