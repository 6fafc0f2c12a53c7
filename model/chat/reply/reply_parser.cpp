#include "model/chat/reply/reply_parser.h"

#include <stdexcept>
#include <utility>

#include "model/chat/reply/harmony_reader.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kToolCallOpen = "<tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralToolCalls = "[TOOL_CALLS]";
constexpr std::string_view kDeepSeekCallsBegin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
constexpr std::string_view kReasoningEnd[] = {kThinkClose};

// The marker that opens a run of call markup in `syntax`; empty where calls are whole-reply
// JSON (or harmony messages).
std::string_view section_marker(ToolCallSyntax syntax) {
  switch (syntax) {
    case ToolCallSyntax::kHermes:
    case ToolCallSyntax::kQwen3Coder: return kToolCallOpen;
    case ToolCallSyntax::kLlama3: return kPythonTag;
    case ToolCallSyntax::kMistral: return kMistralToolCalls;
    case ToolCallSyntax::kDeepSeekV3:
    case ToolCallSyntax::kDeepSeekV31: return kDeepSeekCallsBegin;
    case ToolCallSyntax::kNone:
    case ToolCallSyntax::kGptOss:
    case ToolCallSyntax::kGenericJson: break;
  }
  return {};
}

bool calls_are_whole_reply_json(ToolCallSyntax syntax) {
  return syntax == ToolCallSyntax::kLlama3 || syntax == ToolCallSyntax::kGenericJson;
}

}  // namespace

ReplyParser::ReplyParser(const ReplyFormat& format, ReplyParserOptions options)
    : format_(format), tools_offered_(options.tools_offered) {
  for (ToolSignature& tool : options.tools) {
    std::string name = tool.name;
    tools_.insert_or_assign(std::move(name), std::move(tool));
  }
  if (format_.tool_calls == ToolCallSyntax::kGptOss ||
      format_.reasoning == ReasoningSyntax::kGptOssChannels) {
    mode_ = Mode::kHarmony;
    harmony_ = std::make_unique<HarmonyReader>(tools_offered_);
    return;
  }
  if (format_.reasoning == ReasoningSyntax::kThinkTags) {
    markers_.push_back({kThinkOpen, MarkerAction::kOpenReasoning});
    // A stray </think> (the prompt opened the block but the caller did not say so) is
    // markup all the same.
    markers_.push_back({kThinkClose, MarkerAction::kCloseReasoning});
    if (options.starts_in_reasoning) mode_ = Mode::kReasoning;
  }
  const std::string_view marker = section_marker(format_.tool_calls);
  if (tools_offered_ && !marker.empty()) markers_.push_back({marker, MarkerAction::kOpenSection});
  for (const Marker& m : markers_) marker_text_.push_back(m.text);
}

ReplyParser::~ReplyParser() = default;

std::vector<ReplyEvent> ReplyParser::feed(std::string_view text) {
  if (finished_) throw std::logic_error("ReplyParser::feed called after finish()");
  pending_.append(text);
  run(false);
  return sink_.take();
}

std::vector<ReplyEvent> ReplyParser::finish() {
  if (finished_) throw std::logic_error("ReplyParser::finish called twice");
  finished_ = true;
  run(true);
  return sink_.take();
}

void ReplyParser::run(bool final) {
  while (true) {
    const ParseStep step_result = step(pending_, final);
    pending_.erase(0, step_result.consumed);
    if (step_result.status != StepStatus::kNeedMore) continue;
    if (!final || pending_.empty()) return;
    // Every step reports all it holds at the end; text left over would be a parser
    // bug, and is shown rather than lost.
    sink_.content(pending_);
    pending_.clear();
    return;
  }
}

ParseStep ReplyParser::step(std::string_view text, bool final) {
  switch (mode_) {
    case Mode::kContent:
      return at_answer_start_ ? step_answer_start(text, final) : step_content(text, final);
    case Mode::kReasoning: return step_reasoning(text, final);
    case Mode::kSection: return step_section(text, final);
    case Mode::kHarmony: return harmony_->step(text, final, sink_);
  }
  return {.consumed = text.size(), .status = StepStatus::kNeedMore};
}

// Where whole-reply JSON calls may begin: leading whitespace is held until the first
// other byte tells whether a call starts.
ParseStep ReplyParser::step_answer_start(std::string_view text, bool final) {
  if (!tools_offered_ || !calls_are_whole_reply_json(format_.tool_calls)) {
    at_answer_start_ = false;
    return {.consumed = 0, .status = StepStatus::kProgress};
  }
  const size_t p = skip_space(text, 0);
  if (p == text.size() && !final) return {.consumed = 0, .status = StepStatus::kNeedMore};
  at_answer_start_ = false;
  if (p == text.size()) return {.consumed = 0, .status = StepStatus::kProgress};
  if (text[p] == '{') {
    start_section(format_.tool_calls == ToolCallSyntax::kLlama3 ? make_llama3_json_section()
                                                                : make_generic_json_section(),
                  p);
  } else if (text[p] == '`' && format_.tool_calls == ToolCallSyntax::kGenericJson) {
    start_section(make_generic_json_section(), p);
  }
  return {.consumed = 0, .status = StepStatus::kProgress};
}

ParseStep ReplyParser::step_content(std::string_view text, bool final) {
  const MarkerHit hit = find_first_marker(text, marker_text_);
  if (hit.pos == std::string_view::npos) {
    const size_t held = final ? 0 : partial_marker_tail(text, marker_text_);
    const size_t n =
        run_.emit(text.substr(0, text.size() - held), final, ReplyEventKind::kContent, sink_);
    return {.consumed = n, .status = StepStatus::kNeedMore};
  }
  const Marker& marker = markers_[hit.marker];
  const std::string_view before = text.substr(0, hit.pos);
  if (marker.action == MarkerAction::kOpenSection) {
    // Whitespace before the marker and the marker itself wait for the section's verdict.
    const size_t n = run_.emit(before, false, ReplyEventKind::kContent, sink_);
    start_section(make_section(marker.text), hit.pos - n + marker.text.size());
    return {.consumed = n, .status = StepStatus::kProgress};
  }
  run_.emit(before, true, ReplyEventKind::kContent, sink_);
  if (marker.action == MarkerAction::kOpenReasoning) {
    mode_ = Mode::kReasoning;
  } else {
    at_answer_start_ = true;
  }
  run_.restart();
  return {.consumed = hit.pos + marker.text.size(), .status = StepStatus::kProgress};
}

ParseStep ReplyParser::step_reasoning(std::string_view text, bool final) {
  const size_t end = text.find(kThinkClose);
  if (end == std::string_view::npos) {
    const size_t held = final ? 0 : partial_marker_tail(text, kReasoningEnd);
    const size_t n =
        run_.emit(text.substr(0, text.size() - held), final, ReplyEventKind::kReasoning, sink_);
    return {.consumed = n, .status = StepStatus::kNeedMore};
  }
  run_.emit(text.substr(0, end), true, ReplyEventKind::kReasoning, sink_);
  run_.restart();
  mode_ = Mode::kContent;
  at_answer_start_ = true;
  return {.consumed = end + kThinkClose.size(), .status = StepStatus::kProgress};
}

ParseStep ReplyParser::step_section(std::string_view text, bool final) {
  const ParseStep step = section_->step(text.substr(section_prefix_), final, sink_);
  switch (step.status) {
    case StepStatus::kRejected:
      return step_rejected_section(text);
    case StepStatus::kNeedMore:
    case StepStatus::kProgress: {
      if (step.consumed > 0) {
        section_reported_ = true;
        // At the end a section is stepped until it ends.
        const StepStatus status = final ? StepStatus::kProgress : step.status;
        return {.consumed = std::exchange(section_prefix_, 0) + step.consumed, .status = status};
      }
      if (!final || step.status == StepStatus::kProgress) return step;
      // A section must end at the end of the reply; one that still waits is treated as
      // rejected (nothing reported) or as ended here.
      if (!section_reported_) return step_rejected_section(text);
      break;
    }
    case StepStatus::kDone:
    case StepStatus::kBroken:
      break;
  }
  const size_t n = std::exchange(section_prefix_, 0) + step.consumed;
  end_section();
  run_.restart();
  return {.consumed = n, .status = StepStatus::kProgress};
}

// Not call markup after all: the marker is content, and the text after it is read as
// content again.
ParseStep ReplyParser::step_rejected_section(std::string_view text) {
  const size_t n = run_.emit(text.substr(0, section_prefix_), false, ReplyEventKind::kContent, sink_);
  end_section();
  return {.consumed = n, .status = StepStatus::kProgress};
}

std::unique_ptr<ToolCallSection> ReplyParser::make_section(std::string_view marker) const {
  if (marker == kPythonTag) return make_llama3_python_tag_section();
  if (marker == kMistralToolCalls) return make_mistral_section();
  if (marker == kDeepSeekCallsBegin) return make_deepseek_section();
  if (format_.tool_calls == ToolCallSyntax::kQwen3Coder) return make_qwen3_coder_section(tools_);
  return make_hermes_section();
}

void ReplyParser::start_section(std::unique_ptr<ToolCallSection> section, size_t prefix_bytes) {
  section_ = std::move(section);
  section_prefix_ = prefix_bytes;
  section_reported_ = false;
  mode_ = Mode::kSection;
}

void ReplyParser::end_section() {
  section_.reset();
  section_prefix_ = 0;
  mode_ = Mode::kContent;
}

}  // namespace strata
