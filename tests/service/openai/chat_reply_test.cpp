#include "service/openai/chat_reply.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::openai {
namespace {

const ReplyFormat kQwen3{.tool_calls = ToolCallSyntax::kHermes,
                         .reasoning = ReasoningSyntax::kThinkTags};
const ReplySplit kWithTools{.format = kQwen3, .options = {.tools_offered = true}};
const ReplySplit kWithoutTools{.format = kQwen3, .options = {}};

constexpr const char* kReply =
    "<think>\nParis, 2 days: call the tool.\n</think>\n\n"
    "Let me check.\n"
    "<tool_call>\n"
    R"({"name": "get_weather", "arguments": {"city": "Paris", "days": 2}})"
    "\n</tool_call>";
constexpr const char* kArguments = R"({"city": "Paris", "days": 2})";

bool is_call_id(const Json& id) {
  if (!id.is_string()) return false;
  const std::string text = id.get<std::string>();
  return text.size() == 5 + 24 && text.starts_with("call_") &&
         text.find_first_not_of("0123456789abcdef", 5) == std::string::npos;
}

TEST(ChatReplyTest, WithoutASplitAllTextIsContent) {
  EXPECT_EQ(chat_message_json(kReply, std::nullopt),
            Json({{"role", "assistant"}, {"content", kReply}, {"refusal", nullptr}}));
  EXPECT_FALSE(reply_called_tools(chat_message_json(kReply, std::nullopt)));
}

TEST(ChatReplyTest, MessageWithReasoningContentAndToolCalls) {
  Json message = chat_message_json(kReply, kWithTools);
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["content"], "Let me check.");
  EXPECT_TRUE(message["refusal"].is_null());
  EXPECT_EQ(message["reasoning_content"], "Paris, 2 days: call the tool.");
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  const Json& call = message["tool_calls"][0];
  EXPECT_TRUE(is_call_id(call["id"])) << call["id"];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"], Json({{"name", "get_weather"}, {"arguments", kArguments}}));
  EXPECT_TRUE(reply_called_tools(message));
}

TEST(ChatReplyTest, CallsWithoutTextHaveNullContentAndDistinctIds) {
  const std::string reply = std::string("<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n"
                                        "</tool_call>\n<tool_call>\n{\"name\": \"b\", "
                                        "\"arguments\": {\"x\": [1]}}\n</tool_call>");
  Json message = chat_message_json(reply, kWithTools);
  EXPECT_TRUE(message["content"].is_null());
  EXPECT_FALSE(message.contains("reasoning_content"));
  ASSERT_EQ(message["tool_calls"].size(), 2u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "a");
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], "{}");
  EXPECT_EQ(message["tool_calls"][1]["function"]["name"], "b");
  EXPECT_EQ(message["tool_calls"][1]["function"]["arguments"], R"({"x": [1]})");
  EXPECT_NE(message["tool_calls"][0]["id"], message["tool_calls"][1]["id"]);
}

TEST(ChatReplyTest, WithoutOfferedToolsCallMarkupIsContent) {
  Json message = chat_message_json(kReply, kWithoutTools);
  EXPECT_EQ(message["reasoning_content"], "Paris, 2 days: call the tool.");
  EXPECT_FALSE(message.contains("tool_calls"));
  EXPECT_NE(message["content"].get<std::string>().find("<tool_call>"), std::string::npos);
  EXPECT_FALSE(reply_called_tools(message));
}

TEST(ChatReplyTest, PlainReplyHasStringContentAndNoExtraFields) {
  EXPECT_EQ(chat_message_json("Hello.", kWithTools),
            Json({{"role", "assistant"}, {"content", "Hello."}, {"refusal", nullptr}}));
  // Empty content stays "" where nothing was called.
  EXPECT_EQ(chat_message_json("", kWithTools)["content"], "");
}

TEST(ChatReplyTest, ReplyCalledTools) {
  EXPECT_FALSE(reply_called_tools(Json{{"content", "x"}}));
  EXPECT_FALSE(reply_called_tools(Json{{"tool_calls", Json::array()}}));
  EXPECT_TRUE(reply_called_tools(Json{{"tool_calls", Json::array({Json::object()})}}));
}

TEST(ChatDeltaStreamTest, WithoutASplitEveryTextIsOneContentDelta) {
  ChatDeltaStream stream(std::nullopt);
  EXPECT_EQ(stream.deltas("<tool_", false), std::vector<Json>{Json({{"content", "<tool_"}})});
  EXPECT_TRUE(stream.deltas("", false).empty());
  EXPECT_EQ(stream.deltas("call>", true), std::vector<Json>{Json({{"content", "call>"}})});
  EXPECT_FALSE(stream.called_tools());
}

// Each delta, in order, from the whole reply fed one byte at a time.
std::vector<Json> bytewise_deltas(const std::string& reply, ChatDeltaStream& stream) {
  std::vector<Json> out;
  for (size_t i = 0; i < reply.size(); ++i) {
    for (Json& delta : stream.deltas(reply.substr(i, 1), i + 1 == reply.size())) {
      out.push_back(std::move(delta));
    }
  }
  return out;
}

TEST(ChatDeltaStreamTest, DeltasShapesAndOrder) {
  ChatDeltaStream stream(kWithTools);
  std::vector<Json> deltas = bytewise_deltas(kReply, stream);
  EXPECT_TRUE(stream.called_tools());
  std::string reasoning;
  std::string content;
  std::string arguments;
  int n_begins = 0;
  bool arguments_began = false;
  for (const Json& delta : deltas) {
    ASSERT_EQ(delta.size(), 1u) << delta.dump();
    if (delta.contains("reasoning_content")) {
      EXPECT_TRUE(content.empty() && n_begins == 0) << "reasoning comes first here";
      reasoning += delta["reasoning_content"].get<std::string>();
    } else if (delta.contains("content")) {
      EXPECT_EQ(n_begins, 0) << "the prose comes before the call";
      content += delta["content"].get<std::string>();
    } else {
      ASSERT_TRUE(delta.contains("tool_calls")) << delta.dump();
      ASSERT_EQ(delta["tool_calls"].size(), 1u);
      const Json& call = delta["tool_calls"][0];
      EXPECT_EQ(call["index"], 0);
      if (call.contains("id")) {
        EXPECT_FALSE(arguments_began) << "the header comes first";
        ++n_begins;
        EXPECT_TRUE(is_call_id(call["id"])) << call.dump();
        EXPECT_EQ(call["type"], "function");
        EXPECT_EQ(call["function"], Json({{"name", "get_weather"}, {"arguments", ""}}));
      } else {
        EXPECT_EQ(n_begins, 1) << "a fragment before its call began";
        EXPECT_EQ(call.size(), 2u) << call.dump();
        ASSERT_EQ(call["function"].size(), 1u) << call.dump();
        arguments += call["function"]["arguments"].get<std::string>();
        arguments_began = true;
      }
    }
  }
  EXPECT_EQ(reasoning, "Paris, 2 days: call the tool.");
  EXPECT_EQ(content, "Let me check.");
  EXPECT_EQ(n_begins, 1);
  EXPECT_EQ(arguments, kArguments);
}

TEST(ChatDeltaStreamTest, FinalFlushesWhatTheParserHeldBack) {
  ChatDeltaStream stream(kWithTools);
  // "<tool" could still become markup: held back until the reply ends.
  std::vector<Json> first = stream.deltas("Look: <tool", false);
  std::string content;
  for (const Json& delta : first) content += delta.value("content", "");
  EXPECT_EQ(content.find('<'), std::string::npos) << content;
  for (const Json& delta : stream.deltas("", true)) content += delta.value("content", "");
  EXPECT_EQ(content, "Look: <tool");
  EXPECT_FALSE(stream.called_tools());
}

}  // namespace
}  // namespace strata::openai
