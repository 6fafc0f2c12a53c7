// Reads one tool call written as a JSON object, {"name": "f", "arguments": {...}}
// ("parameters" for Llama 3; "type" and "id" members are allowed), the shape that
// Hermes, Llama 3, Mistral v3 and generic JSON calls share.
//
// Until the call is certain nothing is consumed or reported, so text that turns out not
// to be a call (a reply that is plain JSON, malformed markup) can still become content in
// full. The call is certain once the name is known and the arguments object has begun;
// from there the arguments stream as they are written. Where "arguments" comes first,
// or is a string holding JSON, the call is reported when the object closes.
#pragma once

#include <optional>
#include <string_view>

#include "model/chat/reply/arguments_streamer.h"
#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"

namespace strata {

class CallObjectReader {
 public:
  // `text` starts at the object (leading whitespace allowed) or where the previous step
  // stopped. kRejected only before anything was reported.
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out);

  bool committed() const { return phase_ != Phase::kHead; }

 private:
  enum class Phase { kHead, kArguments, kTail };

  ParseStep step_head(std::string_view text, bool final, ReplyEventSink& out);

  Phase phase_ = Phase::kHead;
  std::optional<ArgumentsStreamer> streamer_;
};

}  // namespace strata
