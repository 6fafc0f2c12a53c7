// Anthropic Messages API responses, built from the reply parser's events
// (model/chat/reply/): the message object of a non-streaming reply, and the events of a
// stream.
//
// A stream is, in order:
//   event: message_start        {"message": {..., "content": [], "usage": {input_tokens}}}
//   event: ping
//   per content block (thinking, text, tool_use, in the order the model wrote them):
//     event: content_block_start  {"index", "content_block": {"type": ..., ...}}
//     event: content_block_delta  {"index", "delta": thinking_delta | text_delta |
//                                  input_json_delta}   one per piece
//     event: content_block_stop   {"index"}
//   event: message_delta        {"delta": {"stop_reason", "stop_sequence"},
//                                "usage": the whole usage, as usage_json}
//   event: message_stop
// An engine error mid-stream is an `error` event, and the stream ends there.
//
// Owned by one connection: the thread that runs it (its Asio strand).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/generate_request.h"
#include "model/chat/reply/parsed_reply.h"
#include "model/chat/reply/reply_event.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::anthropic {

// What every event of one reply shares.
struct MessageContext {
  std::string id;     // "msg_..."
  std::string model;  // as reported
};

// How the reply ended, in Anthropic's terms.
struct MessageEnd {
  FinishReason finish = FinishReason::kStop;
  std::optional<std::string> stop_sequence = std::nullopt;  // the stop string that ended it
  bool called_tools = false;
};

// "end_turn", "max_tokens", "stop_sequence" or "tool_use".
std::string_view stop_reason(const MessageEnd& end);

// {"input_tokens", "output_tokens", "cache_read_input_tokens",
//  "cache_creation_input_tokens"}: input_tokens excludes the tokens read from the cache.
openai::Json usage_json(const Usage& usage);

// The whole message object. Tool calls get ids "toolu_..." made here.
openai::Json message_json(const MessageContext& context, const ParsedReply& reply,
                          const MessageEnd& end, const Usage& usage);

// "event: NAME\ndata: JSON\n\n"
std::string event_frame(std::string_view name, const openai::Json& data);

class MessageStream {
 public:
  explicit MessageStream(MessageContext context);

  // message_start and a ping. `input_tokens` is the prompt's length.
  std::string start(int64_t input_tokens);
  // The frames for the parser's events: blocks opened, extended and closed.
  std::string on_reply_events(std::span<const ReplyEvent> events);
  // Closes the open block, then message_delta and message_stop.
  std::string finish(const MessageEnd& end, const Usage& usage);
  // An error event; nothing follows it.
  std::string on_error(const openai::ApiError& error);
  bool done() const { return done_; }

 private:
  enum class BlockKind { kNone, kText, kThinking, kToolUse };
  std::string open_block(BlockKind kind, const openai::Json& content_block);
  std::string close_block();
  std::string delta(const openai::Json& delta);

  MessageContext context_;
  BlockKind open_ = BlockKind::kNone;
  size_t open_tool_ = 0;  // the parser's tool index of the open tool_use block
  int64_t index_ = -1;    // the open block's index; -1 before the first
  bool called_tools_ = false;
  bool done_ = false;
};

}  // namespace strata::anthropic
