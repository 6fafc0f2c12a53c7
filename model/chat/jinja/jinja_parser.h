// Builds the statement tree from tokens, following Jinja2's grammar and operator
// precedence. Filters and tests are resolved here, so a template that uses one this
// engine lacks fails when the model loads, not on the first request.
#pragma once

#include <string_view>
#include <vector>

#include "model/chat/jinja/jinja_ast.h"

namespace strata::jinja {

// The template's top-level statements. Throws ParseError naming the construct and line.
std::vector<Stmt> parse_template(std::string_view source);

}  // namespace strata::jinja
