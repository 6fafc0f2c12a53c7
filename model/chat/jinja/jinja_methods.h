// The methods a template may call on values (`content.startswith('<think>')`,
// `message.get('content')`, `d.items()`), under Jinja2's immutable sandbox: methods that
// would change a list or dict (append, pop, update, ...) raise its SecurityError.
#pragma once

#include <optional>
#include <string_view>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// `object.name` as a callable bound to `object`, or nullopt where `object` has no such
// method. Throws RenderError ("access to attribute 'append' of 'list' object is unsafe.")
// for a mutating method.
std::optional<Value> bound_method(const Value& object, std::string_view name);

}  // namespace strata::jinja
