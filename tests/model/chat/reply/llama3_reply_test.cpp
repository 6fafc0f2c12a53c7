// Llama 3.1 / 3.2 / 3.3: JSON calls as the whole reply, and <|python_tag|> calls of
// built-in tools. Replies follow Meta's Llama 3.1 prompt-format documentation.
#include <gtest/gtest.h>

#include "model/chat/reply/parsed_reply.h"
#include "reply_split_check.h"

namespace strata {
namespace {

const ReplyFormat kLlama3{.tool_calls = ToolCallSyntax::kLlama3};
const ReplyParserOptions kWithTools{.tools_offered = true};

constexpr const char* kConditionsCall =
    R"({"name": "get_current_conditions", "parameters": {"location": "San Francisco, CA", "unit": "Fahrenheit"}})";
constexpr const char* kConditionsArguments = R"({"location": "San Francisco, CA", "unit": "Fahrenheit"})";

TEST(Llama3ReplyTest, ContentOnly) {
  expect_reply(kLlama3, kWithTools, "The current temperature in Menlo Park is 68 degrees.",
               {.content = "The current temperature in Menlo Park is 68 degrees."});
}

TEST(Llama3ReplyTest, JsonCallAsTheWholeReply) {
  expect_reply(kLlama3, kWithTools, std::string("\n\n") + kConditionsCall,
               {.tool_calls = {{"get_current_conditions", kConditionsArguments}}});
}

TEST(Llama3ReplyTest, SeveralCallsSeparatedBySemicolons) {
  expect_reply(kLlama3, kWithTools,
               std::string(kConditionsCall) +
                   R"(; {"type": "function", "name": "get_time", "arguments": {"timezone": "America/Los_Angeles"}})",
               {.tool_calls = {{"get_current_conditions", kConditionsArguments},
                               {"get_time", R"({"timezone": "America/Los_Angeles"})"}}});
}

TEST(Llama3ReplyTest, CallThenProse) {
  expect_reply(kLlama3, kWithTools, std::string(kConditionsCall) + "\n\nThis fetches the conditions.",
               {.content = "This fetches the conditions.",
                .tool_calls = {{"get_current_conditions", kConditionsArguments}}});
}

TEST(Llama3ReplyTest, BuiltinToolCalls) {
  expect_reply(kLlama3, kWithTools,
               "<|python_tag|>brave_search.call(query=\"current weather in Menlo Park, California\")",
               {.tool_calls = {{"brave_search",
                                R"({"query": "current weather in Menlo Park, California"})"}}});
  expect_reply(kLlama3, kWithTools,
               "<|python_tag|>wolfram_alpha.call(query='solve x^3 - 4x^2 + 6x - 24 = 0', "
               "precise=True, digits=4)",
               {.tool_calls = {{"wolfram_alpha",
                                R"({"query": "solve x^3 - 4x^2 + 6x - 24 = 0", "precise": true, "digits": 4})"}}});
}

TEST(Llama3ReplyTest, ProseThenBuiltinCall) {
  expect_reply(kLlama3, kWithTools,
               "Let me search for that.\n\n<|python_tag|>brave_search.call(query=\"Menlo Park weather\")",
               {.content = "Let me search for that.",
                .tool_calls = {{"brave_search", R"({"query": "Menlo Park weather"})"}}});
}

TEST(Llama3ReplyTest, CodeInterpreter) {
  expect_reply(kLlama3, kWithTools,
               "<|python_tag|>import math\nprint(math.factorial(10))\n",
               {.tool_calls = {{"code_interpreter",
                                R"json({"code": "import math\nprint(math.factorial(10))"})json"}}});
}

TEST(Llama3ReplyTest, JsonAfterPythonTag) {
  expect_reply(kLlama3, kWithTools,
               R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}})",
               {.tool_calls = {{"get_weather", R"({"city": "Paris"})"}}});
}

TEST(Llama3ReplyTest, JsonThatIsNoCallIsContent) {
  expect_reply(kLlama3, kWithTools, R"({"name": "Bob", "age": 30})",
               {.content = R"({"name": "Bob", "age": 30})"}, {});
  expect_reply(kLlama3, kWithTools, R"({"answer": 42})", {.content = R"({"answer": 42})"}, {});
}

TEST(Llama3ReplyTest, JsonInTheMiddleOfProseIsContent) {
  expect_reply(kLlama3, kWithTools, std::string("Here it is: ") + kConditionsCall,
               {.content = std::string("Here it is: ") + kConditionsCall}, {});
}

TEST(Llama3ReplyTest, WithoutToolsJsonIsContent) {
  expect_reply(kLlama3, {.tools_offered = false}, kConditionsCall, {.content = kConditionsCall},
               {});
}

}  // namespace
}  // namespace strata
