#include "service/openai/chat_completion_request.h"

#include <gtest/gtest.h>

#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

using json = nlohmann::ordered_json;

ChatCompletionRequest parse_ok(const json& body) {
  auto result = parse_chat_completion_request(body);
  if (auto* error = std::get_if<ApiError>(&result)) {
    ADD_FAILURE() << error_json(*error).dump();
    return {};
  }
  return std::get<ChatCompletionRequest>(result);
}

ApiError parse_error(const json& body) {
  auto result = parse_chat_completion_request(body);
  if (!std::holds_alternative<ApiError>(result)) {
    ADD_FAILURE() << "parsed: " << body.dump();
    return {};
  }
  return std::get<ApiError>(result);
}

json minimal() { return json{{"messages", json::array({{{"role", "user"}, {"content", "Hi"}}})}}; }

TEST(ChatCompletionRequestTest, EveryField) {
  json body = json::parse(R"({
    "model": "qwen3-0.6b",
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "developer", "content": "Answer in French."},
      {"role": "user", "content": [{"type": "text", "text": "Hello"},
                                   {"type": "text", "text": "there"}]},
      {"role": "assistant", "content": null},
      {"role": "user", "content": "Again", "name": "bob"}
    ],
    "max_tokens": 10, "max_completion_tokens": 64,
    "temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.05,
    "frequency_penalty": 0.5, "presence_penalty": -0.5, "repetition_penalty": 1.1,
    "seed": 42, "stop": ["\n\n", "END"],
    "logprobs": true, "top_logprobs": 5,
    "stream": true, "stream_options": {"include_usage": true},
    "n": 1, "ignore_eos": true, "user": "ignored", "tools": null
  })");
  ChatCompletionRequest r = parse_ok(body);
  EXPECT_EQ(r.messages, Json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "system", "content": "Answer in French."},
      {"role": "user", "content": "Hello\nthere"},
      {"role": "assistant", "content": ""},
      {"role": "user", "content": "Again", "name": "bob"}])"));
  EXPECT_TRUE(r.tools.tools.empty());
  EXPECT_FALSE(r.tools.offered());
  EXPECT_EQ(r.template_kwargs, Json::object());
  const GenerationOptions& o = r.options;
  EXPECT_EQ(o.model, "qwen3-0.6b");
  EXPECT_EQ(o.max_tokens, 64);
  EXPECT_FLOAT_EQ(o.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(o.sampling.top_p, 0.9f);
  EXPECT_EQ(o.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(o.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(o.sampling.frequency_penalty, 0.5f);
  EXPECT_FLOAT_EQ(o.sampling.presence_penalty, -0.5f);
  EXPECT_FLOAT_EQ(o.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(o.logprobs);
  EXPECT_EQ(o.sampling.n_logprobs, 5);
  EXPECT_TRUE(o.stream);
  EXPECT_TRUE(o.include_usage);
  EXPECT_TRUE(o.ignore_eos);
}

TEST(ChatCompletionRequestTest, Defaults) {
  ChatCompletionRequest r = parse_ok(minimal());
  const GenerationOptions& o = r.options;
  EXPECT_EQ(o.model, "");
  EXPECT_FALSE(o.max_tokens.has_value());
  EXPECT_FALSE(o.seed.has_value());
  EXPECT_FLOAT_EQ(o.sampling.temperature, 1.0f);
  EXPECT_TRUE(o.stop.empty());
  EXPECT_FALSE(o.logprobs);
  EXPECT_FALSE(o.stream);
  EXPECT_FALSE(o.include_usage);
}

TEST(ChatCompletionRequestTest, NullsReadAsAbsentAndStopMayBeAString) {
  json body = minimal();
  body["temperature"] = nullptr;
  body["max_tokens"] = nullptr;
  body["stop"] = "END";
  body["top_k"] = -1;
  body["max_tokens"] = 8.0;  // an integral float is an integer
  ChatCompletionRequest r = parse_ok(body);
  EXPECT_FLOAT_EQ(r.options.sampling.temperature, 1.0f);
  EXPECT_EQ(r.options.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r.options.sampling.top_k, 0);
  EXPECT_EQ(r.options.max_tokens, 8);
}

struct BadField {
  const char* name;
  const char* patch;  // merged into the minimal body
  const char* param;
  const char* message;  // "" to skip the check
};

class ChatInvalidFieldTest : public testing::TestWithParam<BadField> {};

TEST_P(ChatInvalidFieldTest, Is400NamingTheParam) {
  json body = minimal();
  body.merge_patch(json::parse(GetParam().patch));
  ApiError error = parse_error(body);
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.param, GetParam().param);
  if (*GetParam().message != '\0') {
    EXPECT_EQ(error.message, GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ChatInvalidFieldTest,
    testing::Values(
        BadField{"n2", R"({"n": 2})", "n", "n > 1 is not supported"},
        BadField{"n0", R"({"n": 0})", "n", "n must be 1, got 0"},
        BadField{"n_string", R"({"n": "1"})", "n", "n must be an integer"},
        BadField{"model_number", R"({"model": 3})", "model", "model must be a string"},
        BadField{"temperature_string", R"({"temperature": "hot"})", "temperature",
                 "temperature must be a number"},
        BadField{"temperature_negative", R"({"temperature": -1})", "temperature", ""},
        BadField{"top_p_zero", R"({"top_p": 0})", "top_p", "top_p must be in (0, 1], got 0"},
        BadField{"top_p_bool", R"({"top_p": true})", "top_p", ""},
        BadField{"top_k_float", R"({"top_k": 1.5})", "top_k", "top_k must be an integer"},
        BadField{"top_k_negative", R"({"top_k": -2})", "top_k", ""},
        BadField{"min_p_big", R"({"min_p": 2})", "min_p", ""},
        BadField{"frequency_penalty", R"({"frequency_penalty": 3})", "frequency_penalty", ""},
        BadField{"presence_penalty", R"({"presence_penalty": -2.5})", "presence_penalty", ""},
        BadField{"repetition_penalty", R"({"repetition_penalty": 0})", "repetition_penalty", ""},
        BadField{"seed_string", R"({"seed": "7"})", "seed", ""},
        BadField{"max_completion_tokens_string", R"({"max_completion_tokens": "5"})",
                 "max_completion_tokens", ""},
        BadField{"stop_number", R"({"stop": 5})", "stop", ""},
        BadField{"stop_list_number", R"({"stop": ["a", 5]})", "stop", ""},
        BadField{"stop_empty", R"({"stop": [""]})", "stop", ""},
        BadField{
            "stop_too_many",
            R"({"stop": ["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]})",
            "stop", "stop may hold at most 16 sequences, got 17"},
        BadField{"stream_string", R"({"stream": "yes"})", "stream", "stream must be a boolean"},
        BadField{"stream_options_list", R"({"stream_options": []})", "stream_options", ""},
        BadField{"include_usage_number", R"({"stream_options": {"include_usage": 1}})",
                 "stream_options.include_usage", ""},
        BadField{"logprobs_int", R"({"logprobs": 3})", "logprobs", ""},
        BadField{"top_logprobs_big", R"({"logprobs": true, "top_logprobs": 21})", "top_logprobs",
                 "top_logprobs must be in [0, 20], got 21"},
        BadField{"top_logprobs_without_logprobs", R"({"top_logprobs": 2})", "top_logprobs",
                 "top_logprobs requires logprobs to be true"},
        BadField{"messages_empty", R"({"messages": []})", "messages",
                 "messages must hold at least one message"},
        BadField{"messages_missing", R"({"messages": null})", "messages", "messages is required"},
        BadField{"messages_object", R"({"messages": {"role": "user"}})", "messages", ""},
        BadField{"message_string", R"({"messages": ["hi"]})", "messages.[0]", ""},
        BadField{"bad_role", R"({"messages": [{"role": "user", "content": "a"},
                                              {"role": "robot", "content": "b"}]})",
                 "messages.[1].role", ""},
        BadField{"function_role", R"({"messages": [{"role": "function", "content": "a"}]})",
                 "messages.[0].role", ""},
        BadField{"tool_call_name_missing",
                 R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]})",
                 "messages.[0].tool_calls.[0].function.name", ""},
        BadField{"tools_object", R"({"tools": {}})", "tools", "tools must be an array"},
        BadField{"tool_choice_unknown_function",
                 R"({"tools": [{"type": "function", "function": {"name": "a"}}],
                     "tool_choice": {"type": "function", "function": {"name": "b"}}})",
                 "tool_choice.function.name",
                 "tool_choice names the function 'b', which is not among the tools"},
        BadField{"parallel_tool_calls_string", R"({"parallel_tool_calls": "yes"})",
                 "parallel_tool_calls", ""},
        BadField{"chat_template_kwargs_list", R"({"chat_template_kwargs": [1]})",
                 "chat_template_kwargs", "chat_template_kwargs must be an object"},
        BadField{"reasoning_effort_unknown", R"({"reasoning_effort": "extreme"})",
                 "reasoning_effort",
                 "Invalid reasoning_effort 'extreme': expected 'minimal', 'low', 'medium' or "
                 "'high'"},
        BadField{"reasoning_effort_number", R"({"reasoning_effort": 2})", "reasoning_effort",
                 "reasoning_effort must be a string"},
        BadField{"role_missing", R"({"messages": [{"content": "a"}]})", "messages.[0].role",
                 "messages.[0].role is required"},
        BadField{"content_missing", R"({"messages": [{"role": "user"}]})", "messages.[0].content",
                 ""},
        BadField{"content_number", R"({"messages": [{"role": "user", "content": 1}]})",
                 "messages.[0].content", ""},
        BadField{"image_part", R"({"messages": [{"role": "user", "content": [
                     {"type": "text", "text": "a"},
                     {"type": "image_url", "image_url": {"url": "x"}}]}]})",
                 "messages.[0].content.[1].type",
                 "Unsupported content part type 'image_url': only 'text' parts are supported"},
        BadField{"part_text_number", R"({"messages": [{"role": "user", "content": [
                     {"type": "text", "text": 3}]}]})",
                 "messages.[0].content.[0].text", ""}),
    [](const testing::TestParamInfo<BadField>& info) { return std::string(info.param.name); });

TEST(ChatCompletionRequestTest, ToolConversation) {
  ChatCompletionRequest r = parse_ok(Json::parse(R"({
    "messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "20 C"}
    ],
    "tools": [{"type": "function", "function": {"name": "weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "tool_choice": "auto", "parallel_tool_calls": false
  })"));
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1]["content"], "");
  EXPECT_EQ(r.messages[1]["tool_calls"][0]["function"]["arguments"],
            Json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(r.messages[2], Json::parse(R"({"role": "tool", "content": "20 C",
                                            "tool_call_id": "call_1"})"));
  ASSERT_EQ(r.tools.tools.size(), 1u);
  EXPECT_EQ(r.tools.tools[0]["function"]["name"], "weather");
  EXPECT_EQ(r.tools.choice.mode, ToolChoiceMode::kAuto);
  EXPECT_FALSE(r.tools.parallel_calls);
  EXPECT_TRUE(r.tools.offered());
}

// What only constrained decoding could keep is refused, not silently broken.
TEST(ChatCompletionRequestTest, ForcedCallsAndJsonRepliesAreRefused) {
  json body = minimal();
  body["tools"] = json::parse(R"([{"type": "function", "function": {"name": "a"}}])");
  for (const json& choice :
       {json("required"), json::parse(R"({"type": "function", "function": {"name": "a"}})")}) {
    body["tool_choice"] = choice;
    ApiError error = parse_error(body);
    EXPECT_EQ(error.status, 400) << choice;
    EXPECT_EQ(error.param, "tool_choice") << choice;
    EXPECT_EQ(error.message,
              "tool_choice 'required' or a named function is not supported yet: a call cannot "
              "be forced. Use 'auto' (the default) or 'none'.");
  }
  body["tool_choice"] = "none";
  EXPECT_EQ(parse_ok(body).tools.choice.mode, ToolChoiceMode::kNone);

  json format = minimal();
  format["response_format"] = {{"type", "json_object"}};
  ApiError error = parse_error(format);
  EXPECT_EQ(error.param, "response_format.type");
  EXPECT_EQ(error.message.rfind("response_format 'json_object' is not supported yet", 0), 0u)
      << error.message;
  format["response_format"] = "json";
  EXPECT_EQ(parse_error(format).param, "response_format.type");
  format["response_format"] = {{"type", "text"}};
  parse_ok(format);
}

TEST(ChatCompletionRequestTest, TemplateKwargsAndReasoningEffort) {
  json body = minimal();
  body["chat_template_kwargs"] = {{"enable_thinking", false}, {"custom", {1, 2}}};
  body["reasoning_effort"] = "low";
  EXPECT_EQ(parse_ok(body).template_kwargs.dump(),
            R"({"enable_thinking":false,"custom":[1,2],"reasoning_effort":"low"})");
  // The kwargs' own reasoning_effort wins.
  body["chat_template_kwargs"] = {{"reasoning_effort", "high"}};
  EXPECT_EQ(parse_ok(body).template_kwargs, Json({{"reasoning_effort", "high"}}));
  for (const char* effort : {"minimal", "low", "medium", "high"}) {
    json only_effort = minimal();
    only_effort["reasoning_effort"] = effort;
    EXPECT_EQ(parse_ok(only_effort).template_kwargs, Json({{"reasoning_effort", effort}}));
  }
  json nulls = minimal();
  nulls["chat_template_kwargs"] = nullptr;
  nulls["reasoning_effort"] = nullptr;
  EXPECT_EQ(parse_ok(nulls).template_kwargs, Json::object());
}

TEST(ChatCompletionRequestTest, NonObjectBodyIs400) {
  ApiError error = parse_error(json::array());
  EXPECT_EQ(error.status, 400);
  EXPECT_FALSE(error.param.has_value());
}

TEST(JsonFieldsTest, ParseJsonBody) {
  EXPECT_TRUE(std::holds_alternative<json>(parse_json_body(R"({"a": 1})")));
  auto bad = parse_json_body("{\"a\": ");
  ASSERT_TRUE(std::holds_alternative<ApiError>(bad));
  EXPECT_EQ(std::get<ApiError>(bad).status, 400);
  EXPECT_TRUE(std::holds_alternative<ApiError>(parse_json_body("[1]")));
}

}  // namespace
}  // namespace strata::openai
