#include "service/openai/chat_messages.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::openai {
namespace {

Json read_ok(const Json& messages) {
  try {
    return read_chat_messages(&messages);
  } catch (const BadRequest& bad) {
    ADD_FAILURE() << messages.dump() << ": " << bad.error.message;
    return Json();
  }
}

ApiError read_error(const Json& messages) {
  try {
    Json out = read_chat_messages(&messages);
    ADD_FAILURE() << messages.dump() << " was accepted as " << out.dump();
  } catch (const BadRequest& bad) {
    return bad.error;
  }
  return {};
}

TEST(ChatMessagesTest, EveryRoleWithDeveloperReadAsSystem) {
  Json out = read_ok(Json::parse(R"([
    {"role": "system", "content": "S"},
    {"role": "developer", "content": "D"},
    {"role": "user", "content": "U", "name": "bob"},
    {"role": "assistant", "content": "A", "reasoning_content": "R"},
    {"role": "tool", "content": "T", "tool_call_id": "call_1", "name": "weather"}
  ])"));
  EXPECT_EQ(out, Json::parse(R"([
    {"role": "system", "content": "S"},
    {"role": "system", "content": "D"},
    {"role": "user", "content": "U", "name": "bob"},
    {"role": "assistant", "content": "A", "reasoning_content": "R"},
    {"role": "tool", "content": "T", "name": "weather", "tool_call_id": "call_1"}
  ])"));
}

TEST(ChatMessagesTest, FieldsOfOtherRolesAndUnknownFieldsAreDropped) {
  Json out = read_ok(Json::parse(R"([
    {"role": "user", "content": "U", "tool_call_id": "x", "reasoning_content": "r",
     "tool_calls": [], "audio": {"id": "a"}},
    {"role": "tool", "content": "T", "reasoning_content": "r"}
  ])"));
  EXPECT_EQ(out, Json::parse(R"([{"role": "user", "content": "U"},
                                 {"role": "tool", "content": "T"}])"));
}

TEST(ChatMessagesTest, ContentPartsAreJoinedWithNewlines) {
  Json out = read_ok(Json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"},
                                 {"type": "text", "text": ""}]},
    {"role": "system", "content": []}
  ])"));
  EXPECT_EQ(out[0]["content"], "one\ntwo\n");
  EXPECT_EQ(out[1]["content"], "");
}

TEST(ChatMessagesTest, AssistantWithOnlyToolCalls) {
  Json out = read_ok(Json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "weather", "arguments": "{\"city\": \"Paris\", \"days\": 2}"}}]},
    {"role": "assistant", "tool_calls": [
      {"function": {"name": "clock"}}]}
  ])"));
  EXPECT_EQ(out[1], Json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "weather", "arguments": {"city": "Paris", "days": 2}}}]})"));
  // No id, no type, no arguments: the type defaults to function, arguments to {}.
  EXPECT_EQ(out[2], Json::parse(R"({"role": "assistant", "content": "", "tool_calls": [
      {"type": "function", "function": {"name": "clock", "arguments": {}}}]})"));
}

TEST(ChatMessagesTest, ArgumentsDecodedOnlyWhenTheyAreAJsonObject) {
  auto arguments_of = [](const Json& arguments) {
    const Json call = {{"function", {{"name", "f"}, {"arguments", arguments}}}};
    Json messages =
        Json::array({{{"role", "assistant"}, {"tool_calls", Json::array({call})}}});
    Json out = read_ok(messages);
    return out[0]["tool_calls"][0]["function"]["arguments"];
  };
  EXPECT_EQ(arguments_of(R"({"b": 1, "a": [true]})"), Json::parse(R"({"b": 1, "a": [true]})"));
  EXPECT_TRUE(arguments_of(R"({"b": 1, "a": 2})").is_object());
  // Kept as sent: not JSON, JSON that is not an object, an empty string.
  EXPECT_EQ(arguments_of("not json {"), "not json {");
  EXPECT_EQ(arguments_of("[1, 2]"), "[1, 2]");
  EXPECT_EQ(arguments_of("42"), "42");
  EXPECT_EQ(arguments_of(""), "");
  EXPECT_EQ(arguments_of(Json::parse(R"({"z": null, "y": {"x": 1}})")),
            Json::parse(R"({"z": null, "y": {"x": 1}})"));
}

TEST(ChatMessagesTest, KeyOrderIsKept) {
  Json out = read_ok(Json::parse(R"([{"role": "assistant", "content": "", "tool_calls": [
      {"function": {"name": "f", "arguments": "{\"zeta\": 1, \"alpha\": 2, \"mid\": 3}"}}]}])"));
  const Json& arguments = out[0]["tool_calls"][0]["function"]["arguments"];
  EXPECT_EQ(arguments.dump(), R"({"zeta":1,"alpha":2,"mid":3})");
}

TEST(ChatMessagesTest, MissingContentIsAnErrorBesideAssistant) {
  for (const char* role : {"system", "developer", "user", "tool"}) {
    ApiError error = read_error(Json::array({{{"role", role}}}));
    EXPECT_EQ(error.status, 400) << role;
    EXPECT_EQ(error.param, "messages.[0].content") << role;
    EXPECT_EQ(error.message, "messages.[0].content is required") << role;
  }
}

struct BadMessages {
  const char* name;
  const char* messages;
  const char* param;
  const char* message;  // "" to skip the check
};

class ChatMessagesErrorTest : public testing::TestWithParam<BadMessages> {};

TEST_P(ChatMessagesErrorTest, Is400NamingThePath) {
  ApiError error = read_error(Json::parse(GetParam().messages));
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.param, GetParam().param);
  if (*GetParam().message != '\0') {
    EXPECT_EQ(error.message, GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ChatMessagesErrorTest,
    testing::Values(
        BadMessages{"not_array", R"({"role": "user"})", "messages", "messages must be an array"},
        BadMessages{"empty", "[]", "messages", "messages must hold at least one message"},
        BadMessages{"message_number", R"([{"role": "user", "content": "a"}, 3])", "messages.[1]",
                    "messages.[1] must be an object"},
        BadMessages{"role_number", R"([{"role": 1, "content": "a"}])", "messages.[0].role",
                    "messages.[0].role must be a string"},
        BadMessages{"role_unknown", R"([{"role": "function", "content": "a"}])",
                    "messages.[0].role",
                    "Invalid role 'function': expected 'system', 'developer', 'user', "
                    "'assistant' or 'tool'"},
        BadMessages{"content_object", R"([{"role": "user", "content": {"text": "a"}}])",
                    "messages.[0].content",
                    "messages.[0].content must be a string or an array of content parts"},
        BadMessages{"part_string", R"([{"role": "user", "content": ["a"]}])",
                    "messages.[0].content.[0]", "messages.[0].content.[0] must be an object"},
        BadMessages{"part_no_type", R"([{"role": "user", "content": [{"text": "a"}]}])",
                    "messages.[0].content.[0].type",
                    "Unsupported content part type '': only 'text' parts are supported"},
        BadMessages{"part_no_text", R"([{"role": "user", "content": [{"type": "text"}]}])",
                    "messages.[0].content.[0].text", "messages.[0].content.[0].text is required"},
        BadMessages{"name_number", R"([{"role": "user", "content": "a", "name": 5}])",
                    "messages.[0].name", "messages.[0].name must be a string"},
        BadMessages{"tool_calls_object",
                    R"([{"role": "assistant", "content": "", "tool_calls": {}}])",
                    "messages.[0].tool_calls", "messages.[0].tool_calls must be an array"},
        BadMessages{"tool_call_string",
                    R"([{"role": "user", "content": "a"},
                        {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}, "g"]}])",
                    "messages.[1].tool_calls.[1]", "messages.[1].tool_calls.[1] must be an object"},
        BadMessages{"tool_call_type",
                    R"([{"role": "assistant", "tool_calls": [{"type": "custom",
                        "function": {"name": "f"}}]}])",
                    "messages.[0].tool_calls.[0].type",
                    "Unsupported tool call type 'custom': expected 'function'"},
        BadMessages{"tool_call_id_number",
                    R"([{"role": "assistant", "tool_calls": [{"id": 7,
                        "function": {"name": "f"}}]}])",
                    "messages.[0].tool_calls.[0].id", ""},
        BadMessages{"function_missing", R"([{"role": "assistant", "tool_calls": [{"id": "c"}]}])",
                    "messages.[0].tool_calls.[0].function",
                    "messages.[0].tool_calls.[0].function is required"},
        BadMessages{"function_string",
                    R"([{"role": "assistant", "tool_calls": [{"function": "f"}]}])",
                    "messages.[0].tool_calls.[0].function",
                    "messages.[0].tool_calls.[0].function must be an object"},
        BadMessages{"function_name_missing",
                    R"([{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}])",
                    "messages.[0].tool_calls.[0].function.name",
                    "messages.[0].tool_calls.[0].function.name is required"},
        BadMessages{"function_name_empty",
                    R"([{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}])",
                    "messages.[0].tool_calls.[0].function.name", ""},
        BadMessages{"arguments_array",
                    R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f",
                        "arguments": [1]}}]}])",
                    "messages.[0].tool_calls.[0].function.arguments",
                    "messages.[0].tool_calls.[0].function.arguments must be a string or an object"},
        BadMessages{"reasoning_number",
                    R"([{"role": "assistant", "content": "", "reasoning_content": 1}])",
                    "messages.[0].reasoning_content", ""},
        BadMessages{"tool_call_id_bool",
                    R"([{"role": "tool", "content": "x", "tool_call_id": true}])",
                    "messages.[0].tool_call_id", ""}),
    [](const testing::TestParamInfo<BadMessages>& info) { return std::string(info.param.name); });

TEST(ChatMessagesTest, AbsentMessagesAreRequired) {
  try {
    read_chat_messages(nullptr);
    ADD_FAILURE() << "no messages were accepted";
  } catch (const BadRequest& bad) {
    EXPECT_EQ(bad.error.param, "messages");
    EXPECT_EQ(bad.error.message, "messages is required");
  }
}

}  // namespace
}  // namespace strata::openai
