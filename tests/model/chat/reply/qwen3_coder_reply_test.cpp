// Qwen3-Coder: <function=f><parameter=p>value</parameter></function> inside <tool_call>,
// values typed by the offered tools' schemas. Replies follow the model card's format.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kQwen3Coder{.tool_calls = ToolCallSyntax::kQwen3Coder};

ReplyParserOptions coder_tools() {
  return {.tools_offered = true,
          .tools = {{.name = "get_weather",
                     .parameters = {{"city", ParameterType::kString},
                                    {"days", ParameterType::kInteger},
                                    {"metric", ParameterType::kBoolean},
                                    {"zip", ParameterType::kString}}},
                    {.name = "search_products",
                     .parameters = {{"query", ParameterType::kString},
                                    {"filters", ParameterType::kObject},
                                    {"max_price", ParameterType::kNumber}}},
                    {.name = "write_file",
                     .parameters = {{"path", ParameterType::kString},
                                    {"content", ParameterType::kString}}}}};
}

constexpr const char* kWeatherCall =
    "<tool_call>\n<function=get_weather>\n"
    "<parameter=city>\nSan Francisco\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n"
    "<parameter=metric>\nTrue\n</parameter>\n"
    "</function>\n</tool_call>";
constexpr const char* kWeatherArguments = R"({"city": "San Francisco", "days": 3, "metric": true})";

TEST(Qwen3CoderReplyTest, ContentOnly) {
  expect_reply(kQwen3Coder, coder_tools(), "Use a list comprehension; it reads better.",
               {.content = "Use a list comprehension; it reads better."});
}

TEST(Qwen3CoderReplyTest, ReasoningThenCall) {
  const ReplyFormat thinking{.tool_calls = ToolCallSyntax::kQwen3Coder,
                             .reasoning = ReasoningSyntax::kThinkTags};
  expect_reply(thinking, coder_tools(),
               std::string("<think>\nThe forecast needs the weather tool.\n</think>\n\n") +
                   kWeatherCall,
               {.reasoning = "The forecast needs the weather tool.",
                .tool_calls = {{"get_weather", kWeatherArguments}}});
}

TEST(Qwen3CoderReplyTest, ProseThenCallWithTypedValues) {
  expect_reply(kQwen3Coder, coder_tools(), std::string("I will check the weather.\n") + kWeatherCall,
               {.content = "I will check the weather.",
                .tool_calls = {{"get_weather", kWeatherArguments}}});
}

TEST(Qwen3CoderReplyTest, ParallelCallsThenProse) {
  expect_reply(
      kQwen3Coder, coder_tools(),
      std::string(kWeatherCall) +
          "\n<tool_call>\n<function=search_products>\n"
          "<parameter=query>\numbrella\n</parameter>\n"
          "<parameter=filters>\n{\"color\": \"black\", \"in_stock\": true}\n</parameter>\n"
          "<parameter=max_price>\n24.5\n</parameter>\n"
          "</function>\n</tool_call>\nBoth requests are on their way.",
      {.content = "Both requests are on their way.",
       .tool_calls = {{"get_weather", kWeatherArguments},
                      {"search_products",
                       R"({"query": "umbrella", "filters": {"color": "black", "in_stock": true}, "max_price": 24.5})"}}});
}

TEST(Qwen3CoderReplyTest, StringValuesStayTextEvenWhenTheyLookLikeNumbers) {
  expect_reply(kQwen3Coder, coder_tools(),
               "<tool_call>\n<function=get_weather>\n<parameter=zip>\n94103\n</parameter>\n"
               "<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>",
               {.tool_calls = {{"get_weather", R"({"zip": "94103", "days": "three"})"}}});
}

TEST(Qwen3CoderReplyTest, MultiLineCodeValue) {
  expect_reply(kQwen3Coder, coder_tools(),
               "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/add.py\n</parameter>\n"
               "<parameter=content>\ndef add(a, b):\n    return a + b\n\n</parameter>\n"
               "</function>\n</tool_call>",
               {.tool_calls = {{"write_file",
                                R"({"path": "src/add.py", "content": "def add(a, b):\n    return a + b\n"})"}}});
}

TEST(Qwen3CoderReplyTest, MissingParameterCloseTagsAndUnknownFunction) {
  // Values of a function the caller did not describe are JSON where they parse.
  expect_reply(kQwen3Coder, coder_tools(),
               "<tool_call>\n<function=lookup>\n<parameter=id>\n42\n<parameter=name>\nAda\n"
               "</function>\n</tool_call>",
               {.tool_calls = {{"lookup", R"({"id": 42, "name": "Ada"})"}}});
}

TEST(Qwen3CoderReplyTest, MalformedMarkupIsContentInFull) {
  expect_reply(kQwen3Coder, coder_tools(), "<tool_call>\nget_weather Paris\n</tool_call>",
               {.content = "<tool_call>\nget_weather Paris\n</tool_call>"}, {});
}

TEST(Qwen3CoderReplyTest, CutOffInsideAValueKeepsTheCall) {
  expect_reply(kQwen3Coder, coder_tools(),
               "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Fran",
               {.tool_calls = {{"get_weather", R"({"city": "San Fran"})"}}});
}

TEST(Qwen3CoderReplyTest, ParametersAreReportedWhenComplete) {
  ReplyParser parser(kQwen3Coder, coder_tools());
  EXPECT_TRUE(parser.feed("<tool_call>\n<function=get_we").empty());
  const std::vector<ReplyEvent> begun = parser.feed("ather>\n<parameter=city>\nPar");
  const std::vector<ReplyEvent> expected_begun = {
      {.kind = ReplyEventKind::kToolCallBegin, .text = "get_weather", .tool_index = 0},
      {.kind = ReplyEventKind::kToolCallArguments, .text = "{", .tool_index = 0}};
  EXPECT_EQ(begun, expected_begun);
  const std::vector<ReplyEvent> city = parser.feed("is\n</parameter>\n");
  const std::vector<ReplyEvent> expected_city = {
      {.kind = ReplyEventKind::kToolCallArguments, .text = "\"city\": \"Paris\"", .tool_index = 0}};
  EXPECT_EQ(city, expected_city);
}

}  // namespace
}  // namespace strata
