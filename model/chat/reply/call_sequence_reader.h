// Reads tool calls written as JSON objects one after another: Llama 3's
// `{...}; {...}` and the JSON arrays of Mistral v3 (`[{...}, {...}]`) and generic
// {"tool_calls": [...]} replies.
//
// Like CallObjectReader, nothing is consumed before the first call is certain, and a
// separator is consumed only with the call after it: what follows the last call (prose,
// a dangling separator) is left to the caller as text.
#pragma once

#include <string_view>

#include "model/chat/reply/call_object_reader.h"
#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"

namespace strata {

class CallSequenceReader {
 public:
  // `separator` between calls (';' or ','); `bracketed`: the calls sit in `[` ... `]`.
  CallSequenceReader(char separator, bool bracketed)
      : separator_(separator), bracketed_(bracketed) {}

  // kRejected only before the first call was reported.
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out);

  bool committed() const { return committed_; }

 private:
  enum class Phase { kOpen, kCall, kBetween };

  // Tries the next call at text[start]; the bytes before it are consumed with it.
  ParseStep step_next(std::string_view text, size_t start, bool final, ReplyEventSink& out);
  ParseStep step_between(std::string_view text, bool final, ReplyEventSink& out);

  char separator_;
  bool bracketed_;
  Phase phase_ = Phase::kOpen;
  bool committed_ = false;
  CallObjectReader reader_;
};

}  // namespace strata
