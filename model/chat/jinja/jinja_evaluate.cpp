// Renderer: evaluating expressions (statements are in jinja_render.cpp).
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_globals.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_render.h"

namespace strata::jinja {

Value Renderer::evaluate(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kConstant: return expr.constant;
    case ExprKind::kName: return lookup(expr.name);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict: return evaluate_collection(expr);
    case ExprKind::kAttribute: return get_attribute(evaluate(*expr.operands[0]), expr.name);
    case ExprKind::kSubscript: return evaluate_subscript(expr);
    case ExprKind::kSlice: throw RenderError("a slice is only valid inside [ ]", expr.line);
    case ExprKind::kCall: return evaluate_call(expr);
    case ExprKind::kFilter: return expr.filter(evaluate(*expr.operands[0]), evaluate_arguments(expr, 1));
    case ExprKind::kTest: return Value(expr.test(evaluate(*expr.operands[0]), evaluate_arguments(expr, 1)));
    case ExprKind::kNot: return Value(!truthy(evaluate(*expr.operands[0])));
    case ExprKind::kNegate: return negate(evaluate(*expr.operands[0]));
    case ExprKind::kPositive: {
      Value value = evaluate(*expr.operands[0]);
      if (value.is_undefined()) raise_undefined(value);
      if (!value.is_number()) throw RenderError("bad operand type for unary +: '" + std::string(type_name(value)) + "'", 0);
      return value.is_bool() ? Value(value.as_int()) : value;
    }
    case ExprKind::kBinary:
      return binary_operation(expr.binary_op, evaluate(*expr.operands[0]), evaluate(*expr.operands[1]));
    case ExprKind::kConcat: {
      std::string text = python_str(evaluate(*expr.operands[0]));
      append_python_str(text, evaluate(*expr.operands[1]));
      return Value(std::move(text));
    }
    case ExprKind::kCompare: return evaluate_compare(expr);
    case ExprKind::kAnd: {  // Python's `and`/`or` yield an operand, not a bool
      Value left = evaluate(*expr.operands[0]);
      return truthy(left) ? evaluate(*expr.operands[1]) : left;
    }
    case ExprKind::kOr: {
      Value left = evaluate(*expr.operands[0]);
      return truthy(left) ? left : evaluate(*expr.operands[1]);
    }
    case ExprKind::kConditional: return evaluate_conditional(expr);
  }
  return Value();
}

Value Renderer::lookup(std::string_view name) const {
  for (const Frame* frame = frame_; frame != nullptr; frame = frame->parent) {
    for (const auto& [key, value] : frame->variables) {
      if (key == name) return value;
    }
  }
  if (const Value* value = variables_.find(name)) return *value;
  if (std::optional<Value> global = global_function(name, now_)) return *std::move(global);
  return Value::undefined("'" + std::string(name) + "' is undefined");
}

CallArgs Renderer::evaluate_arguments(const Expr& expr, size_t first_operand) {
  CallArgs args;
  args.positional.reserve(expr.operands.size() - first_operand);
  for (size_t i = first_operand; i < expr.operands.size(); ++i) args.positional.push_back(evaluate(*expr.operands[i]));
  for (const auto& [name, value] : expr.keywords) args.keyword.emplace_back(name, evaluate(*value));
  return args;
}

Value Renderer::evaluate_call(const Expr& expr) {
  const Value callee = evaluate(*expr.operands[0]);
  if (callee.is_undefined()) raise_undefined(callee);
  if (!callee.is_function()) throw RenderError("'" + std::string(type_name(callee)) + "' object is not callable", 0);
  return callee.as_function()(evaluate_arguments(expr, 1));
}

Value Renderer::evaluate_subscript(const Expr& expr) {
  const Value object = evaluate(*expr.operands[0]);
  const Expr& index = *expr.operands[1];
  if (index.kind != ExprKind::kSlice) return get_item(object, evaluate(index));
  auto bound = [&](size_t i) { return index.operands[i] ? evaluate(*index.operands[i]) : Value::none(); };
  return get_slice(object, bound(0), bound(1), bound(2));
}

// Chained as in Python: a < b < c is a < b and b < c, each operand evaluated once.
Value Renderer::evaluate_compare(const Expr& expr) {
  Value left = evaluate(*expr.operands[0]);
  for (size_t i = 0; i < expr.compare_ops.size(); ++i) {
    Value right = evaluate(*expr.operands[i + 1]);
    if (!compare(expr.compare_ops[i], left, right)) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Renderer::evaluate_conditional(const Expr& expr) {
  if (truthy(evaluate(*expr.operands[0]))) return evaluate(*expr.operands[1]);
  if (expr.operands[2]) return evaluate(*expr.operands[2]);
  return Value::undefined("the inline if-expression on line " + std::to_string(expr.line) +
                          " evaluated to false and no else section was defined.");
}

Value Renderer::evaluate_collection(const Expr& expr) {
  if (expr.kind != ExprKind::kDict) {
    ValueList items;
    items.reserve(expr.operands.size());
    for (const ExprPtr& item : expr.operands) items.push_back(evaluate(*item));
    return expr.kind == ExprKind::kList ? Value::list(std::move(items)) : Value::tuple(std::move(items));
  }
  std::vector<std::pair<Value, Value>> items;
  items.reserve(expr.operands.size() / 2);
  for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
    Value key = evaluate(*expr.operands[i]);
    items.emplace_back(std::move(key), evaluate(*expr.operands[i + 1]));
  }
  return Value::dict_with_keys(std::move(items));
}

}  // namespace strata::jinja
