#include "model/chat/jinja/jinja_objects.h"

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {

std::optional<Value> Namespace::attribute(std::string_view name) const {
  for (const auto& [key, value] : attributes_) {
    if (key == name) return value;
  }
  return std::nullopt;
}

bool Namespace::set_attribute(std::string_view name, Value value) {
  for (auto& [key, existing] : attributes_) {
    if (key == name) {
      existing = std::move(value);
      return true;
    }
  }
  attributes_.emplace_back(std::string(name), std::move(value));
  return true;
}

std::string Namespace::repr() const { return "<Namespace " + python_repr(Value::dict(attributes_)) + ">"; }

std::optional<Value> LoopState::attribute(std::string_view name) const {
  const auto n = static_cast<int64_t>(items_->size());
  const auto i = static_cast<int64_t>(index0_);
  if (name == "index") return Value(i + 1);
  if (name == "index0") return Value(i);
  if (name == "revindex") return Value(n - i);
  if (name == "revindex0") return Value(n - i - 1);
  if (name == "first") return Value(i == 0);
  if (name == "last") return Value(i == n - 1);
  if (name == "length") return Value(n);
  if (name == "depth") return Value(int64_t{1});
  if (name == "depth0") return Value(int64_t{0});
  if (name == "previtem") {
    return i > 0 ? (*items_)[index0_ - 1] : Value::undefined("there is no previous item");
  }
  if (name == "nextitem") {
    return i + 1 < n ? (*items_)[index0_ + 1] : Value::undefined("there is no next item");
  }
  if (name == "cycle") {
    const size_t index0 = index0_;
    return Value::function("cycle", [index0](const CallArgs& args) {
      if (args.positional.empty()) throw RenderError("no items for cycling given", 0);
      return args.positional[index0 % args.positional.size()];
    });
  }
  return std::nullopt;
}

std::string LoopState::repr() const { return "<LoopContext " + std::to_string(index0_ + 1) + "/" + std::to_string(items_->size()) + ">"; }

}  // namespace strata::jinja
