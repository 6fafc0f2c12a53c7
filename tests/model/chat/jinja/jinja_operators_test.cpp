#include "model/chat/jinja/jinja_operators.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_python_format.h"

namespace strata::jinja {
namespace {

Value i(int64_t n) { return Value(n); }

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const RenderError& error) {
    return error.what();
  }
  return "no error";
}

TEST(JinjaOperatorsTest, ArithmeticFollowsPython) {
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kDivide, i(7), i(2))), "3.5");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kDivide, i(4), i(2))), "2.0");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kFloorDivide, i(-7), i(2))), "-4");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kModulo, i(-7), i(3))), "2");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kModulo, Value(-7.5), i(2))), "0.5");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kPower, i(2), i(10))), "1024");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kPower, i(2), i(-1))), "0.5");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kAdd, Value(true), Value(true))), "2");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kMultiply, Value("ab"), i(3))), "ababab");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kAdd, Value::list({i(1)}), Value::list({i(2)}))), "[1, 2]");
  EXPECT_EQ(python_str(binary_operation(BinaryOp::kModulo, Value("%s!"), Value("x"))), "x!");
}

TEST(JinjaOperatorsTest, ArithmeticErrorsReadAsPython) {
  EXPECT_EQ(error_of([] { binary_operation(BinaryOp::kAdd, Value("a"), i(1)); }),
            "can only concatenate str (not \"int\") to str");
  EXPECT_EQ(error_of([] { binary_operation(BinaryOp::kAdd, i(1), Value("a")); }),
            "unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(error_of([] { binary_operation(BinaryOp::kDivide, i(1), i(0)); }), "division by zero");
  EXPECT_EQ(error_of([] { binary_operation(BinaryOp::kAdd, Value::undefined("'x' is undefined"), i(1)); }),
            "'x' is undefined");
  EXPECT_EQ(error_of([] { compare(CompareOp::kLess, i(1), Value("a")); }),
            "'<' not supported between instances of 'int' and 'str'");
}

TEST(JinjaOperatorsTest, ComparesAcrossNumberKinds) {
  EXPECT_TRUE(compare(CompareOp::kEqual, i(1), Value(1.0)));
  EXPECT_TRUE(compare(CompareOp::kEqual, Value(true), i(1)));
  EXPECT_TRUE(compare(CompareOp::kEqual, Value::list({i(1)}), Value::list({Value(1.0)})));
  EXPECT_FALSE(compare(CompareOp::kEqual, Value::list({i(1)}), Value::tuple({i(1)})));
  EXPECT_TRUE(compare(CompareOp::kEqual, Value::dict({{"a", i(1)}, {"b", i(2)}}), Value::dict({{"b", i(2)}, {"a", i(1)}})));
  EXPECT_FALSE(compare(CompareOp::kEqual, Value(), Value::none()));
  EXPECT_TRUE(compare(CompareOp::kLess, Value("a"), Value("b")));
  EXPECT_TRUE(compare(CompareOp::kLess, Value::list({i(1), i(2)}), Value::list({i(1), i(3)})));
}

TEST(JinjaOperatorsTest, ContainsFollowsPython) {
  EXPECT_TRUE(contains(Value("abc"), Value("b")));
  EXPECT_TRUE(contains(Value::list({i(1), i(2)}), Value(2.0)));
  EXPECT_TRUE(contains(Value::dict({{"a", i(1)}}), Value("a")));
  EXPECT_FALSE(contains(Value(), Value("a")));
  EXPECT_EQ(error_of([] { contains(Value("abc"), i(1)); }), "'in <string>' requires string as left operand, not int");
}

TEST(JinjaOperatorsTest, AttributesAndItemsLeaveUndefinedWithJinjaMessages) {
  const Value message = Value::dict({{"role", Value("user")}, {"items", i(5)}});
  EXPECT_EQ(python_str(get_attribute(message, "role")), "user");
  EXPECT_EQ(get_attribute(message, "content").undefined_message(), "'dict object' has no attribute 'content'");
  // `.items` is the method; ['items'] is the key.
  EXPECT_TRUE(get_attribute(message, "items").is_function());
  EXPECT_EQ(python_str(get_item(message, Value("items"))), "5");
  EXPECT_EQ(get_item(Value::list({}), i(0)).undefined_message(), "list object has no element 0");
  EXPECT_EQ(get_attribute(Value::none(), "x").undefined_message(), "'None' has no attribute 'x'");
  EXPECT_EQ(error_of([] { get_attribute(Value::undefined("'m' is undefined"), "x"); }), "'m' is undefined");
  EXPECT_EQ(error_of([] { get_attribute(Value::list({}), "append"); }),
            "access to attribute 'append' of 'list' object is unsafe.");
}

TEST(JinjaOperatorsTest, IndexesAndSlicesByCodePoint) {
  const Value list = Value::list({i(1), i(2), i(3)});
  EXPECT_EQ(python_str(get_item(list, i(-1))), "3");
  EXPECT_EQ(python_str(get_item(Value("héllo"), i(1))), "é");
  EXPECT_EQ(python_str(get_slice(Value("héllo"), i(1), i(3), Value::none())), "él");
  EXPECT_EQ(python_str(get_slice(list, Value::none(), Value::none(), i(-1))), "[3, 2, 1]");
  EXPECT_EQ(python_str(get_slice(list, i(5), Value::none(), Value::none())), "[]");
  EXPECT_EQ(python_str(get_slice(list, i(-2), Value::none(), Value::none())), "[2, 3]");
  EXPECT_EQ(length(Value("héllo")), 5);
  EXPECT_EQ(python_str(Value::list(iterate(Value::dict({{"a", i(1)}})))), "['a']");
}

}  // namespace
}  // namespace strata::jinja
