// Python's printf-style `format % args`, which the `format` filter and the `%` operator on
// strings use: %s %r %d %i %f %x %o %e %g %c %%, with flags, width and precision.
#pragma once

#include <string>
#include <string_view>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

// `args` is a tuple of values for the fields, or a single value for one field. Throws
// RenderError for too few or too many arguments or an unsupported conversion.
std::string percent_format(std::string_view format, const Value& args);

}  // namespace strata::jinja
