// A whole generated reply, split at once: for replies that were not streamed, and as the
// reference the streamed events must add up to.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/reply/reply_event.h"
#include "model/chat/reply/reply_format.h"
#include "model/chat/reply/reply_parser.h"

namespace strata {

struct ParsedToolCall {
  std::string name = {};
  std::string arguments = {};  // JSON object text, as the model wrote it

  bool operator==(const ParsedToolCall&) const = default;
};

struct ParsedReply {
  std::string content = {};
  std::string reasoning = {};
  std::vector<ParsedToolCall> tool_calls = {};  // in the order they began

  bool operator==(const ParsedReply&) const = default;
};

// Adds events to `reply`: text is appended, a begin adds a call, fragments extend it.
void collect_reply_events(std::span<const ReplyEvent> events, ParsedReply& reply);

// ReplyParser over the whole `text` at once: feed, then finish, collected.
ParsedReply parse_reply(const ReplyFormat& format, const ReplyParserOptions& options,
                        std::string_view text);

}  // namespace strata
