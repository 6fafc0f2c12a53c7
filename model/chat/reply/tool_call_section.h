// A run of tool-call markup in a reply, parsed by its family's rules. The reply parser
// finds where a section starts (an opening marker, or JSON at the start of the reply)
// and hands it the text from there until the section says it is done.
//
// Sections follow parse_step.h: before their first call is reported they consume nothing,
// so a rejected section's text (malformed markup) becomes content in full.
#pragma once

#include <memory>
#include <string_view>

#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"
#include "model/chat/reply/tool_signature.h"

namespace strata {

class ToolCallSection {
 public:
  virtual ~ToolCallSection() = default;
  // `text` starts where the previous step stopped (at first: after the opening marker).
  // `final`: the generation has ended and no more text will come; a section must then
  // end (kDone, kBroken or kRejected) rather than ask for more.
  virtual ParseStep step(std::string_view text, bool final, ReplyEventSink& out) = 0;
};

// After <tool_call>: a JSON call object, then </tool_call>.
std::unique_ptr<ToolCallSection> make_hermes_section();
// After <tool_call>: <function=f><parameter=p>value</parameter>...</function></tool_call>,
// values converted to JSON by the parameter types in `tools` (looked up by function name).
std::unique_ptr<ToolCallSection> make_qwen3_coder_section(const ToolSignatures& tools);
// At the start of the reply: JSON call objects separated by ';'.
std::unique_ptr<ToolCallSection> make_llama3_json_section();
// After <|python_tag|>: JSON calls, a builtin tool call (brave_search.call(query="...")),
// or code for the code interpreter.
std::unique_ptr<ToolCallSection> make_llama3_python_tag_section();
// After [TOOL_CALLS]: a JSON array of calls, or name[ARGS]{...}.
std::unique_ptr<ToolCallSection> make_mistral_section();
// After <｜tool▁calls▁begin｜>: calls up to <｜tool▁calls▁end｜>, in V3 or V3.1 layout.
std::unique_ptr<ToolCallSection> make_deepseek_section();
// At the start of the reply, perhaps in a ```json fence: a call object,
// {"tool_call": {...}} or {"tool_calls": [...]}.
std::unique_ptr<ToolCallSection> make_generic_json_section();

}  // namespace strata
