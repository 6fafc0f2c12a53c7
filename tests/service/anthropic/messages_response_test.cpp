#include "service/anthropic/messages_response.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "service/anthropic/anthropic_error.h"

namespace strata::anthropic {
namespace {

using openai::Json;

const MessageContext kContext{.id = "msg_1", .model = "m"};

bool is_tool_use_id(const Json& id) {
  if (!id.is_string()) return false;
  const std::string text = id.get<std::string>();
  return text.size() == 6 + 24 && text.starts_with("toolu_") &&
         text.find_first_not_of("0123456789abcdef", 6) == std::string::npos;
}

TEST(MessagesResponseTest, StopReasons) {
  EXPECT_EQ(stop_reason({.finish = FinishReason::kStop}), "end_turn");
  EXPECT_EQ(stop_reason({.finish = FinishReason::kLength}), "max_tokens");
  EXPECT_EQ(stop_reason({.finish = FinishReason::kStop, .stop_sequence = "END"}),
            "stop_sequence");
  EXPECT_EQ(stop_reason({.finish = FinishReason::kStop, .called_tools = true}), "tool_use");
  EXPECT_EQ(stop_reason({.finish = FinishReason::kStop, .stop_sequence = "END",
                         .called_tools = true}),
            "tool_use");
  // Cut short inside a call: the call is unfinished, and the client must know why.
  EXPECT_EQ(stop_reason({.finish = FinishReason::kLength, .called_tools = true}), "max_tokens");
}

TEST(MessagesResponseTest, UsageSubtractsCacheReadsFromInputTokens) {
  EXPECT_EQ(usage_json({.prompt_tokens = 100, .cached_prompt_tokens = 64,
                        .completion_tokens = 7}),
            Json::parse(R"({"input_tokens": 36, "output_tokens": 7,
                            "cache_read_input_tokens": 64, "cache_creation_input_tokens": 0})"));
  EXPECT_EQ(usage_json({})["input_tokens"], 0);
}

TEST(MessagesResponseTest, MessageWithEveryBlock) {
  const ParsedReply reply{.content = "Checking.",
                          .reasoning = "Two cities.",
                          .tool_calls = {{"weather", R"({"city": "Paris"})"},
                                         {"clock", ""},
                                         {"cut", R"({"city": "Ro)"}}};
  Json message = message_json(kContext, reply, {.finish = FinishReason::kStop,
                                                .called_tools = true},
                              {.prompt_tokens = 10, .cached_prompt_tokens = 4,
                               .completion_tokens = 20});
  ASSERT_EQ(message["content"].size(), 5u);
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_TRUE(is_tool_use_id(message["content"][i]["id"])) << message["content"][i];
    message["content"][i]["id"] = "toolu_x";
  }
  EXPECT_EQ(message, Json::parse(R"({
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
    "content": [
      {"type": "thinking", "thinking": "Two cities.", "signature": ""},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_x", "name": "weather", "input": {"city": "Paris"}},
      {"type": "tool_use", "id": "toolu_x", "name": "clock", "input": {}},
      {"type": "tool_use", "id": "toolu_x", "name": "cut", "input": {"_raw": "{\"city\": \"Ro"}}
    ],
    "stop_reason": "tool_use", "stop_sequence": null,
    "usage": {"input_tokens": 6, "output_tokens": 20, "cache_read_input_tokens": 4,
              "cache_creation_input_tokens": 0}})"));
}

TEST(MessagesResponseTest, MessageOfTextEndedByAStopSequence) {
  Json message = message_json(kContext, {.content = "Hello"},
                              {.finish = FinishReason::kStop, .stop_sequence = "END"}, {});
  EXPECT_EQ(message["content"], Json::parse(R"([{"type": "text", "text": "Hello"}])"));
  EXPECT_EQ(message["stop_reason"], "stop_sequence");
  EXPECT_EQ(message["stop_sequence"], "END");
  // An empty reply has no blocks.
  EXPECT_EQ(message_json(kContext, {}, {}, {})["content"], Json::array());
}

TEST(MessagesResponseTest, EventFrame) {
  EXPECT_EQ(event_frame("ping", {{"type", "ping"}}), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
}

// A stream's frames as (event name, data).
std::vector<std::pair<std::string, Json>> frames(const std::string& sse) {
  std::vector<std::pair<std::string, Json>> out;
  size_t at = 0;
  while (at < sse.size()) {
    const size_t newline = sse.find('\n', at);
    const size_t end = sse.find("\n\n", at);
    if (sse.compare(at, 7, "event: ") != 0 || newline == std::string::npos ||
        end == std::string::npos || sse.compare(newline + 1, 6, "data: ") != 0) {
      ADD_FAILURE() << "not an event frame at " << at << ": " << sse.substr(at);
      break;
    }
    Json data = Json::parse(sse.substr(newline + 7, end - newline - 7));
    std::string name = sse.substr(at + 7, newline - at - 7);
    EXPECT_EQ(data["type"], name) << "the data's type names the event";
    out.emplace_back(std::move(name), std::move(data));
    at = end + 2;
  }
  return out;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, Json>>& events) {
  std::vector<std::string> out;
  for (const auto& [name, data] : events) out.push_back(name);
  return out;
}

ReplyEvent content(std::string text) { return {.kind = ReplyEventKind::kContent, .text = text}; }
ReplyEvent reasoning(std::string text) {
  return {.kind = ReplyEventKind::kReasoning, .text = text};
}
ReplyEvent begin_call(size_t index, std::string name) {
  return {.kind = ReplyEventKind::kToolCallBegin, .text = name, .tool_index = index};
}
ReplyEvent arguments(size_t index, std::string fragment) {
  return {.kind = ReplyEventKind::kToolCallArguments, .text = fragment, .tool_index = index};
}

TEST(MessageStreamTest, StartIsMessageStartAndPing) {
  MessageStream stream(kContext);
  auto events = frames(stream.start(12));
  ASSERT_EQ(names(events), (std::vector<std::string>{"message_start", "ping"}));
  EXPECT_EQ(events[0].second, Json::parse(R"({"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
    "stop_reason": null, "stop_sequence": null,
    "usage": {"input_tokens": 12, "output_tokens": 0, "cache_read_input_tokens": 0,
              "cache_creation_input_tokens": 0}}})"));
}

TEST(MessageStreamTest, Text) {
  MessageStream stream(kContext);
  const std::vector<ReplyEvent> first = {content("Hel")};
  const std::vector<ReplyEvent> second = {content("lo")};
  std::string sse = stream.on_reply_events(first);
  sse += stream.on_reply_events(second);
  sse += stream.finish({.finish = FinishReason::kStop},
                       {.prompt_tokens = 12, .cached_prompt_tokens = 8, .completion_tokens = 2});
  EXPECT_TRUE(stream.done());
  auto events = frames(sse);
  ASSERT_EQ(names(events),
            (std::vector<std::string>{"content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"}));
  EXPECT_EQ(events[0].second, Json::parse(R"({"type": "content_block_start", "index": 0,
                                              "content_block": {"type": "text", "text": ""}})"));
  EXPECT_EQ(events[1].second, Json::parse(R"({"type": "content_block_delta", "index": 0,
                                              "delta": {"type": "text_delta", "text": "Hel"}})"));
  EXPECT_EQ(events[2].second["delta"]["text"], "lo");
  EXPECT_EQ(events[3].second, Json::parse(R"({"type": "content_block_stop", "index": 0})"));
  EXPECT_EQ(events[4].second, Json::parse(R"({"type": "message_delta",
    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
    "usage": {"input_tokens": 4, "output_tokens": 2, "cache_read_input_tokens": 8,
              "cache_creation_input_tokens": 0}})"));
  EXPECT_EQ(events[5].second, Json::parse(R"({"type": "message_stop"})"));
  // Nothing after the end.
  EXPECT_EQ(stream.on_reply_events(first), "");
  EXPECT_EQ(stream.finish({}, {}), "");
  EXPECT_EQ(stream.on_error(openai::server_error("late")), "");
}

TEST(MessageStreamTest, ThinkingThenText) {
  MessageStream stream(kContext);
  const std::vector<ReplyEvent> replies = {reasoning("Hm"), reasoning("m."), content("Yes.")};
  std::string sse = stream.on_reply_events(replies);
  sse += stream.finish({.finish = FinishReason::kStop, .stop_sequence = "END"},
                       {.completion_tokens = 5});
  auto events = frames(sse);
  ASSERT_EQ(names(events),
            (std::vector<std::string>{"content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "content_block_start",
                                      "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"}));
  EXPECT_EQ(events[0].second["content_block"],
            Json::parse(R"({"type": "thinking", "thinking": "", "signature": ""})"));
  EXPECT_EQ(events[1].second["delta"], Json::parse(R"({"type": "thinking_delta",
                                                       "thinking": "Hm"})"));
  EXPECT_EQ(events[2].second["delta"]["thinking"], "m.");
  EXPECT_EQ(events[3].second["delta"], Json::parse(R"({"type": "signature_delta",
                                                       "signature": ""})"))
      << "a thinking block is signed before it closes";
  EXPECT_EQ(events[4].second["index"], 0);
  EXPECT_EQ(events[5].second, Json::parse(R"({"type": "content_block_start", "index": 1,
                                              "content_block": {"type": "text", "text": ""}})"));
  EXPECT_EQ(events[6].second["delta"], Json::parse(R"({"type": "text_delta", "text": "Yes."})"));
  EXPECT_EQ(events[6].second["index"], 1);
  EXPECT_EQ(events[7].second["index"], 1);
  EXPECT_EQ(events[8].second["delta"],
            Json::parse(R"({"stop_reason": "stop_sequence", "stop_sequence": "END"})"));
}

TEST(MessageStreamTest, TextThenToolUse) {
  MessageStream stream(kContext);
  const std::vector<ReplyEvent> first = {content("Checking."), begin_call(0, "weather"),
                                         arguments(0, "{\"city\": ")};
  const std::vector<ReplyEvent> second = {arguments(0, "\"Paris\"}"), begin_call(1, "clock"),
                                          arguments(1, "{}")};
  std::string sse = stream.on_reply_events(first);
  sse += stream.on_reply_events(second);
  sse += stream.finish({.finish = FinishReason::kStop}, {.completion_tokens = 30});
  auto events = frames(sse);
  ASSERT_EQ(names(events),
            (std::vector<std::string>{"content_block_start", "content_block_delta",
                                      "content_block_stop", "content_block_start",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "content_block_start",
                                      "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"}));
  Json weather = events[3].second;
  EXPECT_TRUE(is_tool_use_id(weather["content_block"]["id"])) << weather;
  weather["content_block"]["id"] = "toolu_x";
  EXPECT_EQ(weather, Json::parse(R"({"type": "content_block_start", "index": 1,
    "content_block": {"type": "tool_use", "id": "toolu_x", "name": "weather", "input": {}}})"));
  EXPECT_EQ(events[4].second, Json::parse(R"({"type": "content_block_delta", "index": 1,
    "delta": {"type": "input_json_delta", "partial_json": "{\"city\": "}})"));
  EXPECT_EQ(events[5].second["delta"]["partial_json"], "\"Paris\"}");
  EXPECT_EQ(events[6].second["index"], 1);
  EXPECT_EQ(events[7].second["index"], 2);
  EXPECT_EQ(events[7].second["content_block"]["name"], "clock");
  EXPECT_NE(events[7].second["content_block"]["id"], events[3].second["content_block"]["id"]);
  EXPECT_EQ(events[8].second["delta"]["partial_json"], "{}");
  EXPECT_EQ(events[10].second["delta"]["stop_reason"], "tool_use")
      << "the stream saw the calls though the end did not say so";
  EXPECT_EQ(events[10].second["usage"]["output_tokens"], 30);
}

TEST(MessageStreamTest, ErrorMidStreamEndsIt) {
  MessageStream stream(kContext);
  const std::vector<ReplyEvent> first = {content("Hel")};
  std::string sse = stream.on_reply_events(first);
  sse += stream.on_error(openai::server_error("out of memory"));
  EXPECT_TRUE(stream.done());
  auto events = frames(sse);
  ASSERT_EQ(names(events), (std::vector<std::string>{"content_block_start",
                                                     "content_block_delta", "error"}));
  EXPECT_EQ(events[2].second, Json::parse(R"({"type": "error", "error": {
    "type": "api_error", "message": "out of memory"}})"));
  EXPECT_EQ(stream.on_reply_events(first), "");
  EXPECT_EQ(stream.finish({}, {}), "");
}

TEST(MessageStreamTest, EmptyReplyHasNoBlocks) {
  MessageStream stream(kContext);
  auto events = frames(stream.finish({.finish = FinishReason::kLength}, {}));
  ASSERT_EQ(names(events), (std::vector<std::string>{"message_delta", "message_stop"}));
  EXPECT_EQ(events[0].second["delta"]["stop_reason"], "max_tokens");
}

TEST(AnthropicErrorTest, ErrorTypesAndBody) {
  EXPECT_EQ(error_type(400), "invalid_request_error");
  EXPECT_EQ(error_type(401), "authentication_error");
  EXPECT_EQ(error_type(403), "permission_error");
  EXPECT_EQ(error_type(404), "not_found_error");
  EXPECT_EQ(error_type(413), "request_too_large");
  EXPECT_EQ(error_type(429), "rate_limit_error");
  EXPECT_EQ(error_type(500), "api_error");
  EXPECT_EQ(error_type(503), "overloaded_error");
  EXPECT_EQ(error_type(529), "overloaded_error");
  EXPECT_EQ(error_type(422), "invalid_request_error");
  EXPECT_EQ(anthropic::error_json(openai::invalid_request("bad", "messages")),
            Json::parse(R"({"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": "bad"}})"));
}

}  // namespace
}  // namespace strata::anthropic
