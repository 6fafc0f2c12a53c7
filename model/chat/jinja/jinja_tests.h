// Jinja2 3.1's tests (`x is defined`, `n is divisibleby 3`, `a is eq b`), each a pure
// function of its arguments.
#pragma once

#include <string_view>

#include "model/chat/jinja/jinja_ast.h"

namespace strata::jinja {

// The test called `name`, or nullptr where Jinja2 has none or this engine lacks it.
TestFunction find_test(std::string_view name);

}  // namespace strata::jinja
