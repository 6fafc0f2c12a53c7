#include "model/chat/jinja/jinja_percent_format.h"

#include <cstdio>
#include <optional>
#include <string>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {
namespace {

// Widths and precisions beyond this are refused rather than allocated.
constexpr size_t kMaxWidth = 10000;

// The part between % and the conversion: flags, width, precision.
struct Spec {
  bool left = false;
  size_t width = 0;
  std::optional<size_t> precision;
};

size_t parse_count(std::string_view digits) {
  size_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') throw RenderError("unsupported format specification", 0);
    value = value * 10 + static_cast<size_t>(c - '0');
    if (value > kMaxWidth) throw RenderError("format width or precision is too large", 0);
  }
  return value;
}

Spec parse_spec(std::string_view text) {
  Spec spec;
  size_t i = 0;
  while (i < text.size() && std::string_view("-+ #0").find(text[i]) != std::string_view::npos) spec.left |= text[i++] == '-';
  const size_t dot = text.find('.', i);
  spec.width = parse_count(text.substr(i, dot == std::string_view::npos ? std::string_view::npos : dot - i));
  if (dot != std::string_view::npos) spec.precision = parse_count(text.substr(dot + 1));
  return spec;
}

std::string format_number(char conversion, const std::string& spec, const Value& value) {
  if (!value.is_number()) {
    throw RenderError("%" + std::string(1, conversion) + " format: a real number is required, not " +
                          std::string(type_name(value)), 0);
  }
  parse_spec(spec);  // validated before it reaches snprintf
  char buffer[kMaxWidth + 512];
  const std::string c_spec = "%" + spec;
  if (conversion == 'd' || conversion == 'i' || conversion == 'x' || conversion == 'X' || conversion == 'o') {
    const auto n = static_cast<long long>(value.is_float() ? static_cast<int64_t>(value.as_double()) : value.as_int());
    std::snprintf(buffer, sizeof buffer, (c_spec + "ll" + (conversion == 'i' ? 'd' : conversion)).c_str(), n);
  } else {
    std::snprintf(buffer, sizeof buffer, (c_spec + conversion).c_str(), value.as_double());
  }
  return buffer;
}

// %s and %r: the precision truncates, the width pads.
std::string pad(std::string text, const std::string& spec_text) {
  const Spec spec = parse_spec(spec_text);
  if (spec.precision && text.size() > *spec.precision) text.resize(*spec.precision);
  if (text.size() >= spec.width) return text;
  const std::string fill(spec.width - text.size(), ' ');
  return spec.left ? text + fill : fill + text;
}

}  // namespace

std::string percent_format(std::string_view format, const Value& args) {
  const ValueList single = {args};
  const ValueList& values = args.is_tuple() ? args.as_list() : single;
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    size_t end = i + 1;
    while (end < format.size() && std::string_view("-+ #0123456789.").find(format[end]) != std::string_view::npos) ++end;
    if (end == format.size()) throw RenderError("incomplete format", 0);
    const std::string spec(format.substr(i + 1, end - i - 1));
    const char conversion = format[end];
    i = end;
    if (conversion == '%') {
      out += '%';
      continue;
    }
    if (next >= values.size()) throw RenderError("not enough arguments for format string", 0);
    const Value& value = values[next++];
    switch (conversion) {
      case 's': out += pad(python_str(value), spec); break;
      case 'r': out += pad(python_repr(value), spec); break;
      case 'c': out += pad(value.is_string() ? value.as_string() : std::string(1, static_cast<char>(value.as_int())), spec); break;
      case 'd': case 'i': case 'x': case 'X': case 'o': case 'f': case 'F': case 'e': case 'E': case 'g': case 'G':
        out += format_number(conversion, spec, value);
        break;
      default:
        throw RenderError("unsupported format character '" + std::string(1, conversion) + "'", 0);
    }
  }
  if (next < values.size()) throw RenderError("not all arguments converted during string formatting", 0);
  return out;
}

}  // namespace strata::jinja
