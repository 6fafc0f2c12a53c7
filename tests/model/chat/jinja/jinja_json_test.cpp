#include "model/chat/jinja/jinja_json.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

Value sample() {
  return Value::dict({{"z", Value::list({Value(int64_t{1}), Value(2.0), Value::dict({})})},
                      {"b", Value::list({})},
                      {"t", Value::none()},
                      {"f", Value(false)}});
}

TEST(JinjaJsonTest, WritesPythonJsonDumpsDefaults) {
  EXPECT_EQ(to_json(sample(), {}), R"({"z": [1, 2.0, {}], "b": [], "t": null, "f": false})");
}

TEST(JinjaJsonTest, EscapesStringsAsPythonWithoutAsciiEscaping) {
  const Value text("é\u2028\x1f\"\\/\n\t\b\f\x7f😀");
  EXPECT_EQ(to_json(text, {}), "\"é\u2028\\u001f\\\"\\\\/\\n\\t\\b\\f\x7f😀\"");
  JsonOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(to_json(text, ascii), R"("\u00e9\u2028\u001f\"\\/\n\t\b\f\u007f\ud83d\ude00")");
}

TEST(JinjaJsonTest, IndentsWithCommaItemSeparator) {
  JsonOptions options;
  options.indent = "  ";
  EXPECT_EQ(to_json(sample(), options),
            "{\n  \"z\": [\n    1,\n    2.0,\n    {}\n  ],\n  \"b\": [],\n  \"t\": null,\n  \"f\": false\n}");
}

TEST(JinjaJsonTest, HonoursSeparatorsAndSortKeys) {
  JsonOptions options;
  options.item_separator = ",";
  options.key_separator = ":";
  options.sort_keys = true;
  EXPECT_EQ(to_json(sample(), options), R"({"b":[],"f":false,"t":null,"z":[1,2.0,{}]})");
}

TEST(JinjaJsonTest, WritesSpecialFloatsAsPython) {
  EXPECT_EQ(to_json(Value(1e20), {}), "1e+20");
  EXPECT_EQ(to_json(Value(0.1), {}), "0.1");
  EXPECT_EQ(to_json(Value(std::numeric_limits<double>::infinity()), {}), "Infinity");
}

TEST(JinjaJsonTest, RefusesValuesJsonCannotHold) {
  try {
    to_json(Value::list({Value()}), {});
    FAIL() << "no error";
  } catch (const RenderError& error) {
    EXPECT_STREQ(error.what(), "Object of type Undefined is not JSON serializable");
  }
}

}  // namespace
}  // namespace strata::jinja
