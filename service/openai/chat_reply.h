// A chat reply split into content, reasoning and tool calls (model/chat/reply/), in the
// shapes of the chat completions API: the whole `message` of a chat.completion, and the
// `delta`s of its stream.
//
// message: {"role": "assistant", "content": TEXT or null, "reasoning_content": TEXT
// (only where the model reasoned), "tool_calls": [{"id", "type": "function",
// "function": {"name", "arguments": JSON TEXT}}] (only where it called)}.
// deltas: {"content": ...}, {"reasoning_content": ...}, and for each call
// {"tool_calls": [{"index", "id", "type", "function": {"name", "arguments": ""}}]} then
// {"tool_calls": [{"index", "function": {"arguments": FRAGMENT}}]} per fragment.
//
// Owned by one connection: the thread that runs it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/reply/reply_parser.h"
#include "service/openai/json_fields.h"

namespace strata::openai {

// How replies of one request are split: the model's reply format and what the request
// offered.
struct ReplySplit {
  ReplyFormat format;
  ReplyParserOptions options;
};

// The message of a whole reply; without a split, all of `text` is content.
Json chat_message_json(std::string_view text, const std::optional<ReplySplit>& split);

// True where the reply called at least one tool (its finish_reason is "tool_calls").
bool reply_called_tools(const Json& message);

class ChatDeltaStream {
 public:
  explicit ChatDeltaStream(std::optional<ReplySplit> split);
  ~ChatDeltaStream();

  // The deltas for the next text; `final` also flushes what the parser held back.
  std::vector<Json> deltas(std::string_view text, bool final);
  bool called_tools() const { return called_tools_; }

 private:
  std::unique_ptr<ReplyParser> parser_;  // null without a split: text is content
  bool called_tools_ = false;
};

}  // namespace strata::openai
