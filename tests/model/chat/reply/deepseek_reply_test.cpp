// DeepSeek V3 / R1 and V3.1: fullwidth-bar markers (U+FF5C, U+2581), so every split
// also falls inside multi-byte characters. Replies follow the models' templates.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kDeepSeekR1{.tool_calls = ToolCallSyntax::kDeepSeekV3,
                              .reasoning = ReasoningSyntax::kThinkTags,
                              .generation_prompt_opens_think = true};
const ReplyFormat kDeepSeekV31{.tool_calls = ToolCallSyntax::kDeepSeekV31,
                               .reasoning = ReasoningSyntax::kThinkTags};
const ReplyParserOptions kWithTools{.tools_offered = true};
const ReplyParserOptions kWithToolsThinking{.tools_offered = true, .starts_in_reasoning = true};

#define CALLS_BEGIN "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>"
#define CALLS_END "<\uFF5Ctool\u2581calls\u2581end\uFF5C>"
#define CALL_BEGIN "<\uFF5Ctool\u2581call\u2581begin\uFF5C>"
#define CALL_END "<\uFF5Ctool\u2581call\u2581end\uFF5C>"
#define SEP "<\uFF5Ctool\u2581sep\uFF5C>"

constexpr const char* kV3TokyoCall =
    CALL_BEGIN "function" SEP "get_weather\n```json\n{\"location\": \"Tokyo\"}\n```" CALL_END;

TEST(DeepSeekReplyTest, R1ReasoningFromThePromptThenAnswer) {
  expect_reply(kDeepSeekR1, kWithToolsThinking,
               "Okay, the user says hello in Chinese. I should greet back.\n</think>\n\n"
               "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x81\xE6\x9C\x89\xE4\xBB\x80\xE4\xB9\x88\xE5\x8F"
               "\xAF\xE4\xBB\xA5\xE5\xB8\xAE\xE4\xBD\xA0\xE7\x9A\x84\xEF\xBC\x9F",
               {.content = "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x81\xE6\x9C\x89\xE4\xBB\x80\xE4\xB9"
                           "\x88\xE5\x8F\xAF\xE4\xBB\xA5\xE5\xB8\xAE\xE4\xBD\xA0\xE7\x9A\x84\xEF"
                           "\xBC\x9F",
                .reasoning = "Okay, the user says hello in Chinese. I should greet back."});
}

TEST(DeepSeekReplyTest, R1ReasoningThenCall) {
  expect_reply(kDeepSeekR1, kWithToolsThinking,
               std::string("The user wants the weather in Tokyo. I will call get_weather.\n"
                           "</think>\n\n" CALLS_BEGIN) + kV3TokyoCall + CALLS_END,
               {.reasoning = "The user wants the weather in Tokyo. I will call get_weather.",
                .tool_calls = {{"get_weather", R"({"location": "Tokyo"})"}}});
}

TEST(DeepSeekReplyTest, V3ParallelCalls) {
  expect_reply(kDeepSeekR1, kWithTools,
               std::string(CALLS_BEGIN) + kV3TokyoCall +
                   "\n" CALL_BEGIN "function" SEP "get_time\n```json\n{\"timezone\": "
                   "\"Asia/Tokyo\"}\n```" CALL_END CALLS_END,
               {.tool_calls = {{"get_weather", R"({"location": "Tokyo"})"},
                               {"get_time", R"({"timezone": "Asia/Tokyo"})"}}});
}

TEST(DeepSeekReplyTest, V31ProseThenCall) {
  expect_reply(kDeepSeekV31, kWithTools,
               "Let me check the weather." CALLS_BEGIN CALL_BEGIN "get_weather" SEP
               "{\"location\": \"Tokyo\"}" CALL_END CALLS_END,
               {.content = "Let me check the weather.",
                .tool_calls = {{"get_weather", R"({"location": "Tokyo"})"}}});
}

TEST(DeepSeekReplyTest, V31ParallelCallsThenProse) {
  expect_reply(kDeepSeekV31, kWithTools,
               CALLS_BEGIN CALL_BEGIN "get_weather" SEP "{\"location\": \"Tokyo\"}" CALL_END
               CALL_BEGIN "get_weather" SEP "{\"location\": \"Kyoto\"}" CALL_END CALLS_END
               "\nBoth lookups are running.",
               {.content = "Both lookups are running.",
                .tool_calls = {{"get_weather", R"({"location": "Tokyo"})"},
                               {"get_weather", R"({"location": "Kyoto"})"}}});
}

TEST(DeepSeekReplyTest, V31ThinkingThenAnswer) {
  expect_reply(kDeepSeekV31, kWithToolsThinking,
               "Simple question.</think>Paris is the capital of France.",
               {.content = "Paris is the capital of France.", .reasoning = "Simple question."});
}

TEST(DeepSeekReplyTest, MalformedMarkupIsContentInFull) {
  expect_reply(kDeepSeekV31, kWithTools, CALLS_BEGIN "get_weather Tokyo",
               {.content = CALLS_BEGIN "get_weather Tokyo"}, {});
  expect_reply(kDeepSeekV31, kWithTools, CALLS_BEGIN CALL_BEGIN "get_weather" SEP "Tokyo" CALL_END,
               {.content = CALLS_BEGIN CALL_BEGIN "get_weather" SEP "Tokyo" CALL_END}, {});
}

}  // namespace
}  // namespace strata
