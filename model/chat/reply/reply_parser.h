// Splits a chat model's generated text into content, reasoning and tool calls as it is
// generated, by the markup of the model's family (reply_format.h).
//
// Markup never reaches content, also when a marker is split across tokens: the parser
// reports only what is certain and holds back the shortest tail that could still become
// markup (e.g. "<tool" at the end of a chunk), trailing whitespace of a text run, and
// an unfinished UTF-8 character. A tool call is reported once it is certain (its name
// known and its arguments begun); its arguments then stream as the model writes them,
// except in Qwen3-Coder's layout, where each parameter is reported whole. Markup that
// turns out malformed before its call is reported becomes content in full.
//
// Content and reasoning come in runs between pieces of markup; each run is reported
// without the whitespace at its ends (the newlines models write around markup). Calls
// written as a bare JSON reply (Llama 3, generic) are recognised only where the answer
// starts; JSON after prose is content.
//
// Decisions depend only on the text, never on where it was cut into chunks: feeding a
// reply in any pieces reports the same content, reasoning and calls (ParsedReply).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/reply/parse_step.h"
#include "model/chat/reply/reply_event.h"
#include "model/chat/reply/reply_format.h"
#include "model/chat/reply/text_run.h"
#include "model/chat/reply/tool_signature.h"

namespace strata {

class HarmonyReader;
class ToolCallSection;

struct ReplyParserOptions {
  // The request offered tools. Without them, call markup is content (reasoning is
  // still split off).
  bool tools_offered = false;
  // The rendered prompt ended inside an open <think> block (a template whose generation
  // prompt opens it, see ReplyFormat::generation_prompt_opens_think, with thinking on):
  // the reply starts as reasoning.
  bool starts_in_reasoning = false;
  // The offered tools' parameter types, for layouts that write argument values as raw
  // text (Qwen3-Coder). A tool missing here has its values read as JSON where they parse.
  std::vector<ToolSignature> tools = {};
};

// One per generated reply. Not thread-safe: the thread that detokenizes the reply feeds it.
class ReplyParser {
 public:
  ReplyParser(const ReplyFormat& format, ReplyParserOptions options);
  ~ReplyParser();
  ReplyParser(const ReplyParser&) = delete;
  ReplyParser& operator=(const ReplyParser&) = delete;

  // The next detokenized text (any split, even inside a UTF-8 character); returns what
  // it made certain. Throws std::logic_error after finish().
  std::vector<ReplyEvent> feed(std::string_view text);

  // The generation ended: reports everything held back. An unfinished tool call whose
  // name and arguments had begun stays a call with its arguments as written (truncated,
  // as OpenAI's API leaves them when max_tokens cuts a call); markup that never became a
  // call is content. Throws std::logic_error when called twice.
  std::vector<ReplyEvent> finish();

 private:
  enum class Mode { kContent, kReasoning, kSection, kHarmony };
  enum class MarkerAction { kOpenReasoning, kCloseReasoning, kOpenSection };
  struct Marker {
    std::string_view text;
    MarkerAction action;
  };

  void run(bool final);
  ParseStep step(std::string_view text, bool final);
  ParseStep step_content(std::string_view text, bool final);
  ParseStep step_answer_start(std::string_view text, bool final);
  ParseStep step_reasoning(std::string_view text, bool final);
  ParseStep step_section(std::string_view text, bool final);
  ParseStep step_rejected_section(std::string_view text);
  std::unique_ptr<ToolCallSection> make_section(std::string_view marker) const;
  // The section's own text starts `prefix_bytes` into the unconsumed text, after
  // whitespace and its marker, which are dropped once it reports a call.
  void start_section(std::unique_ptr<ToolCallSection> section, size_t prefix_bytes);
  void end_section();

  ReplyFormat format_;
  bool tools_offered_;
  ToolSignatures tools_;
  std::vector<Marker> markers_;                // what ends a content run
  std::vector<std::string_view> marker_text_;  // markers_[i].text, for the scans
  std::string pending_;                        // text received but not yet consumed
  Mode mode_ = Mode::kContent;
  bool finished_ = false;
  // Whole-reply JSON calls (Llama 3, generic) may begin here: at the reply's start, or
  // just after its reasoning.
  bool at_answer_start_ = true;
  TextRun run_;
  std::unique_ptr<ToolCallSection> section_;
  size_t section_prefix_ = 0;  // bytes of pending_ before the section's own text
  bool section_reported_ = false;  // the section consumed text: it reported a call
  std::unique_ptr<HarmonyReader> harmony_;
  ReplyEventSink sink_;
};

}  // namespace strata
