#include "service/anthropic/messages_request.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::anthropic {
namespace {

using openai::ApiError;
using openai::ChatCompletionRequest;
using openai::Json;
using openai::ToolChoiceMode;

Json body_with(Json extra = Json::object()) {
  Json body = {{"model", "claude-test"},
               {"max_tokens", 64},
               {"messages", Json::array({{{"role", "user"}, {"content", "Hi"}}})}};
  body.update(extra);
  return body;
}

ChatCompletionRequest parse_ok(const Json& body,
                               MessagesEndpoint endpoint = MessagesEndpoint::kCreate) {
  auto result = parse_messages_request(body, endpoint);
  if (auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << body.dump() << ": " << error->message;
    return {};
  }
  return std::get<ChatCompletionRequest>(result);
}

ApiError parse_error(const Json& body, MessagesEndpoint endpoint = MessagesEndpoint::kCreate) {
  auto result = parse_messages_request(body, endpoint);
  if (!std::holds_alternative<ApiError>(result)) {
    ADD_FAILURE() << body.dump() << " was accepted";
    return {};
  }
  return std::get<ApiError>(result);
}

TEST(MessagesRequestTest, SamplingFieldsAndModel) {
  ChatCompletionRequest r = parse_ok(body_with({{"temperature", 0.25},
                                                {"top_p", 0.5},
                                                {"top_k", 7},
                                                {"stop_sequences", {"END", "\n\nHuman:"}},
                                                {"metadata", {{"user_id", "u"}}}}));
  EXPECT_EQ(r.options.model, "claude-test");
  EXPECT_EQ(r.options.max_tokens, 64);
  EXPECT_FLOAT_EQ(r.options.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(r.options.sampling.top_p, 0.5f);
  EXPECT_EQ(r.options.sampling.top_k, 7);
  EXPECT_EQ(r.options.stop, (std::vector<std::string>{"END", "\n\nHuman:"}));
  EXPECT_FALSE(r.options.stream);
  EXPECT_FALSE(r.options.include_usage);
  EXPECT_EQ(r.messages, Json::parse(R"([{"role": "user", "content": "Hi"}])"));
  EXPECT_FALSE(r.tools.offered());
}

TEST(MessagesRequestTest, StreamAlwaysIncludesUsage) {
  ChatCompletionRequest streamed = parse_ok(body_with({{"stream", true}}));
  EXPECT_TRUE(streamed.options.stream);
  EXPECT_TRUE(streamed.options.include_usage) << "message_delta carries the usage";
  ChatCompletionRequest whole = parse_ok(body_with({{"stream", false}}));
  EXPECT_FALSE(whole.options.stream);
  EXPECT_FALSE(whole.options.include_usage);
}

TEST(MessagesRequestTest, SystemAsStringOrTextBlocks) {
  EXPECT_EQ(parse_ok(body_with({{"system", "Be brief."}})).messages[0],
            Json::parse(R"({"role": "system", "content": "Be brief."})"));
  ChatCompletionRequest blocks = parse_ok(body_with(
      {{"system", Json::parse(R"([{"type": "text", "text": "One."},
                                  {"type": "text", "text": "Two.", "cache_control":
                                   {"type": "ephemeral"}}])")}}));
  ASSERT_EQ(blocks.messages.size(), 2u);
  EXPECT_EQ(blocks.messages[0], Json::parse(R"({"role": "system", "content": "One.\nTwo."})"));
  EXPECT_EQ(blocks.messages[1]["role"], "user");
}

TEST(MessagesRequestTest, EveryBlockType) {
  ChatCompletionRequest r = parse_ok(body_with({{"messages", Json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris"},
                                 {"type": "text", "text": "and Rome?"}]},
    {"role": "assistant", "content": [
      {"type": "thinking", "thinking": "Two cities.", "signature": "sig"},
      {"type": "redacted_thinking", "data": "opaque"},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris",
                                                                         "days": 2}},
      {"type": "tool_use", "id": "toolu_2", "name": "clock"}]},
    {"role": "user", "content": [
      {"type": "text", "text": "Thanks."},
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "20 C"},
      {"type": "tool_result", "tool_use_id": "toolu_2",
       "content": [{"type": "text", "text": "12:00"}, {"type": "text", "text": "UTC"}]},
      {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": true}]},
    {"role": "assistant", "content": "Paris: 20 C."}
  ])")}}));
  EXPECT_EQ(r.messages, Json::parse(R"([
    {"role": "user", "content": "Weather in Paris\nand Rome?"},
    {"role": "assistant", "content": "Checking.", "tool_calls": [
       {"id": "toolu_1", "type": "function",
        "function": {"name": "weather", "arguments": {"city": "Paris", "days": 2}}},
       {"id": "toolu_2", "type": "function", "function": {"name": "clock", "arguments": {}}}],
     "reasoning_content": "Two cities."},
    {"role": "tool", "content": "20 C", "tool_call_id": "toolu_1"},
    {"role": "tool", "content": "12:00\nUTC", "tool_call_id": "toolu_2"},
    {"role": "tool", "content": "", "tool_call_id": "toolu_3"},
    {"role": "user", "content": "Thanks."},
    {"role": "assistant", "content": "Paris: 20 C."}
  ])")) << r.messages.dump(1);
}

TEST(MessagesRequestTest, ToolResultsOnlyMakeNoUserMessage) {
  ChatCompletionRequest r = parse_ok(body_with({{"messages", Json::parse(R"([
    {"role": "user", "content": "Time?"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "clock",
                                       "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "noon"}]}
  ])")}}));
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1]["content"], "");
  EXPECT_EQ(r.messages[2]["role"], "tool");
}

TEST(MessagesRequestTest, ToolsBecomeFunctionTools) {
  ChatCompletionRequest r = parse_ok(body_with({{"tools", Json::parse(R"([
    {"name": "weather", "description": "The forecast",
     "input_schema": {"type": "object", "properties": {"zip": {"type": "string"},
                                                       "city": {"type": "string"}}}},
    {"type": "custom", "name": "clock", "input_schema": {"type": "object"}}
  ])")}}));
  EXPECT_EQ(r.tools.tools, Json::parse(R"([
    {"type": "function", "function": {"name": "weather", "description": "The forecast",
     "parameters": {"type": "object", "properties": {"zip": {"type": "string"},
                                                     "city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "clock", "parameters": {"type": "object"}}}
  ])"));
  EXPECT_EQ(r.tools.choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(r.tools.parallel_calls);
  EXPECT_TRUE(r.tools.offered());
}

TEST(MessagesRequestTest, ToolChoiceAndParallelCalls) {
  const Json tools = Json::parse(R"([{"name": "weather", "input_schema": {"type": "object"}}])");
  auto body_with_choice = [&](const Json& choice) {
    return body_with({{"tools", tools}, {"tool_choice", choice}});
  };
  EXPECT_EQ(parse_ok(body_with_choice({{"type", "auto"}})).tools.choice.mode,
            ToolChoiceMode::kAuto);
  openai::ChatTools none = parse_ok(body_with_choice({{"type", "none"}})).tools;
  EXPECT_EQ(none.choice.mode, ToolChoiceMode::kNone);
  EXPECT_FALSE(none.offered());
  EXPECT_TRUE(parse_ok(body_with_choice({{"type", "auto"}})).tools.parallel_calls);
  EXPECT_FALSE(parse_ok(body_with_choice({{"type", "auto"}, {"disable_parallel_tool_use", true}}))
                   .tools.parallel_calls);
  EXPECT_TRUE(parse_ok(body_with_choice({{"type", "none"}, {"disable_parallel_tool_use", false}}))
                  .tools.parallel_calls);
  // any and tool force a call, as the chat request's required and named function do: not
  // kept without constrained decoding, so refused.
  for (const Json& forced :
       {Json({{"type", "any"}}), Json({{"type", "tool"}, {"name", "weather"}})}) {
    ApiError error = parse_error(body_with_choice(forced));
    EXPECT_EQ(error.status, 400) << forced;
    EXPECT_EQ(error.param, "tool_choice") << forced;
  }
}

TEST(MessagesRequestTest, ThinkingBecomesEnableThinking) {
  EXPECT_EQ(parse_ok(body_with({{"thinking", {{"type", "enabled"}, {"budget_tokens", 1024}}}}))
                .template_kwargs,
            Json({{"enable_thinking", true}}));
  EXPECT_EQ(parse_ok(body_with({{"thinking", {{"type", "disabled"}}}})).template_kwargs,
            Json({{"enable_thinking", false}}));
  EXPECT_EQ(parse_ok(body_with()).template_kwargs, Json::object());
}

TEST(MessagesRequestTest, MaxTokensRequiredExceptForCountTokens) {
  Json body = body_with();
  body.erase("max_tokens");
  ApiError error = parse_error(body);
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.param, "max_tokens");
  EXPECT_EQ(error.message, "max_tokens is required");
  ChatCompletionRequest counted = parse_ok(body, MessagesEndpoint::kCountTokens);
  EXPECT_FALSE(counted.options.max_tokens.has_value());
  EXPECT_EQ(counted.messages.size(), 1u);
}

struct BadBody {
  const char* name;
  const char* patch;  // merged into a valid body
  const char* param;
  const char* message;  // "" to skip the check
};

class MessagesRequestErrorTest : public testing::TestWithParam<BadBody> {};

TEST_P(MessagesRequestErrorTest, Is400NamingTheField) {
  Json body = body_with();
  body.merge_patch(Json::parse(GetParam().patch));
  ApiError error = parse_error(body);
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.param, GetParam().param);
  if (*GetParam().message != '\0') {
    EXPECT_EQ(error.message, GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, MessagesRequestErrorTest,
    testing::Values(
        BadBody{"messages_missing", R"({"messages": null})", "messages", "messages is required"},
        BadBody{"messages_empty", R"({"messages": []})", "messages",
                "messages must be a non-empty array"},
        BadBody{"message_string", R"({"messages": ["hi"]})", "messages.[0]",
                "messages.[0] must be an object"},
        BadBody{"role_missing", R"({"messages": [{"content": "a"}]})", "messages.[0].role",
                "messages.[0].role is required"},
        BadBody{"role_system", R"({"messages": [{"role": "system", "content": "a"}]})",
                "messages.[0].role", "Invalid role 'system': expected 'user' or 'assistant'"},
        BadBody{"role_tool", R"({"messages": [{"role": "user", "content": "a"},
                                              {"role": "tool", "content": "b"}]})",
                "messages.[1].role", "Invalid role 'tool': expected 'user' or 'assistant'"},
        BadBody{"content_missing", R"({"messages": [{"role": "user"}]})", "messages.[0].content",
                "messages.[0].content is required"},
        BadBody{"content_number", R"({"messages": [{"role": "assistant", "content": 5}]})",
                "messages.[0].content", "messages.[0].content must be a string or an array"},
        BadBody{"image_block",
                R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": "AAAA"}}]}]})",
                "messages.[0].content.[1].type",
                "Content blocks of type 'image' are not supported here"},
        BadBody{"document_block",
                R"({"messages": [{"role": "user", "content": [{"type": "document"}]}]})",
                "messages.[0].content.[0].type",
                "Content blocks of type 'document' are not supported here"},
        BadBody{"image_in_tool_result",
                R"({"messages": [{"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": "t", "content": [{"type": "image"}]}]}]})",
                "messages.[0].content.[0].content.[0].type", ""},
        BadBody{"tool_use_from_user",
                R"({"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t",
                    "name": "f", "input": {}}]}]})",
                "messages.[0].content.[0].type", ""},
        BadBody{"tool_result_from_assistant",
                R"({"messages": [{"role": "assistant", "content": [{"type": "tool_result",
                    "tool_use_id": "t"}]}]})",
                "messages.[0].content.[0].type", ""},
        BadBody{"block_without_type", R"({"messages": [{"role": "user", "content": [{}]}]})",
                "messages.[0].content.[0].type", "messages.[0].content.[0].type is required"},
        BadBody{"block_string", R"({"messages": [{"role": "user", "content": ["a"]}]})",
                "messages.[0].content.[0]", "messages.[0].content.[0] must be an object"},
        BadBody{"text_without_text",
                R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
                "messages.[0].content.[0].text", "messages.[0].content.[0].text is required"},
        BadBody{"tool_result_without_id",
                R"({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]})",
                "messages.[0].content.[0].tool_use_id", ""},
        BadBody{"tool_use_without_name",
                R"({"messages": [{"role": "assistant", "content": [{"type": "tool_use",
                    "id": "t"}]}]})",
                "messages.[0].content.[0].name", ""},
        BadBody{"tool_use_input_string",
                R"({"messages": [{"role": "assistant", "content": [{"type": "tool_use",
                    "id": "t", "name": "f", "input": "{}"}]}]})",
                "messages.[0].content.[0].input",
                "messages.[0].content.[0].input must be an object"},
        BadBody{"thinking_without_text",
                R"({"messages": [{"role": "assistant", "content": [{"type": "thinking"}]}]})",
                "messages.[0].content.[0].thinking", ""},
        BadBody{"system_number", R"({"system": 3})", "system", ""},
        BadBody{"system_image", R"({"system": [{"type": "image"}]})", "system.[0].type",
                "Content blocks of type 'image' are not supported here"},
        BadBody{"server_tool",
                R"({"tools": [{"type": "web_search_20250305", "name": "web_search"}]})",
                "tools.[0].type", ""},
        BadBody{"bash_tool", R"({"tools": [{"type": "bash_20250124", "name": "bash"}]})",
                "tools.[0].type",
                "Tools of type 'bash_20250124' are not supported: give client tools with a name "
                "and an input_schema"},
        BadBody{"tools_object", R"({"tools": {}})", "tools", "tools must be an array"},
        BadBody{"tool_without_schema", R"({"tools": [{"name": "f"}]})", "tools.[0].input_schema",
                "tools.[0].input_schema is required (a JSON schema object)"},
        BadBody{"tool_without_name", R"({"tools": [{"input_schema": {"type": "object"}}]})",
                "tools.[0].name", "tools.[0].name is required"},
        BadBody{"tool_choice_string", R"({"tool_choice": "auto"})", "tool_choice",
                "tool_choice must be an object"},
        BadBody{"tool_choice_type", R"({"tool_choice": {"type": "function"}})",
                "tool_choice.type",
                "Invalid tool_choice type 'function': expected 'auto', 'any', 'tool' or 'none'"},
        BadBody{"tool_choice_tool_without_name", R"({"tool_choice": {"type": "tool"}})",
                "tool_choice.name", "tool_choice.name is required"},
        BadBody{"tool_choice_any_without_tools", R"({"tool_choice": {"type": "any"}})",
                "tool_choice", ""},
        BadBody{"disable_parallel_string",
                R"({"tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"}})",
                "tool_choice.disable_parallel_tool_use", ""},
        BadBody{"thinking_string", R"({"thinking": "on"})", "thinking",
                "thinking must be an object"},
        BadBody{"thinking_type", R"({"thinking": {"type": "auto"}})", "thinking.type",
                "Invalid thinking type 'auto': expected 'enabled' or 'disabled'"},
        BadBody{"max_tokens_string", R"({"max_tokens": "64"})", "max_tokens", ""},
        BadBody{"temperature_string", R"({"temperature": "hot"})", "temperature", ""}),
    [](const testing::TestParamInfo<BadBody>& info) { return std::string(info.param.name); });

// Refused by the chat request's checks after translation.
TEST(MessagesRequestTest, ChecksOfTheChatRequestApply) {
  EXPECT_EQ(parse_error(body_with({{"stop_sequences", 3}})).status, 400);
  EXPECT_EQ(parse_error(body_with({{"stop_sequences", {""}}})).status, 400);
  EXPECT_EQ(parse_error(body_with({{"tools", Json::parse(R"([
                {"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}])")}}))
                .status,
            400)
      << "two tools of one name";
  EXPECT_EQ(parse_error(body_with({{"tools", Json::parse(R"([{"name": "f",
                                                               "input_schema": {}}])")},
                                   {"tool_choice", {{"type", "tool"}, {"name", "g"}}}}))
                .status,
            400)
      << "a tool_choice naming no tool";
}

TEST(MessagesRequestTest, NonObjectBodyIs400) {
  ApiError error = parse_error(Json::array());
  EXPECT_EQ(error.status, 400);
  EXPECT_FALSE(error.param.has_value());
}

}  // namespace
}  // namespace strata::anthropic
