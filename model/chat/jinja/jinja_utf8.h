// UTF-8 as Python's str sees it: lengths, indexes and slices count code points, not bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::jinja {

// Appends `code_point` encoded as UTF-8.
void append_utf8(std::string& out, char32_t code_point);

// The code points of `text`; an invalid byte stands for itself (as U+0080..U+00FF would
// not), so that malformed input never throws and round-trips through encode_utf8.
std::vector<char32_t> decode_utf8(std::string_view text);

std::string encode_utf8(const std::vector<char32_t>& code_points);

// Python's len(text).
size_t count_code_points(std::string_view text);

}  // namespace strata::jinja
