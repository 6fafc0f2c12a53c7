// Values printed as Python prints them, which is what a template's output holds:
// {{ x }} is str(x), and lists and dicts print their items with repr().
#pragma once

#include <string>
#include <string_view>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// str(x): strings as they are, None as "None", True as "True", 1.0 as "1.0",
// [1, 'a'] as "[1, 'a']", Undefined as "".
std::string python_str(const Value& value);
void append_python_str(std::string& out, const Value& value);

// repr(x): strings quoted and escaped ('it\'s' becomes "it's").
std::string python_repr(const Value& value);

// repr(float): the shortest text that reads back as the same double, e.g. "0.1",
// "1e+16", "1.5e-05", "inf", "nan".
std::string python_float_repr(double value);

// repr(str).
std::string python_string_repr(std::string_view text);

}  // namespace strata::jinja
