// gpt-oss replies in OpenAI's harmony format. Generation starts after the prompt's
// `<|start|>assistant`, so a reply is a sequence of messages:
//   <|channel|>analysis<|message|>...<|end|>                     reasoning
//   <|start|>assistant<|channel|>final<|message|>...<|return|>   the answer
//   <|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{...}<|call|>
// A message's header runs to <|message|>; a `to=` recipient (before or after the
// channel) makes the body a tool call, reported under the name after "functions.".
// Commentary without a recipient is a preamble for the user: content.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/chat/reply/arguments_streamer.h"
#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"
#include "model/chat/reply/text_run.h"

namespace strata {

class HarmonyReader {
 public:
  // Without `tools_offered`, a message to a recipient is content.
  explicit HarmonyReader(bool tools_offered) : tools_offered_(tools_offered) {}

  ParseStep step(std::string_view text, bool final, ReplyEventSink& out);

 private:
  enum class Body { kReasoning, kContent, kToolCall };

  ParseStep step_header(std::string_view text, bool final, ReplyEventSink& out);
  ParseStep step_body(std::string_view text, bool final, ReplyEventSink& out);
  // Reports the body text `text`; `ends`: the message ends after it. Returns bytes consumed.
  size_t emit_body(std::string_view text, bool ends, ReplyEventSink& out);
  size_t emit_call(std::string_view text, bool ends, ReplyEventSink& out);
  void start_body(Body body);

  bool tools_offered_;
  bool in_header_ = true;
  Body body_ = Body::kContent;
  std::string call_name_;
  std::optional<ArgumentsStreamer> arguments_;  // the call began
  TextRun run_;
};

}  // namespace strata
