// Mistral: [TOOL_CALLS] followed by a JSON array (v3 tokenizer: Mistral 7B v0.3, Nemo) or
// by name[ARGS]{...} (Mistral Small 3.2, Magistral). Replies follow Mistral's docs.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kMistral{.tool_calls = ToolCallSyntax::kMistral};
const ReplyParserOptions kWithTools{.tools_offered = true};

constexpr const char* kParisArguments = R"({"location": "Paris, France", "format": "celsius"})";

TEST(MistralReplyTest, ContentOnly) {
  expect_reply(kMistral, kWithTools, " It is 18 degrees and sunny in Paris.",
               {.content = "It is 18 degrees and sunny in Paris."});
}

TEST(MistralReplyTest, V3Array) {
  expect_reply(kMistral, kWithTools,
               R"([TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"location": "Paris, France", "format": "celsius"}}])",
               {.tool_calls = {{"get_current_weather", kParisArguments}}});
}

TEST(MistralReplyTest, V3ArrayOfParallelCalls) {
  expect_reply(
      kMistral, kWithTools,
      R"([TOOL_CALLS][{"name": "get_current_weather", "arguments": {"location": "Paris, France", "format": "celsius"}}, {"name": "get_current_weather", "arguments": {"location": "Lyon, France", "format": "celsius"}, "id": "a1b2c3d4e"}])",
      {.tool_calls = {{"get_current_weather", kParisArguments},
                      {"get_current_weather",
                       R"({"location": "Lyon, France", "format": "celsius"})"}}});
}

TEST(MistralReplyTest, NameArgsLayout) {
  expect_reply(kMistral, kWithTools,
               R"([TOOL_CALLS]get_current_weather[ARGS]{"location": "Paris, France", "format": "celsius"})",
               {.tool_calls = {{"get_current_weather", kParisArguments}}});
}

TEST(MistralReplyTest, NameArgsParallelCallsWithCallIds) {
  expect_reply(kMistral, kWithTools,
               R"([TOOL_CALLS]get_current_weather[ARGS]{"location": "Paris, France", "format": "celsius"})"
               R"([TOOL_CALLS]get_time[CALL_ID]x7k2m9p4q[ARGS]{"timezone": "Europe/Paris"})",
               {.tool_calls = {{"get_current_weather", kParisArguments},
                               {"get_time", R"({"timezone": "Europe/Paris"})"}}});
}

TEST(MistralReplyTest, ProseThenCallThenProse) {
  expect_reply(kMistral, kWithTools,
               "I will look that up.[TOOL_CALLS]get_current_weather[ARGS]"
               R"({"location": "Paris, France", "format": "celsius"})"
               " One moment.",
               {.content = "I will look that up.One moment.",
                .tool_calls = {{"get_current_weather", kParisArguments}}});
}

TEST(MistralReplyTest, MalformedMarkupIsContentInFull) {
  expect_reply(kMistral, kWithTools, "[TOOL_CALLS] I cannot call tools for that.",
               {.content = "[TOOL_CALLS] I cannot call tools for that."}, {});
  expect_reply(kMistral, kWithTools, "[TOOL_CALLS][get_current_weather]",
               {.content = "[TOOL_CALLS][get_current_weather]"}, {});
}

}  // namespace
}  // namespace strata
