// Templates that offer tools without markup of their own: the reply is a JSON call.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kGeneric{.tool_calls = ToolCallSyntax::kGenericJson};
const ReplyParserOptions kWithTools{.tools_offered = true};

TEST(GenericJsonReplyTest, ContentOnly) {
  expect_reply(kGeneric, kWithTools, "Paris is the capital of France.",
               {.content = "Paris is the capital of France."});
}

TEST(GenericJsonReplyTest, CallObject) {
  expect_reply(kGeneric, kWithTools, R"({"name": "get_weather", "arguments": {"city": "Paris"}})",
               {.tool_calls = {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST(GenericJsonReplyTest, FencedToolCallsList) {
  expect_reply(kGeneric, kWithTools,
               "```json\n{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": "
               "\"Paris\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": "
               "\"Europe/Paris\"}}]}\n```\nBoth calls are made.",
               {.content = "Both calls are made.",
                .tool_calls = {{"get_weather", R"({"city": "Paris"})"},
                               {"get_time", R"({"timezone": "Europe/Paris"})"}}});
}

TEST(GenericJsonReplyTest, ToolCallWrapper) {
  expect_reply(kGeneric, kWithTools,
               R"({"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}})",
               {.tool_calls = {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST(GenericJsonReplyTest, ProseThenJsonIsContent) {
  expect_reply(kGeneric, kWithTools,
               R"(You could call {"name": "get_weather", "arguments": {}})",
               {.content = R"(You could call {"name": "get_weather", "arguments": {}})"}, {});
}

TEST(GenericJsonReplyTest, JsonOrCodeThatIsNoCallIsContent) {
  expect_reply(kGeneric, kWithTools, R"({"response": "Hello!"})",
               {.content = R"({"response": "Hello!"})"}, {});
  expect_reply(kGeneric, kWithTools, "```python\nprint(1)\n```",
               {.content = "```python\nprint(1)\n```"}, {});
}

}  // namespace
}  // namespace strata
