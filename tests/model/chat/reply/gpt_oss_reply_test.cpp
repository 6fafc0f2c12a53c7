// gpt-oss (harmony): analysis channel = reasoning, final channel = answer, commentary to a
// recipient = tool call. Replies follow OpenAI's harmony format guide; generation starts
// after the prompt's <|start|>assistant.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kGptOss{.tool_calls = ToolCallSyntax::kGptOss,
                          .reasoning = ReasoningSyntax::kGptOssChannels};
const ReplyParserOptions kWithTools{.tools_offered = true};

constexpr const char* kAnalysis =
    "<|channel|>analysis<|message|>User asks: \"What is the weather in Tokyo?\" "
    "We need to use get_weather tool.<|end|>";
constexpr const char* kAnalysisText =
    "User asks: \"What is the weather in Tokyo?\" We need to use get_weather tool.";

TEST(GptOssReplyTest, ReasoningThenAnswer) {
  expect_reply(kGptOss, kWithTools,
               "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic. "
               "Provide answer.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4."
               "<|return|>",
               {.content = "2 + 2 = 4.",
                .reasoning = "User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer."});
}

TEST(GptOssReplyTest, FinalChannelOnly) {
  expect_reply(kGptOss, kWithTools, "<|channel|>final<|message|>Paris.<|return|>",
               {.content = "Paris."});
}

TEST(GptOssReplyTest, AnswerWithoutReturnToken) {
  expect_reply(kGptOss, kWithTools,
               "<|channel|>analysis<|message|>Greeting.<|end|><|start|>assistant"
               "<|channel|>final<|message|>Hello! How can I help you today?",
               {.content = "Hello! How can I help you today?", .reasoning = "Greeting."});
}

TEST(GptOssReplyTest, ReasoningThenCall) {
  expect_reply(kGptOss, kWithTools,
               std::string(kAnalysis) +
                   "<|start|>assistant<|channel|>commentary to=functions.get_weather "
                   "<|constrain|>json<|message|>{\"location\":\"Tokyo\"}<|call|>",
               {.reasoning = kAnalysisText,
                .tool_calls = {{"get_weather", R"({"location":"Tokyo"})"}}});
}

TEST(GptOssReplyTest, RecipientBeforeChannel) {
  expect_reply(kGptOss, kWithTools,
               std::string(kAnalysis) +
                   "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
                   "<|message|>{\"location\": \"Tokyo\", \"unit\": \"celsius\"}<|call|>",
               {.reasoning = kAnalysisText,
                .tool_calls = {{"get_weather", R"({"location": "Tokyo", "unit": "celsius"})"}}});
}

TEST(GptOssReplyTest, PreambleThenTwoCalls) {
  expect_reply(
      kGptOss, kWithTools,
      std::string(kAnalysis) +
          "<|start|>assistant<|channel|>commentary<|message|>Checking the weather in both "
          "cities now.<|end|>"
          "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
          "<|message|>{\"location\":\"Tokyo\"}<|call|>"
          "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
          "<|message|>{\"location\":\"Osaka\"}<|call|>",
      {.content = "Checking the weather in both cities now.",
       .reasoning = kAnalysisText,
       .tool_calls = {{"get_weather", R"({"location":"Tokyo"})"},
                      {"get_weather", R"({"location":"Osaka"})"}}});
}

TEST(GptOssReplyTest, CallBodyThatIsNoJsonIsContent) {
  expect_reply(kGptOss, kWithTools,
               "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
               "Tokyo please<|call|>",
               {.content = "Tokyo please"});
}

TEST(GptOssReplyTest, WithoutToolsAMessageToARecipientIsContent) {
  expect_reply(kGptOss, {.tools_offered = false},
               std::string(kAnalysis) +
                   "<|start|>assistant<|channel|>commentary to=functions.get_weather "
                   "<|constrain|>json<|message|>{\"location\":\"Tokyo\"}<|call|>",
               {.content = R"({"location":"Tokyo"})", .reasoning = kAnalysisText},
               {});
}

TEST(GptOssReplyTest, TextWithoutAnyHeaderIsTheAnswer) {
  expect_reply(kGptOss, kWithTools, "Hello there.", {.content = "Hello there."});
}

}  // namespace
}  // namespace strata
