#include "model/chat/jinja/jinja_str_format.h"

#include <charconv>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {
namespace {

bool is_all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

class Formatter {
 public:
  explicit Formatter(const CallArgs& args) : args_(args) {}

  // The value a field name such as "", "0", "name", "name.attr" or "name[0]" picks.
  Value field_value(std::string_view field) {
    const size_t end = field.find_first_of(".[");
    const std::string_view head = field.substr(0, end);
    Value value = head_value(head);
    size_t i = end;
    while (i != std::string_view::npos && i < field.size()) {
      if (field[i] == '.') {
        const size_t next = field.find_first_of(".[", i + 1);
        value = get_attribute(value, field.substr(i + 1, next == std::string_view::npos ? std::string_view::npos : next - i - 1));
        i = next;
      } else {
        const size_t close = field.find(']', i);
        if (close == std::string_view::npos) throw RenderError("Missing ']' in format string", 0);
        const std::string_view key = field.substr(i + 1, close - i - 1);
        if (is_all_digits(key)) {
          int64_t index = 0;
          std::from_chars(key.data(), key.data() + key.size(), index);
          value = get_item(value, Value(index));
        } else {
          value = get_item(value, Value(key));
        }
        i = close + 1;
      }
      if (value.is_undefined()) raise_undefined(value);
    }
    return value;
  }

 private:
  Value head_value(std::string_view head) {
    if (head.empty()) {
      if (manual_) throw RenderError("cannot switch from manual field specification to automatic field numbering", 0);
      automatic_ = true;
      return positional(next_++);
    }
    if (is_all_digits(head)) {
      if (automatic_) throw RenderError("cannot switch from automatic field numbering to manual field specification", 0);
      manual_ = true;
      size_t index = 0;
      std::from_chars(head.data(), head.data() + head.size(), index);
      return positional(index);
    }
    for (const auto& [name, value] : args_.keyword) {
      if (name == head) return value;
    }
    throw RenderError("KeyError: '" + std::string(head) + "'", 0);
  }

  const Value& positional(size_t index) {
    if (index >= args_.positional.size()) {
      throw RenderError("Replacement index " + std::to_string(index) + " out of range for positional args tuple", 0);
    }
    return args_.positional[index];
  }

  const CallArgs& args_;
  size_t next_ = 0;
  bool automatic_ = false;
  bool manual_ = false;
};

}  // namespace

std::string str_format(std::string_view format, const CallArgs& args) {
  Formatter formatter(args);
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if ((c == '{' || c == '}') && i + 1 < format.size() && format[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}') throw RenderError("Single '}' encountered in format string", 0);
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = format.find('}', i);
    if (close == std::string_view::npos) throw RenderError("Single '{' encountered in format string", 0);
    std::string_view field = format.substr(i + 1, close - i - 1);
    if (field.find(':') != std::string_view::npos) {
      throw RenderError("unsupported format spec in '{" + std::string(field) + "}'", 0);
    }
    bool repr = false;
    if (field.ends_with("!r") || field.ends_with("!s")) {
      repr = field.back() == 'r';
      field.remove_suffix(2);
    }
    const Value value = formatter.field_value(field);
    out += repr ? python_repr(value) : python_str(value);
    i = close;
  }
  return out;
}

}  // namespace strata::jinja
