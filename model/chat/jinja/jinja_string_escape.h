// String literals in a template are decoded as Python's "unicode-escape" codec does
// (Jinja2's lexer uses it): \n \t \\ \' \" \xhh \uhhhh \Uhhhhhhhh, octal \ooo, and an
// unknown escape such as \d kept as written.
#pragma once

#include <string>
#include <string_view>

namespace strata::jinja {

std::string decode_python_escapes(std::string_view literal_body);

}  // namespace strata::jinja
