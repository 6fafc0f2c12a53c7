// Hermes / Qwen2.5 / Qwen3: <tool_call> JSON </tool_call>, with Qwen3's <think> blocks.
// Replies follow the Qwen function-calling documentation.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "model/tokenizer/utf8.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kQwen3{.tool_calls = ToolCallSyntax::kHermes,
                         .reasoning = ReasoningSyntax::kThinkTags};
const ReplyParserOptions kWithTools{.tools_offered = true};

constexpr const char* kTemperatureArguments = R"({"location": "San Francisco, CA, USA"})";
constexpr const char* kTemperatureCall =
    "<tool_call>\n"
    R"({"name": "get_current_temperature", "arguments": {"location": "San Francisco, CA, USA"}})"
    "\n</tool_call>";

TEST(HermesReplyTest, ContentOnly) {
  expect_reply(kQwen3, kWithTools, "The capital of France is Paris.\n",
               {.content = "The capital of France is Paris."});
}

TEST(HermesReplyTest, ReasoningThenContent) {
  expect_reply(kQwen3, kWithTools,
               "<think>\nThe user asks for the capital of France. That is Paris.\n</think>\n\n"
               "The capital of France is Paris.",
               {.content = "The capital of France is Paris.",
                .reasoning = "The user asks for the capital of France. That is Paris."});
}

TEST(HermesReplyTest, ReasoningThenOneCall) {
  expect_reply(kQwen3, kWithTools,
               std::string("<think>\nI need the current temperature, so I call the tool.\n"
                           "</think>\n\n") + kTemperatureCall,
               {.reasoning = "I need the current temperature, so I call the tool.",
                .tool_calls = {{"get_current_temperature", kTemperatureArguments}}});
}

TEST(HermesReplyTest, ParallelCalls) {
  expect_reply(
      kQwen3, kWithTools,
      std::string(kTemperatureCall) +
          "\n<tool_call>\n"
          R"({"name": "get_temperature_date", "arguments": {"location": "San Francisco, CA, USA", "date": "2024-10-01"}})"
          "\n</tool_call>",
      {.tool_calls = {{"get_current_temperature", kTemperatureArguments},
                      {"get_temperature_date",
                       R"({"location": "San Francisco, CA, USA", "date": "2024-10-01"})"}}});
}

TEST(HermesReplyTest, ProseThenCall) {
  expect_reply(kQwen3, kWithTools,
               std::string("Let me check the temperature for you.\n\n") + kTemperatureCall,
               {.content = "Let me check the temperature for you.",
                .tool_calls = {{"get_current_temperature", kTemperatureArguments}}});
}

TEST(HermesReplyTest, CallThenProse) {
  expect_reply(kQwen3, kWithTools,
               std::string(kTemperatureCall) + "\nI asked for the temperature in degrees.",
               {.content = "I asked for the temperature in degrees.",
                .tool_calls = {{"get_current_temperature", kTemperatureArguments}}});
}

TEST(HermesReplyTest, ArgumentsBeforeNameAndWithoutClosingTag) {
  expect_reply(kQwen3, kWithTools,
               "<tool_call>\n"
               R"({"arguments": {"city": "Z\u00fcrich", "days": [1, 2]}, "name": "forecast"})",
               {.tool_calls = {{"forecast", R"({"city": "Z\u00fcrich", "days": [1, 2]})"}}});
}

TEST(HermesReplyTest, MissingClosingBraceStillMakesTheCall) {
  expect_reply(kQwen3, kWithTools,
               "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}\n"
               "</tool_call>\nDone.",
               {.content = "Done.", .tool_calls = {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST(HermesReplyTest, ArgumentsAsAStringHoldingJson) {
  expect_reply(kQwen3, kWithTools,
               "<tool_call>\n"
               R"({"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"})"
               "\n</tool_call>",
               {.tool_calls = {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST(HermesReplyTest, MalformedMarkupIsContentInFull) {
  expect_reply(kQwen3, kWithTools,
               "Sure.\n<tool_call>\nget_weather(city=Paris)\n</tool_call>",
               {.content = "Sure.\n<tool_call>\nget_weather(city=Paris)\n</tool_call>"}, {});
  // A JSON object that is not a call.
  expect_reply(kQwen3, kWithTools, "<tool_call>{\"city\": \"Paris\"}</tool_call>",
               {.content = "<tool_call>{\"city\": \"Paris\"}</tool_call>"}, {});
  // Cut off before the arguments began: no call was certain.
  expect_reply(kQwen3, kWithTools, "<tool_call>\n{\"name\": \"get_weather\"",
               {.content = "<tool_call>\n{\"name\": \"get_weather\""}, {});
}

TEST(HermesReplyTest, CallCutOffInItsArgumentsKeepsWhatWasWritten) {
  expect_reply(kQwen3, kWithTools,
               "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
               {.tool_calls = {{"get_weather", "{\"city\": \"Par"}}});
}

TEST(HermesReplyTest, WithoutToolsCallMarkupIsContentButReasoningIsSplit) {
  expect_reply(kQwen3, {.tools_offered = false},
               std::string("<think>\nA tool would help.\n</think>\n\n") + kTemperatureCall,
               {.content = kTemperatureCall, .reasoning = "A tool would help."}, {});
}

TEST(HermesReplyTest, CallDraftedInsideReasoningStaysReasoning) {
  expect_reply(kQwen3, kWithTools,
               std::string("<think>\nMaybe ") + kTemperatureCall + "\nNo, just answer.\n</think>\n\n"
                   "It is mild today.",
               {.content = "It is mild today.",
                .reasoning = std::string("Maybe ") + kTemperatureCall + "\nNo, just answer."});
}

TEST(HermesReplyTest, ReplyStartingInsideReasoning) {
  expect_reply(kQwen3, {.tools_offered = true, .starts_in_reasoning = true},
               "The user greets me in French.\n</think>\n\nBonjour ! Comment puis-je vous aider ?",
               {.content = "Bonjour ! Comment puis-je vous aider ?",
                .reasoning = "The user greets me in French."});
}

TEST(HermesReplyTest, MultiByteContentIsNeverCutInsideACharacter) {
  const std::string text = "Il fait 18 \xC2\xB0" "C \xC3\xA0 Paris \xE2\x80\x94 agr\xC3\xA9" "able. "
                           "\xF0\x9F\x8C\xA4";
  expect_reply(kQwen3, kWithTools, text, {.content = text});
  for (size_t cut = 1; cut < text.size(); ++cut) {
    const size_t cuts[] = {cut};
    for (const ReplyEvent& event : feed_in_chunks(kQwen3, kWithTools, text, cuts)) {
      EXPECT_TRUE(utf8::is_valid(event.text)) << cut;
    }
  }
}

}  // namespace
}  // namespace strata
