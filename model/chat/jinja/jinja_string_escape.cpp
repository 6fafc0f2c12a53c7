#include "model/chat/jinja/jinja_string_escape.h"

#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `n` hex digits at body[i..]; -1 where they are not all there.
int64_t read_hex(std::string_view body, size_t i, size_t n) {
  if (i + n > body.size()) return -1;
  int64_t value = 0;
  for (size_t k = 0; k < n; ++k) {
    const int digit = hex_value(body[i + k]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

char simple_escape(char c) {
  switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '\\': return '\\';
    case '\'': return '\'';
    case '"': return '"';
    case 'a': return '\a';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'v': return '\v';
    default: return '\0';
  }
}

}  // namespace

std::string decode_python_escapes(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    if (const char simple = simple_escape(c)) {
      out += simple;
    } else if (c == '\n') {
      // A backslash before a newline continues the line.
    } else if (c >= '0' && c <= '7') {
      int value = 0;
      size_t n = 0;
      while (n < 3 && i < body.size() && body[i] >= '0' && body[i] <= '7') value = value * 8 + (body[i++] - '0'), ++n;
      --i;
      append_utf8(out, static_cast<char32_t>(value));
    } else if (c == 'x' || c == 'u' || c == 'U') {
      const size_t n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      const int64_t value = read_hex(body, i + 1, n);
      if (value < 0 || value > 0x10FFFF) {
        out += '\\';
        out += c;
        continue;
      }
      append_utf8(out, static_cast<char32_t>(value));
      i += n;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace strata::jinja
