#include "model/chat/jinja/jinja_operators.h"

#include <cmath>
#include <string>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_methods.h"
#include "model/chat/jinja/jinja_percent_format.h"
#include "model/chat/jinja/jinja_python_format.h"
#include "model/chat/jinja/jinja_utf8.h"

namespace strata::jinja {
namespace {

int64_t require_integral(const Value& value) {
  if (!value.is_integral()) throw RenderError("slice indices must be integers or None", 0);
  return value.as_int();
}

std::string quoted_type(const Value& value) { return "'" + std::string(type_name(value)) + "'"; }

[[noreturn]] void unsupported_operands(std::string_view op, const Value& a, const Value& b) {
  throw RenderError("unsupported operand type(s) for " + std::string(op) + ": " + quoted_type(a) + " and " +
                        quoted_type(b), 0);
}

void check_defined(const Value& a, const Value& b) {
  if (a.is_undefined()) raise_undefined(a);
  if (b.is_undefined()) raise_undefined(b);
}

Value numeric_result(const Value& a, const Value& b, int64_t as_int, double as_float) {
  return a.is_integral() && b.is_integral() ? Value(as_int) : Value(as_float);
}

// `'ab' * n` and `[x] * n` beyond this many items are refused rather than allocated.
constexpr int64_t kMaxRepeatItems = int64_t{1} << 26;

Value repeat(const Value& sequence, int64_t count) {
  const auto n_items = static_cast<int64_t>(sequence.is_string() ? sequence.as_string().size() : sequence.as_list().size());
  if (count > 0 && n_items > 0 && count > kMaxRepeatItems / n_items) {
    throw RenderError("repeated " + std::string(type_name(sequence)) + " is too large", 0);
  }
  if (sequence.is_string()) {
    std::string out;
    for (int64_t i = 0; i < count; ++i) out += sequence.as_string();
    return Value(std::move(out));
  }
  ValueList out;
  for (int64_t i = 0; i < count; ++i) out.insert(out.end(), sequence.as_list().begin(), sequence.as_list().end());
  return sequence.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Value add(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return numeric_result(a, b, a.as_int() + b.as_int(), a.as_double() + b.as_double());
  if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
  if (a.is_sequence() && a.kind() == b.kind()) {
    ValueList out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  if (a.is_string() || a.is_list()) {
    throw RenderError("can only concatenate " + std::string(type_name(a)) + " (not \"" + std::string(type_name(b)) +
                          "\") to " + std::string(type_name(a)), 0);
  }
  unsupported_operands("+", a, b);
}

Value multiply(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return numeric_result(a, b, a.as_int() * b.as_int(), a.as_double() * b.as_double());
  if ((a.is_string() || a.is_sequence()) && b.is_integral()) return repeat(a, b.as_int());
  if (a.is_integral() && (b.is_string() || b.is_sequence())) return repeat(b, a.as_int());
  unsupported_operands("*", a, b);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Value divide(BinaryOp op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) {
    if (op == BinaryOp::kModulo && a.is_string()) return Value(percent_format(a.as_string(), b));
    unsupported_operands(op == BinaryOp::kDivide ? "/" : op == BinaryOp::kFloorDivide ? "//" : "%", a, b);
  }
  if (b.as_double() == 0) {
    throw RenderError(op == BinaryOp::kDivide ? "division by zero" : op == BinaryOp::kModulo ? "integer modulo by zero"
                                                                                             : "integer division or modulo by zero", 0);
  }
  if (op == BinaryOp::kDivide) return Value(a.as_double() / b.as_double());
  if (a.is_integral() && b.is_integral()) {
    const int64_t q = floor_div(a.as_int(), b.as_int());
    return op == BinaryOp::kFloorDivide ? Value(q) : Value(a.as_int() - q * b.as_int());
  }
  const double x = a.as_double(), y = b.as_double();
  if (op == BinaryOp::kFloorDivide) return Value(std::floor(x / y));
  double r = std::fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return Value(r);
}

Value power(const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) unsupported_operands("** or pow()", a, b);
  if (a.is_integral() && b.is_integral() && b.as_int() >= 0) {
    int64_t result = 1;
    for (int64_t i = 0; i < b.as_int(); ++i) result *= a.as_int();
    return Value(result);
  }
  return Value(std::pow(a.as_double(), b.as_double()));
}

// Python's ordering: numbers, strings (by code point, which is UTF-8 byte order) and
// sequences (item by item). Returns <0, 0, >0.
int order(std::string_view op, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.as_double(), y = b.as_double();
    if (a.is_integral() && b.is_integral()) return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return x < y ? -1 : x > y;
  }
  if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() != b.as_string();
  if (a.is_sequence() && a.kind() == b.kind()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equal(x[i], y[i])) return order(op, x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size();
  }
  check_defined(a, b);
  throw RenderError("'" + std::string(op) + "' not supported between instances of " + quoted_type(a) + " and " +
                        quoted_type(b), 0);
}

// Python's slice.indices(n): start, stop, step resolved for a sequence of length n.
struct SliceRange {
  int64_t start, stop, step;
};

SliceRange resolve_slice(int64_t n, const Value& start, const Value& stop, const Value& step_value) {
  const int64_t step = step_value.is_none() || step_value.is_undefined() ? 1 : require_integral(step_value);
  if (step == 0) throw RenderError("slice step cannot be zero", 0);
  auto clamp = [&](const Value& v, int64_t fallback) {
    if (v.is_none() || v.is_undefined()) return fallback;
    int64_t i = require_integral(v);
    if (i < 0) i += n;
    if (i < 0) return step < 0 ? int64_t{-1} : int64_t{0};
    if (i >= n) return step < 0 ? n - 1 : n;
    return i;
  };
  return {clamp(start, step < 0 ? n - 1 : 0), clamp(stop, step < 0 ? -1 : n), step};
}

}  // namespace

[[noreturn]] void raise_undefined(const Value& undefined) {
  const std::string& message = undefined.undefined_message();
  throw RenderError(message.empty() ? "value is undefined" : message, 0);
}

Value binary_operation(BinaryOp op, const Value& a, const Value& b) {
  check_defined(a, b);
  switch (op) {
    case BinaryOp::kAdd: return add(a, b);
    case BinaryOp::kSubtract:
      if (!a.is_number() || !b.is_number()) unsupported_operands("-", a, b);
      return numeric_result(a, b, a.as_int() - b.as_int(), a.as_double() - b.as_double());
    case BinaryOp::kMultiply: return multiply(a, b);
    case BinaryOp::kDivide:
    case BinaryOp::kFloorDivide:
    case BinaryOp::kModulo: return divide(op, a, b);
    case BinaryOp::kPower: return power(a, b);
  }
  return Value();
}

Value negate(const Value& operand) {
  if (operand.is_undefined()) raise_undefined(operand);
  if (operand.is_integral()) return Value(-operand.as_int());
  if (operand.is_float()) return Value(-operand.as_double());
  throw RenderError("bad operand type for unary -: " + quoted_type(operand), 0);
}

bool compare(CompareOp op, const Value& a, const Value& b) {
  switch (op) {
    case CompareOp::kEqual: return equal(a, b);
    case CompareOp::kNotEqual: return !equal(a, b);
    case CompareOp::kLess: return order("<", a, b) < 0;
    case CompareOp::kLessEqual: return order("<=", a, b) <= 0;
    case CompareOp::kGreater: return order(">", a, b) > 0;
    case CompareOp::kGreaterEqual: return order(">=", a, b) >= 0;
    case CompareOp::kIn: return contains(b, a);
    case CompareOp::kNotIn: return !contains(b, a);
  }
  return false;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        throw RenderError("'in <string>' requires string as left operand, not " + std::string(type_name(item)), 0);
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
    case Value::Kind::kTuple:
      for (const Value& v : container.as_list()) {
        if (equal(v, item)) return true;
      }
      return false;
    case Value::Kind::kDict: return container.find_key(item) != nullptr;
    default:
      throw RenderError("argument of type " + quoted_type(container) + " is not iterable", 0);
  }
}

std::string object_type_name(const Value& value) {
  if (value.is_none()) return "None";
  if (value.is_object()) return "Namespace object";
  return std::string(type_name(value)) + " object";
}

Value get_attribute(const Value& object, std::string_view name) {
  if (object.is_undefined()) raise_undefined(object);
  if (std::optional<Value> method = bound_method(object, name)) return *std::move(method);
  if (object.is_dict()) {
    if (const Value* item = object.find(name)) return *item;
  } else if (object.is_object()) {
    if (std::optional<Value> attribute = object.as_object().attribute(name)) return *std::move(attribute);
  }
  return Value::undefined("'" + object_type_name(object) + "' has no attribute '" + std::string(name) + "'");
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) raise_undefined(object);
  if (object.is_dict()) {
    if (const Value* item = object.find_key(key)) return *item;
  } else if ((object.is_sequence() || object.is_string()) && key.is_integral()) {
    const int64_t n = length(object);
    const int64_t i = key.as_int() < 0 ? key.as_int() + n : key.as_int();
    if (i >= 0 && i < n) {
      if (object.is_sequence()) return object.as_list()[static_cast<size_t>(i)];
      std::string out;
      append_utf8(out, decode_utf8(object.as_string())[static_cast<size_t>(i)]);
      return Value(std::move(out));
    }
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(object_type_name(object) + " has no element " + python_repr(key));
}

Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  if (object.is_undefined()) raise_undefined(object);
  if (!object.is_sequence() && !object.is_string()) {
    throw RenderError(quoted_type(object) + " object is not subscriptable", 0);
  }
  const SliceRange r = resolve_slice(length(object), start, stop, step);
  if (object.is_string()) {
    const std::vector<char32_t> chars = decode_utf8(object.as_string());
    std::string out;
    for (int64_t i = r.start; r.step > 0 ? i < r.stop : i > r.stop; i += r.step) append_utf8(out, chars[static_cast<size_t>(i)]);
    return Value(std::move(out));
  }
  ValueList out;
  for (int64_t i = r.start; r.step > 0 ? i < r.stop : i > r.stop; i += r.step) out.push_back(object.as_list()[static_cast<size_t>(i)]);
  return object.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList:
    case Value::Kind::kTuple: return value.as_list();
    case Value::Kind::kDict: {
      ValueList keys;
      keys.reserve(value.as_dict().size());
      for (size_t i = 0; i < value.as_dict().size(); ++i) keys.push_back(value.dict_key(i));
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      for (char32_t cp : decode_utf8(value.as_string())) {
        std::string one;
        append_utf8(one, cp);
        chars.emplace_back(std::move(one));
      }
      return chars;
    }
    default: throw RenderError(quoted_type(value) + " object is not iterable", 0);
  }
}

int64_t length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(count_code_points(value.as_string()));
    case Value::Kind::kList:
    case Value::Kind::kTuple: return static_cast<int64_t>(value.as_list().size());
    case Value::Kind::kDict: return static_cast<int64_t>(value.as_dict().size());
    default: throw RenderError("object of type " + quoted_type(value) + " has no len()", 0);
  }
}

}  // namespace strata::jinja
