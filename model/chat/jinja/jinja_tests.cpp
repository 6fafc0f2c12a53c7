#include "model/chat/jinja/jinja_tests.h"

#include <array>
#include <cmath>
#include <utility>

#include "model/chat/jinja/jinja_args.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_operators.h"
#include "model/chat/jinja/jinja_text.h"

namespace strata::jinja {
namespace {

const Value& only_argument(std::string_view test, const CallArgs& args) {
  BoundArgs bound(test, args, {"other"});
  if (!bound.has(0)) throw RenderError(std::string(test) + "() missing 1 required positional argument", 0);
  return *bound.get(0);
}

bool test_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool test_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool test_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool test_boolean(const Value& v, const CallArgs&) { return v.is_bool(); }
bool test_true(const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }
bool test_false(const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool test_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool test_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool test_integer(const Value& v, const CallArgs&) { return v.is_int(); }
bool test_float(const Value& v, const CallArgs&) { return v.is_float(); }
bool test_mapping(const Value& v, const CallArgs&) { return v.is_dict(); }
bool test_sequence(const Value& v, const CallArgs&) { return v.is_sequence() || v.is_string() || v.is_dict(); }
bool test_iterable(const Value& v, const CallArgs&) {
  return v.is_sequence() || v.is_string() || v.is_dict() || v.is_undefined();
}
bool test_callable(const Value& v, const CallArgs&) { return v.is_function(); }
bool test_lower(const Value& v, const CallArgs&) { return v.is_string() && text_lower(v.as_string()) == v.as_string(); }
bool test_upper(const Value& v, const CallArgs&) { return v.is_string() && text_upper(v.as_string()) == v.as_string(); }
bool test_escaped(const Value&, const CallArgs&) { return false; }

int64_t integer_value(const Value& v, std::string_view test) {
  if (v.is_undefined()) raise_undefined(v);
  if (!v.is_integral()) throw RenderError(std::string(test) + " test needs an integer", 0);
  return v.as_int();
}

bool test_even(const Value& v, const CallArgs&) { return integer_value(v, "even") % 2 == 0; }
bool test_odd(const Value& v, const CallArgs&) { return integer_value(v, "odd") % 2 != 0; }
bool test_divisibleby(const Value& v, const CallArgs& args) {
  const Value& divisor = only_argument("divisibleby", args);
  if (v.is_undefined()) raise_undefined(v);
  return truthy(binary_operation(BinaryOp::kModulo, v, divisor)) == false;
}
bool test_sameas(const Value& v, const CallArgs& args) {
  const Value& other = only_argument("sameas", args);
  if (v.kind() != other.kind()) return false;
  // Python's `is`: None, True and False are singletons; small ints are cached.
  if (v.is_none() || v.is_bool() || v.is_int()) return equal(v, other);
  return false;
}
bool test_in(const Value& v, const CallArgs& args) { return contains(only_argument("in", args), v); }

template <CompareOp op>
bool test_compare(const Value& v, const CallArgs& args) {
  return compare(op, v, only_argument("compare", args));
}

constexpr std::array<std::pair<std::string_view, TestFunction>, 37> kTests = {{
    {"defined", test_defined}, {"undefined", test_undefined}, {"none", test_none},
    {"boolean", test_boolean}, {"true", test_true}, {"false", test_false},
    {"string", test_string}, {"number", test_number}, {"integer", test_integer},
    {"float", test_float}, {"mapping", test_mapping}, {"sequence", test_sequence},
    {"iterable", test_iterable}, {"callable", test_callable}, {"lower", test_lower},
    {"upper", test_upper}, {"escaped", test_escaped}, {"even", test_even}, {"odd", test_odd},
    {"divisibleby", test_divisibleby}, {"sameas", test_sameas}, {"in", test_in},
    {"eq", test_compare<CompareOp::kEqual>}, {"equalto", test_compare<CompareOp::kEqual>},
    {"==", test_compare<CompareOp::kEqual>}, {"ne", test_compare<CompareOp::kNotEqual>},
    {"!=", test_compare<CompareOp::kNotEqual>}, {"lt", test_compare<CompareOp::kLess>},
    {"lessthan", test_compare<CompareOp::kLess>}, {"<", test_compare<CompareOp::kLess>},
    {"le", test_compare<CompareOp::kLessEqual>}, {"<=", test_compare<CompareOp::kLessEqual>},
    {"gt", test_compare<CompareOp::kGreater>}, {"greaterthan", test_compare<CompareOp::kGreater>},
    {">", test_compare<CompareOp::kGreater>}, {"ge", test_compare<CompareOp::kGreaterEqual>},
    {">=", test_compare<CompareOp::kGreaterEqual>},
}};

}  // namespace

TestFunction find_test(std::string_view name) {
  for (const auto& [test_name, function] : kTests) {
    if (test_name == name) return function;
  }
  return nullptr;
}

}  // namespace strata::jinja
