#include "service/anthropic/messages_reply_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::anthropic {
namespace {

using openai::Json;

const MessageContext kContext{.id = "msg_1", .model = "m"};
const openai::ReplySplit kQwen3Split{.format = {.tool_calls = ToolCallSyntax::kHermes,
                                                .reasoning = ReasoningSyntax::kThinkTags},
                                     .options = {.tools_offered = true}};
const std::vector<std::string> kStops = {"END", "STOP"};

const std::string kReply =
    "<think>\nLook it up.\n</think>\n\nChecking.\n<tool_call>\n"
    R"({"name": "weather", "arguments": {"city": "Paris"}})"
    "\n</tool_call>";

EngineEvent text_event(std::string text) {
  EngineEvent event;
  event.text = std::move(text);
  return event;
}

EngineEvent final_event(std::string text, int matched_stop = -1,
                        FinishReason finish = FinishReason::kStop) {
  EngineEvent event = text_event(std::move(text));
  event.finish = finish;
  event.matched_stop = matched_stop;
  event.usage = {.prompt_tokens = 9, .cached_prompt_tokens = 0, .completion_tokens = 4};
  return event;
}

// The data of each event of a stream, in order.
std::vector<Json> event_data(const std::string& sse) {
  std::vector<Json> out;
  size_t at = 0;
  while (at < sse.size()) {
    const size_t data = sse.find("\ndata: ", at);
    const size_t end = sse.find("\n\n", at);
    if (data == std::string::npos || end == std::string::npos || data > end) {
      ADD_FAILURE() << "not an event frame: " << sse.substr(at);
      break;
    }
    out.push_back(Json::parse(sse.substr(data + 7, end - data - 7)));
    at = end + 2;
  }
  return out;
}

Json body_of(MessagesReplyWriter& writer, const std::vector<EngineEvent>& events) {
  for (const EngineEvent& event : events) writer.add_event(event);
  return writer.body();
}

TEST(MessagesReplyWriterTest, WholeReplySplitIntoBlocks) {
  MessagesReplyWriter writer(kContext, kQwen3Split, kStops, 9);
  Json body = body_of(writer, {text_event(kReply.substr(0, 20)), final_event(kReply.substr(20))});
  ASSERT_EQ(body["content"].size(), 3u) << body.dump(1);
  EXPECT_EQ(body["content"][0], Json::parse(R"({"type": "thinking", "thinking": "Look it up.",
                                                "signature": ""})"));
  EXPECT_EQ(body["content"][1], Json::parse(R"({"type": "text", "text": "Checking."})"));
  EXPECT_EQ(body["content"][2]["type"], "tool_use");
  EXPECT_EQ(body["content"][2]["name"], "weather");
  EXPECT_EQ(body["content"][2]["input"], Json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(body["stop_reason"], "tool_use");
  EXPECT_TRUE(body["stop_sequence"].is_null());
  EXPECT_EQ(body["usage"]["input_tokens"], 9);
  EXPECT_EQ(body["usage"]["output_tokens"], 4);
  EXPECT_EQ(body["id"], "msg_1");
}

TEST(MessagesReplyWriterTest, StopSequenceFromMatchedStop) {
  for (int matched : {0, 1}) {
    MessagesReplyWriter writer(kContext, std::nullopt, kStops, 9);
    Json body = body_of(writer, {final_event("Hello", matched)});
    EXPECT_EQ(body["stop_reason"], "stop_sequence");
    EXPECT_EQ(body["stop_sequence"], kStops[static_cast<size_t>(matched)]);
  }
  // No match, or an index the request's stops do not have: no stop sequence.
  for (int matched : {-1, 2, 100}) {
    MessagesReplyWriter writer(kContext, std::nullopt, kStops, 9);
    Json body = body_of(writer, {final_event("Hello", matched)});
    EXPECT_EQ(body["stop_reason"], "end_turn") << matched;
    EXPECT_TRUE(body["stop_sequence"].is_null()) << matched;
  }
  MessagesReplyWriter cut(kContext, std::nullopt, kStops, 9);
  EXPECT_EQ(body_of(cut, {final_event("Hel", -1, FinishReason::kLength)})["stop_reason"],
            "max_tokens");
}

TEST(MessagesReplyWriterTest, WithoutASplitAllIsText) {
  MessagesReplyWriter writer(kContext, std::nullopt, {}, 9);
  Json body = body_of(writer, {final_event(kReply)});
  EXPECT_EQ(body["content"], Json::array({{{"type", "text"}, {"text", kReply}}}));
  EXPECT_EQ(body["stop_reason"], "end_turn");
}

TEST(MessagesReplyWriterTest, StreamOneByteAnEvent) {
  MessagesReplyWriter writer(kContext, kQwen3Split, kStops, 9);
  std::string sse = writer.stream_start();
  for (size_t i = 0; i < kReply.size(); ++i) {
    sse += writer.stream_event(text_event(kReply.substr(i, 1)));
  }
  sse += writer.stream_event(final_event("", 1));
  EXPECT_EQ(writer.stream_event(final_event("late")), "") << "nothing after message_stop";
  std::vector<Json> events = event_data(sse);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.front()["type"], "message_start");
  EXPECT_EQ(events.front()["message"]["usage"]["input_tokens"], 9);
  EXPECT_EQ(events[1]["type"], "ping");
  std::string thinking;
  std::string text;
  std::string input_json;
  std::vector<std::string> block_types;
  for (const Json& event : events) {
    if (event["type"] == "content_block_start") {
      block_types.push_back(event["content_block"]["type"].get<std::string>());
    } else if (event["type"] == "content_block_delta") {
      const Json& delta = event["delta"];
      if (delta["type"] == "thinking_delta") thinking += delta["thinking"].get<std::string>();
      if (delta["type"] == "text_delta") {
        const std::string piece = delta["text"];
        EXPECT_EQ(piece.find('<'), std::string::npos) << "markup in text: " << piece;
        text += piece;
      }
      if (delta["type"] == "input_json_delta") {
        input_json += delta["partial_json"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(block_types, (std::vector<std::string>{"thinking", "text", "tool_use"}));
  EXPECT_EQ(thinking, "Look it up.");
  EXPECT_EQ(text, "Checking.");
  EXPECT_EQ(Json::parse(input_json), Json::parse(R"({"city": "Paris"})"));
  const Json& message_delta = events[events.size() - 2];
  EXPECT_EQ(message_delta["type"], "message_delta");
  EXPECT_EQ(message_delta["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(message_delta["delta"]["stop_sequence"], "STOP");
  EXPECT_EQ(message_delta["usage"]["output_tokens"], 4);
  EXPECT_EQ(events.back()["type"], "message_stop");
}

TEST(MessagesReplyWriterTest, StreamedStopSequence) {
  MessagesReplyWriter writer(kContext, std::nullopt, kStops, 3);
  std::string sse = writer.stream_start() + writer.stream_event(final_event("Hi", 0));
  std::vector<Json> events = event_data(sse);
  ASSERT_EQ(events.size(), 7u);
  EXPECT_EQ(events[5]["delta"],
            Json::parse(R"({"stop_reason": "stop_sequence", "stop_sequence": "END"})"));
}

TEST(MessagesReplyWriterTest, EngineErrorMidStream) {
  MessagesReplyWriter writer(kContext, std::nullopt, {}, 3);
  std::string sse = writer.stream_start() + writer.stream_event(text_event("Hel"));
  EngineEvent failed;
  failed.finish = FinishReason::kError;
  failed.error = "out of memory";
  sse += writer.stream_event(failed);
  std::vector<Json> events = event_data(sse);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), Json::parse(R"({"type": "error", "error": {"type": "api_error",
    "message": "Generation failed: out of memory"}})"));
  EXPECT_EQ(writer.stream_event(final_event("x")), "");
}

TEST(MessagesReplyWriterTest, StreamErrorOutsideTheEngine) {
  MessagesReplyWriter writer(kContext, std::nullopt, {}, 3);
  std::string sse =
      writer.stream_start() + writer.stream_error(openai::unavailable("The model unloaded"));
  std::vector<Json> events = event_data(sse);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2]["error"]["type"], "overloaded_error");
  EXPECT_EQ(events[2]["error"]["message"], "The model unloaded");
}

}  // namespace
}  // namespace strata::anthropic
