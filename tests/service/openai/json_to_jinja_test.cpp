#include "service/openai/json_to_jinja.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "model/chat/jinja/jinja_template.h"
#include "service/openai/chat_messages.h"
#include "service/openai/chat_tools.h"

namespace strata::openai {
namespace {

std::string render(std::string_view source, const jinja::Value& variables) {
  const jinja::Template chat_template(source);
  return chat_template.render(variables, jinja::RenderTime{});
}

TEST(JsonToJinjaTest, Scalars) {
  EXPECT_TRUE(json_to_jinja(Json()).is_none());
  ASSERT_TRUE(json_to_jinja(Json(true)).is_bool());
  EXPECT_TRUE(json_to_jinja(Json(true)).as_bool());
  const jinja::Value negative = json_to_jinja(Json(-5));
  ASSERT_TRUE(negative.is_int());
  EXPECT_EQ(negative.as_int(), -5);
  const jinja::Value unsigned_small = json_to_jinja(Json(uint64_t{7}));
  ASSERT_TRUE(unsigned_small.is_int());
  EXPECT_EQ(unsigned_small.as_int(), 7);
  // Beyond int64: the nearest float.
  const jinja::Value huge = json_to_jinja(Json(std::numeric_limits<uint64_t>::max()));
  ASSERT_TRUE(huge.is_float());
  EXPECT_DOUBLE_EQ(huge.as_double(), 18446744073709551615.0);
  const jinja::Value real = json_to_jinja(Json(2.5));
  ASSERT_TRUE(real.is_float());
  EXPECT_DOUBLE_EQ(real.as_double(), 2.5);
  // 2.0 stays a float, as Python's json.loads("2.0") is.
  EXPECT_TRUE(json_to_jinja(Json::parse("2.0")).is_float());
  EXPECT_TRUE(json_to_jinja(Json::parse("2")).is_int());
  const jinja::Value text = json_to_jinja(Json("héllo"));
  ASSERT_TRUE(text.is_string());
  EXPECT_EQ(text.as_string(), "héllo");
}

TEST(JsonToJinjaTest, ListsAndDictsInOrder) {
  const jinja::Value value =
      json_to_jinja(Json::parse(R"({"zeta": [1, "two", null], "alpha": {"b": 1, "a": 2}})"));
  ASSERT_TRUE(value.is_dict());
  const jinja::ValueDict& entries = value.as_dict();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].first, "zeta");
  EXPECT_EQ(entries[1].first, "alpha");
  ASSERT_TRUE(entries[0].second.is_list());
  ASSERT_EQ(entries[0].second.as_list().size(), 3u);
  EXPECT_EQ(entries[0].second.as_list()[1].as_string(), "two");
  EXPECT_TRUE(entries[0].second.as_list()[2].is_none());
  ASSERT_TRUE(entries[1].second.is_dict());
  EXPECT_EQ(entries[1].second.as_dict()[0].first, "b");
  EXPECT_EQ(entries[1].second.as_dict()[1].first, "a");
  EXPECT_TRUE(json_to_jinja(Json::array()).is_list());
  EXPECT_TRUE(json_to_jinja(Json::object()).is_dict());
}

TEST(JsonToJinjaTest, TemplatesSeeTheValuesAsPythonWould) {
  const jinja::Value variables = jinja::Value::dict(
      {{"x", json_to_jinja(Json::parse(R"({"n": 3, "f": 1.5, "t": true, "none": null,
                                           "s": "q\"uote", "l": [1, 2]})"))}});
  EXPECT_EQ(render("{{ x.n + 1 }} {{ x.f * 2 }} {{ x.t }} {{ x.none }} {{ x.s }} {{ x.l | length }}"
                   " {{ x.none is none }} {{ x.n is integer }}",
                   variables),
            "4 3.0 True None q\"uote 2 True True");
}

// A tool's schema reaches the template in the client's key order, through the request
// readers and tojson, as transformers renders it from Python's dicts.
TEST(JsonToJinjaTest, ToolSchemasRoundTripInOrderThroughTojson) {
  const Json body = Json::parse(R"({"tools": [{"type": "function", "function": {
      "name": "weather", "parameters": {"type": "object",
        "properties": {"zip": {"type": "string"}, "city": {"type": "string"},
                       "days": {"type": "integer", "minimum": 1}},
        "required": ["zip", "city"]}}}]})");
  const ChatTools tools = read_chat_tools(body);
  const std::string rendered =
      render("{{ tools | tojson }}", jinja::Value::dict({{"tools", json_to_jinja(tools.tools)}}));
  EXPECT_EQ(rendered,
            R"([{"type": "function", "function": {"name": "weather", "parameters": )"
            R"({"type": "object", "properties": {"zip": {"type": "string"}, )"
            R"("city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}, )"
            R"("required": ["zip", "city"]}}}])");
}

TEST(JsonToJinjaTest, DecodedArgumentsRenderInOrderThroughTojson) {
  const Json messages = Json::parse(R"([{"role": "assistant", "tool_calls": [
      {"function": {"name": "f", "arguments": "{\"zeta\": 1, \"alpha\": [true, null]}"}}]}])");
  const std::string rendered = render(
      "{% for m in messages %}{% for c in m.tool_calls %}{{ c.function.arguments | tojson }}"
      "{% endfor %}{% endfor %}",
      jinja::Value::dict({{"messages", json_to_jinja(read_chat_messages(&messages))}}));
  EXPECT_EQ(rendered, R"({"zeta": 1, "alpha": [true, null]})");
}

}  // namespace
}  // namespace strata::openai
