#include "service/openai/chat_tools.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::openai {
namespace {

const char* const kWeatherTool = R"({"type": "function", "function": {
    "name": "weather", "description": "The forecast", "strict": true,
    "parameters": {"type": "object", "properties": {
      "city": {"type": "string"}, "days": {"type": "integer"}},
      "required": ["city"]}}})";
const char* const kClockTool = R"({"type": "function", "function": {"name": "clock"}})";

Json body_with_tools(Json extra = Json::object()) {
  Json body = {{"tools", Json::array({Json::parse(kWeatherTool), Json::parse(kClockTool)})}};
  body.update(extra);
  return body;
}

ChatTools read_ok(const Json& body) {
  try {
    return read_chat_tools(body);
  } catch (const BadRequest& bad) {
    ADD_FAILURE() << body.dump() << ": " << bad.error.message;
    return {};
  }
}

ApiError read_error(const Json& body) {
  try {
    read_chat_tools(body);
    ADD_FAILURE() << body.dump() << " was accepted";
  } catch (const BadRequest& bad) {
    return bad.error;
  }
  return {};
}

TEST(ChatToolsTest, NoToolsByDefault) {
  ChatTools tools = read_ok(Json::object());
  EXPECT_TRUE(tools.tools.empty());
  EXPECT_EQ(tools.choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(tools.parallel_calls);
  EXPECT_FALSE(tools.offered());
  EXPECT_FALSE(read_ok(Json{{"tools", nullptr}, {"tool_choice", nullptr}}).offered());
  EXPECT_FALSE(read_ok(Json{{"tools", Json::array()}}).offered());
}

TEST(ChatToolsTest, ValidToolsAreKeptAsSentInOrder) {
  ChatTools tools = read_ok(body_with_tools());
  ASSERT_EQ(tools.tools.size(), 2u);
  EXPECT_EQ(tools.tools, body_with_tools()["tools"]);
  EXPECT_EQ(tools.tools[0]["function"]["parameters"].dump(),
            R"({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},)"
            R"("required":["city"]})");
  EXPECT_EQ(tools.choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(tools.offered());
}

TEST(ChatToolsTest, ToolChoiceModes) {
  EXPECT_EQ(read_ok(body_with_tools({{"tool_choice", "auto"}})).choice.mode, ToolChoiceMode::kAuto);
  ChatTools none = read_ok(body_with_tools({{"tool_choice", "none"}}));
  EXPECT_EQ(none.choice.mode, ToolChoiceMode::kNone);
  EXPECT_FALSE(none.offered()) << "tool_choice none hides the tools";
  EXPECT_EQ(none.tools.size(), 2u);
  ChatTools required = read_ok(body_with_tools({{"tool_choice", "required"}}));
  EXPECT_EQ(required.choice.mode, ToolChoiceMode::kRequired);
  EXPECT_TRUE(required.offered());
  ChatTools named = read_ok(body_with_tools(
      {{"tool_choice", {{"type", "function"}, {"function", {{"name", "clock"}}}}}}));
  EXPECT_EQ(named.choice.mode, ToolChoiceMode::kFunction);
  EXPECT_EQ(named.choice.function, "clock");
  EXPECT_TRUE(named.offered());
  // "none" and "auto" need no tools.
  EXPECT_EQ(read_ok(Json{{"tool_choice", "none"}}).choice.mode, ToolChoiceMode::kNone);
  EXPECT_EQ(read_ok(Json{{"tool_choice", "auto"}}).choice.mode, ToolChoiceMode::kAuto);
}

TEST(ChatToolsTest, ParallelToolCalls) {
  EXPECT_FALSE(read_ok(body_with_tools({{"parallel_tool_calls", false}})).parallel_calls);
  EXPECT_TRUE(read_ok(body_with_tools({{"parallel_tool_calls", true}})).parallel_calls);
  EXPECT_TRUE(read_ok(body_with_tools({{"parallel_tool_calls", nullptr}})).parallel_calls);
}

struct BadTools {
  const char* name;
  const char* patch;  // merged into a body with the weather and clock tools
  const char* param;
  const char* message;  // "" to skip the check
};

class ChatToolsErrorTest : public testing::TestWithParam<BadTools> {};

TEST_P(ChatToolsErrorTest, Is400NamingTheField) {
  Json body = body_with_tools();
  body.merge_patch(Json::parse(GetParam().patch));
  ApiError error = read_error(body);
  EXPECT_EQ(error.status, 400);
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_EQ(error.param, GetParam().param);
  if (*GetParam().message != '\0') {
    EXPECT_EQ(error.message, GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, ChatToolsErrorTest,
    testing::Values(
        BadTools{"tools_object", R"({"tools": {"type": "function"}})", "tools",
                 "tools must be an array"},
        BadTools{"tool_string", R"({"tools": ["weather"]})", "tools.[0]",
                 "tools.[0] must be an object"},
        BadTools{"tool_type", R"({"tools": [{"type": "code_interpreter"}]})", "tools.[0].type",
                 "Unsupported tool type 'code_interpreter': only 'function' tools are supported"},
        BadTools{"tool_type_missing", R"({"tools": [{"function": {"name": "f"}}]})",
                 "tools.[0].type", ""},
        BadTools{"function_missing", R"({"tools": [{"type": "function"}]})", "tools.[0].function",
                 "tools.[0].function is required"},
        BadTools{"function_string", R"({"tools": [{"type": "function", "function": "f"}]})",
                 "tools.[0].function", "tools.[0].function must be an object"},
        BadTools{"name_missing", R"({"tools": [{"type": "function", "function": {}}]})",
                 "tools.[0].function.name", "tools.[0].function.name is required"},
        BadTools{"name_number", R"({"tools": [{"type": "function", "function": {"name": 1}}]})",
                 "tools.[0].function.name", "tools.[0].function.name must be a string"},
        BadTools{"description_number",
                 R"({"tools": [{"type": "function", "function": {"name": "f",
                     "description": 2}}]})",
                 "tools.[0].function.description", ""},
        BadTools{"strict_string",
                 R"({"tools": [{"type": "function", "function": {"name": "f",
                     "strict": "yes"}}]})",
                 "tools.[0].function.strict", ""},
        BadTools{"parameters_string",
                 R"({"tools": [{"type": "function", "function": {"name": "f",
                     "parameters": "object"}}]})",
                 "tools.[0].function.parameters",
                 "tools.[0].function.parameters must be a JSON schema object"},
        BadTools{"duplicate_name",
                 R"({"tools": [{"type": "function", "function": {"name": "f"}},
                               {"type": "function", "function": {"name": "g"}},
                               {"type": "function", "function": {"name": "f"}}]})",
                 "tools.[2].function.name", "Two tools are named 'f'"},
        BadTools{"choice_unknown", R"({"tool_choice": "always"})", "tool_choice",
                 "Invalid tool_choice 'always': expected 'auto', 'none', 'required' or a "
                 "function"},
        BadTools{"choice_number", R"({"tool_choice": 1})", "tool_choice",
                 "tool_choice must be a string or an object"},
        BadTools{"choice_required_without_tools", R"({"tools": null, "tool_choice": "required"})",
                 "tool_choice", "tool_choice 'required' needs at least one tool in tools"},
        BadTools{"choice_function_not_a_tool",
                 R"({"tool_choice": {"type": "function", "function": {"name": "stocks"}}})",
                 "tool_choice.function.name",
                 "tool_choice names the function 'stocks', which is not among the tools"},
        BadTools{"choice_function_without_tools",
                 R"({"tools": null, "tool_choice": {"type": "function",
                     "function": {"name": "weather"}}})",
                 "tool_choice.function.name", ""},
        BadTools{"choice_function_no_name", R"({"tool_choice": {"type": "function"}})",
                 "tool_choice.function.name", "tool_choice.function.name is required"},
        BadTools{"choice_function_name_number",
                 R"({"tool_choice": {"type": "function", "function": {"name": 3}}})",
                 "tool_choice.function.name", ""},
        BadTools{"parallel_string", R"({"parallel_tool_calls": "no"})", "parallel_tool_calls",
                 "parallel_tool_calls must be a boolean"}),
    [](const testing::TestParamInfo<BadTools>& info) { return std::string(info.param.name); });

TEST(ChatToolsTest, ToolSignaturesReadParameterTypes) {
  Json tools = Json::parse(R"([
    {"type": "function", "function": {"name": "all", "parameters": {"type": "object",
      "properties": {"s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
                     "b": {"type": "boolean"}, "o": {"type": "object"}, "a": {"type": "array"},
                     "z": {"type": "null"}, "many": {"type": ["string", "null"]},
                     "none": {"description": "no type"}, "odd": {"type": "date"},
                     "bad": 5}}}},
    {"type": "function", "function": {"name": "bare"}},
    {"type": "function", "function": {"name": "no_properties",
      "parameters": {"type": "object"}}}
  ])");
  std::vector<ToolSignature> signatures = tool_signatures(tools);
  ASSERT_EQ(signatures.size(), 3u);
  EXPECT_EQ(signatures[0].name, "all");
  const std::map<std::string, ParameterType, std::less<>> expected = {
      {"s", ParameterType::kString},     {"i", ParameterType::kInteger},
      {"n", ParameterType::kNumber},     {"b", ParameterType::kBoolean},
      {"o", ParameterType::kObject},     {"a", ParameterType::kArray},
      {"z", ParameterType::kNull},       {"many", ParameterType::kUnknown},
      {"none", ParameterType::kUnknown}, {"odd", ParameterType::kUnknown},
      {"bad", ParameterType::kUnknown}};
  EXPECT_EQ(signatures[0].parameters, expected);
  EXPECT_EQ(signatures[1].name, "bare");
  EXPECT_TRUE(signatures[1].parameters.empty());
  EXPECT_EQ(signatures[2].name, "no_properties");
  EXPECT_TRUE(signatures[2].parameters.empty());
  EXPECT_TRUE(tool_signatures(Json::array()).empty());
}

}  // namespace
}  // namespace strata::openai
