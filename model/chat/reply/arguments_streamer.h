// Streams a tool call's arguments, a JSON object, as the model writes it: each byte the
// JSON scanner accepts is passed on as an argument fragment at once.
#pragma once

#include <string_view>

#include "model/chat/reply/json_scanner.h"
#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"

namespace strata {

class ArgumentsStreamer {
 public:
  explicit ArgumentsStreamer(size_t tool_index) : tool_index_(tool_index) {}

  // `text` continues the arguments (the first call's starts at the opening brace).
  // kDone when the object closed; kBroken when the text stops being JSON, or the
  // generation ended (`final`) with the object still open: the arguments then stay
  // truncated, as OpenAI's API leaves them when max_tokens cuts a call.
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out);

 private:
  size_t tool_index_;
  JsonScanner scanner_;
};

}  // namespace strata
