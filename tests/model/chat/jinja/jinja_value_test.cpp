#include "model/chat/jinja/jinja_value.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

TEST(JinjaValueTest, TruthinessFollowsPython) {
  EXPECT_FALSE(truthy(Value()));
  EXPECT_FALSE(truthy(Value::none()));
  EXPECT_FALSE(truthy(Value(int64_t{0})));
  EXPECT_FALSE(truthy(Value(0.0)));
  EXPECT_FALSE(truthy(Value("")));
  EXPECT_FALSE(truthy(Value::list({})));
  EXPECT_FALSE(truthy(Value::dict({})));
  EXPECT_TRUE(truthy(Value(" ")));
  EXPECT_TRUE(truthy(Value::tuple({Value::none()})));
  EXPECT_TRUE(truthy(Value(-0.5)));
}

TEST(JinjaValueTest, BuildsAndReadsDicts) {
  const Value dict = Value::dict({{"role", Value("user")}, {"content", Value("hi")}});
  ASSERT_TRUE(dict.is_dict());
  EXPECT_EQ(dict.find("content")->as_string(), "hi");
  EXPECT_EQ(dict.find("missing"), nullptr);
  EXPECT_EQ(dict.dict_key(0).as_string(), "role");
}

TEST(JinjaValueTest, DictsMayHaveKeysOfOtherKinds) {
  const Value dict = Value::dict_with_keys({{Value(int64_t{512}), Value(int64_t{128})},
                                            {Value("512"), Value("text")},
                                            {Value(1.0), Value(int64_t{1})},
                                            {Value(true), Value(int64_t{2})}});
  ASSERT_EQ(dict.as_dict().size(), 3u);  // 1.0 and True are one key
  EXPECT_EQ(dict.find_key(Value(int64_t{512}))->as_int(), 128);
  EXPECT_EQ(dict.find("512")->as_string(), "text");
  EXPECT_EQ(dict.find_key(Value(int64_t{1}))->as_int(), 2);
  EXPECT_TRUE(dict.dict_key(2).is_float());
  EXPECT_THROW(Value::dict_with_keys({{Value::list({}), Value()}}), RenderError);
}

TEST(JinjaValueTest, EqualityFollowsPython) {
  EXPECT_TRUE(equal(Value(int64_t{1}), Value(1.0)));
  EXPECT_TRUE(equal(Value(true), Value(int64_t{1})));
  EXPECT_FALSE(equal(Value("1"), Value(int64_t{1})));
  EXPECT_TRUE(equal(Value(), Value::undefined("'x' is undefined")));
  EXPECT_FALSE(equal(Value(), Value::none()));
  EXPECT_TRUE(equal(Value::dict({{"a", Value(int64_t{1})}, {"b", Value::none()}}),
                    Value::dict({{"b", Value::none()}, {"a", Value(1.0)}})));
  EXPECT_EQ(type_name(Value::none()), "NoneType");
  EXPECT_EQ(type_name(Value::tuple({})), "tuple");
}

}  // namespace
}  // namespace strata::jinja
