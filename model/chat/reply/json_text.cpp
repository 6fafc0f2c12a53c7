#include "model/chat/reply/json_text.h"

#include <cstdint>
#include <optional>

namespace strata {
namespace {

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

std::optional<uint32_t> parse_hex4(std::string_view text, size_t pos) {
  if (pos + 4 > text.size()) return std::nullopt;
  uint32_t value = 0;
  for (size_t i = pos; i < pos + 4; ++i) {
    const char c = text[i];
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      value |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      value |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return value;
}

// Decodes the escape at text[pos] (just after the backslash); returns the position after
// it, or npos when invalid, or text.size() + 1 when the text ends inside it.
size_t decode_escape(std::string_view text, size_t pos, std::string& out) {
  constexpr size_t kIncomplete = std::string_view::npos - 1;
  if (pos >= text.size()) return kIncomplete;
  const char c = text[pos];
  switch (c) {
    case '"': out += '"'; return pos + 1;
    case '\\': out += '\\'; return pos + 1;
    case '/': out += '/'; return pos + 1;
    case 'b': out += '\b'; return pos + 1;
    case 'f': out += '\f'; return pos + 1;
    case 'n': out += '\n'; return pos + 1;
    case 'r': out += '\r'; return pos + 1;
    case 't': out += '\t'; return pos + 1;
    case 'u': break;
    default: return std::string_view::npos;
  }
  if (pos + 5 > text.size()) return kIncomplete;
  const std::optional<uint32_t> unit = parse_hex4(text, pos + 1);
  if (!unit) return std::string_view::npos;
  size_t end = pos + 5;
  uint32_t code_point = *unit;
  if (code_point >= 0xD800 && code_point < 0xDC00) {
    // A high surrogate pairs with a following \uDC00..\uDFFF; alone it becomes U+FFFD.
    if (end + 6 > text.size() && text.substr(end).starts_with("\\u")) return kIncomplete;
    const std::optional<uint32_t> low =
        text.substr(end).starts_with("\\u") ? parse_hex4(text, end + 2) : std::nullopt;
    if (low && *low >= 0xDC00 && *low < 0xE000) {
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (*low - 0xDC00);
      end += 6;
    } else {
      code_point = 0xFFFD;
    }
  } else if (code_point >= 0xDC00 && code_point < 0xE000) {
    code_point = 0xFFFD;
  }
  append_utf8(out, code_point);
  return end;
}

}  // namespace

std::string json_escape(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xF];
          out += kHex[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string json_quote(std::string_view text) {
  return "\"" + json_escape(text) + "\"";
}

JsonStringRead read_json_string(std::string_view text, size_t pos) {
  using Status = JsonStringRead::Status;
  JsonStringRead read;
  if (pos >= text.size()) return {.status = Status::kIncomplete};
  if (text[pos] != '"') return {.status = Status::kInvalid};
  for (size_t i = pos + 1; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      read.status = Status::kComplete;
      read.end = i + 1;
      return read;
    }
    if (static_cast<unsigned char>(c) < 0x20) return {.status = Status::kInvalid};
    if (c != '\\') {
      read.value += c;
      ++i;
      continue;
    }
    i = decode_escape(text, i + 1, read.value);
    if (i == std::string_view::npos) return {.status = Status::kInvalid};
    if (i == std::string_view::npos - 1) return {.status = Status::kIncomplete};
  }
  return {.status = Status::kIncomplete};
}

bool is_json_number(std::string_view text) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (i < text.size() && text[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

}  // namespace strata
