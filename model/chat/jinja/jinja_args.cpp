#include "model/chat/jinja/jinja_args.h"

#include <string>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {

BoundArgs::BoundArgs(std::string_view function, const CallArgs& args,
                     std::initializer_list<std::string_view> params)
    : values_(params.size(), nullptr) {
  if (args.positional.size() > params.size()) {
    throw RenderError(std::string(function) + "() takes at most " + std::to_string(params.size()) +
                          " arguments (" + std::to_string(args.positional.size()) + " given)", 0);
  }
  for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
  for (const auto& [name, value] : args.keyword) {
    size_t i = 0;
    for (std::string_view param : params) {
      if (param == name) break;
      ++i;
    }
    if (i == params.size()) {
      throw RenderError(std::string(function) + "() got an unexpected keyword argument '" + name + "'", 0);
    }
    if (values_[i] != nullptr) {
      throw RenderError(std::string(function) + "() got multiple values for argument '" + name + "'", 0);
    }
    values_[i] = &value;
  }
}

int64_t require_int(const Value& value, std::string_view what) {
  if (!value.is_integral()) {
    throw RenderError(std::string(what) + " must be an integer, not '" + std::string(type_name(value)) + "'", 0);
  }
  return value.as_int();
}

const std::string& require_string(const Value& value, std::string_view what) {
  if (!value.is_string()) {
    throw RenderError(std::string(what) + " must be a string, not '" + std::string(type_name(value)) + "'", 0);
  }
  return value.as_string();
}

}  // namespace strata::jinja
