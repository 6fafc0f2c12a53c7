#include "model/chat/jinja/jinja_python_format.h"

#include <utf8proc.h>

#include <charconv>
#include <cmath>
#include <cstdio>

#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

// Python's str.isprintable() for one code point: false for controls, format characters,
// separators other than the ASCII space, surrogates, private use and unassigned.
bool is_printable(char32_t cp) {
  if (cp == ' ') return true;
  if (cp > 0x10FFFF) return false;  // a raw invalid byte
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: return false;
    default: return true;
  }
}

void append_escaped_code_point(std::string& out, char32_t cp) {
  char buffer[16];
  if (cp > 0x10FFFF) cp -= 0x110000;  // a raw byte prints as \xNN, as Python's surrogateescape would
  if (cp < 0x100) std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(cp));
  else if (cp < 0x10000) std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(cp));
  else std::snprintf(buffer, sizeof buffer, "\\U%08x", static_cast<unsigned>(cp));
  out += buffer;
}

void append_repr(std::string& out, const Value& value);

void append_items(std::string& out, const ValueList& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    append_repr(out, items[i]);
  }
}

void append_repr(std::string& out, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kString: out += python_string_repr(value.as_string()); return;
    case Value::Kind::kUndefined: out += "Undefined"; return;
    case Value::Kind::kList:
      out += '[';
      append_items(out, value.as_list());
      out += ']';
      return;
    case Value::Kind::kTuple:
      out += '(';
      append_items(out, value.as_list());
      if (value.as_list().size() == 1) out += ',';
      out += ')';
      return;
    case Value::Kind::kDict: {
      out += '{';
      for (size_t i = 0; i < value.as_dict().size(); ++i) {
        if (i > 0) out += ", ";
        append_repr(out, value.dict_key(i));
        out += ": ";
        append_repr(out, value.as_dict()[i].second);
      }
      out += '}';
      return;
    }
    default: append_python_str(out, value);
  }
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // Shortest round-trip digits, as d.ddde±x.
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view text(buffer, static_cast<size_t>(result.ptr - buffer));
  const bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  const size_t e_pos = text.find('e');
  int exponent = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+'), text.data() + text.size(), exponent);
  std::string digits;
  for (char c : text.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (digits.size() <= static_cast<size_t>(exponent) + 1) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." + digits.substr(static_cast<size_t>(exponent) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_text[16];
  std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exp_text;
}

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t cp : decode_utf8(text)) {
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (is_printable(cp)) {
      append_utf8(out, cp);
    } else {
      append_escaped_code_point(out, cp);
    }
  }
  out += quote;
  return out;
}

void append_python_str(std::string& out, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += value.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(value.as_int()); return;
    case Value::Kind::kFloat: out += python_float_repr(value.as_double()); return;
    case Value::Kind::kString: out += value.as_string(); return;
    case Value::Kind::kFunction: out += "<function " + value.function_name() + ">"; return;
    case Value::Kind::kObject: out += value.as_object().repr(); return;
    default: append_repr(out, value);
  }
}

std::string python_str(const Value& value) {
  std::string out;
  append_python_str(out, value);
  return out;
}

std::string python_repr(const Value& value) {
  std::string out;
  append_repr(out, value);
  return out;
}

}  // namespace strata::jinja
