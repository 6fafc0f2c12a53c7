// Jinja2 3.1's filters that chat templates use, plus transformers' tojson. Text filters
// live in jinja_filters.cpp, filters over sequences in jinja_sequence_filters.cpp.
#pragma once

#include <string_view>

#include "model/chat/jinja/jinja_ast.h"

namespace strata::jinja {

// The filter called `name`, or nullptr where this engine lacks it.
FilterFunction find_filter(std::string_view name);

}  // namespace strata::jinja
