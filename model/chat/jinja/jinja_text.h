// Python's str methods on UTF-8 text, the ones chat templates call (`content.split(...)`,
// `content.strip()`, `role.title()`), with Python's results, code point by code point.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::jinja {

// str.split(sep, maxsplit) and str.rsplit; no `sep`: split on runs of whitespace.
std::vector<std::string> text_split(std::string_view text, std::optional<std::string_view> sep, int64_t maxsplit);
std::vector<std::string> text_rsplit(std::string_view text, std::optional<std::string_view> sep, int64_t maxsplit);
// str.splitlines() (without keepends).
std::vector<std::string> text_splitlines(std::string_view text);

enum class StripSide { kBoth, kLeft, kRight };
// str.strip(chars); no `chars`: whitespace.
std::string text_strip(std::string_view text, std::optional<std::string_view> chars, StripSide side);

std::string text_lower(std::string_view text);
std::string text_upper(std::string_view text);
// str.title(): each run of letters starts upper case, the rest lower case.
std::string text_title(std::string_view text);
// str.capitalize(): the first character upper case, the rest lower case.
std::string text_capitalize(std::string_view text);
// str.replace(old, new, count); count < 0: all.
std::string text_replace(std::string_view text, std::string_view old_text, std::string_view new_text, int64_t count);
// str.count(sub).
int64_t text_count(std::string_view text, std::string_view sub);
// str.find(sub) / str.rfind(sub) as a code point index, or -1.
int64_t text_find(std::string_view text, std::string_view sub, bool from_right);

// Python's str.isspace() etc. for one code point.
bool is_python_space(char32_t cp);
bool is_python_alpha(char32_t cp);
bool is_python_digit(char32_t cp);

}  // namespace strata::jinja
