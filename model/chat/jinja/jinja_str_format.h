// Python's str.format() for the fields templates use: {} {0} {name} {name.attr}
// {name[key]}, {{ and }}, and the conversions !s !r. Format specs (":>10") are not
// supported and raise RenderError naming them.
#pragma once

#include <string>
#include <string_view>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

std::string str_format(std::string_view format, const CallArgs& args);

}  // namespace strata::jinja
