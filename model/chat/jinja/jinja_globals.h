// The global functions a chat template may call: Jinja2's range(), dict(), namespace()
// and transformers' raise_exception() and strftime_now().
#pragma once

#include <optional>
#include <string_view>

#include "model/chat/jinja/jinja_template.h"
#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// The global called `name`, or nullopt. strftime_now formats `now`.
std::optional<Value> global_function(std::string_view name, const RenderTime& now);

}  // namespace strata::jinja
