// The objects with attributes a render creates: namespace() (the one mutable value a
// template has, for state that must survive a loop body) and `loop` inside a for body.
#pragma once

#include <memory>
#include <string>

#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

class Namespace : public Object {
 public:
  explicit Namespace(ValueDict attributes) : attributes_(std::move(attributes)) {}
  std::optional<Value> attribute(std::string_view name) const override;
  bool set_attribute(std::string_view name, Value value) override;
  std::string repr() const override;

 private:
  ValueDict attributes_;
};

// `loop` for one for statement; the render advances it item by item.
class LoopState : public Object {
 public:
  explicit LoopState(std::shared_ptr<const ValueList> items) : items_(std::move(items)) {}
  void set_index(size_t index0) { index0_ = index0; }
  std::optional<Value> attribute(std::string_view name) const override;
  std::string repr() const override;

 private:
  std::shared_ptr<const ValueList> items_;  // what the loop visits, after its `if` filter
  size_t index0_ = 0;
};

}  // namespace strata::jinja
