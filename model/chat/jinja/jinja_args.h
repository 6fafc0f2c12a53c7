// Binds a call's positional and keyword arguments to a builtin's named parameters, as
// Python does, so filters and methods accept both `x|round(2)` and `x|round(precision=2)`.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

class BoundArgs {
 public:
  // Throws RenderError naming `function` for too many arguments or an unknown keyword.
  BoundArgs(std::string_view function, const CallArgs& args, std::initializer_list<std::string_view> params);

  // Parameter `i`, or nullptr where the caller left it out.
  const Value* get(size_t i) const { return values_[i]; }
  Value get_or(size_t i, Value fallback) const { return values_[i] ? *values_[i] : std::move(fallback); }
  bool has(size_t i) const { return values_[i] != nullptr; }

 private:
  std::vector<const Value*> values_;
};

// An integer argument; throws RenderError naming `what` for anything else.
int64_t require_int(const Value& value, std::string_view what);
// A string argument.
const std::string& require_string(const Value& value, std::string_view what);

}  // namespace strata::jinja
