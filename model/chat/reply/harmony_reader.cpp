#include "model/chat/reply/harmony_reader.h"

#include "model/chat/reply/markup_scan.h"

namespace strata {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kRecipient = "to=";
// What ends a message body: the first three are consumed with it, the others begin the
// next header.
constexpr std::string_view kBodyEnds[] = {"<|end|>", "<|call|>", "<|return|>", kStart, kChannel};
constexpr size_t kNConsumedBodyEnds = 3;
// A header is a role, a channel and a recipient; longer text is no header.
constexpr size_t kMaxHeaderBytes = 256;

// The word after `key` in `header` (up to whitespace or the next <|...|> token).
std::string_view header_field(std::string_view header, std::string_view key) {
  const size_t at = header.find(key);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = header.substr(at + key.size());
  size_t end = 0;
  while (end < rest.size() && !is_space(rest[end]) && rest[end] != '<') ++end;
  return rest.substr(0, end);
}

}  // namespace

ParseStep HarmonyReader::step(std::string_view text, bool final, ReplyEventSink& out) {
  return in_header_ ? step_header(text, final, out) : step_body(text, final, out);
}

ParseStep HarmonyReader::step_header(std::string_view text, bool final, ReplyEventSink& out) {
  const size_t p = skip_space(text, 0);
  if (p == text.size()) return {.consumed = p, .status = StepStatus::kNeedMore};
  const std::string_view openers[] = {kStart, kChannel, kRecipient};
  size_t opener_bytes = 0;
  bool undecided = false;
  for (const std::string_view opener : openers) {
    const Match match = match_at(text, p, opener);
    if (match == Match::kYes) opener_bytes = opener.size();
    undecided = undecided || match == Match::kPartial;
  }
  if (opener_bytes == 0 && undecided && !final) {
    return {.consumed = 0, .status = StepStatus::kNeedMore};
  }
  const size_t message = opener_bytes > 0 ? text.find(kMessage, p) : std::string_view::npos;
  if (opener_bytes > 0 && message == std::string_view::npos && !final &&
      text.size() - p <= kMaxHeaderBytes) {
    return {.consumed = 0, .status = StepStatus::kNeedMore};
  }
  if (message == std::string_view::npos) {
    // Text outside any message, or a header that never ends: shown as the answer. The
    // opener is passed as text here, so the body does not stop at it again.
    start_body(Body::kContent);
    const size_t n = run_.emit(text.substr(0, p + opener_bytes), false, ReplyEventKind::kContent, out);
    return {.consumed = n, .status = StepStatus::kProgress};
  }
  const std::string_view header = text.substr(p, message - p);
  std::string_view recipient = header_field(header, kRecipient);
  const std::string_view channel = header_field(header, kChannel);
  if (!recipient.empty() && tools_offered_) {
    if (recipient.starts_with("functions.")) recipient.remove_prefix(10);
    call_name_ = std::string(recipient);
    start_body(Body::kToolCall);
  } else {
    start_body(channel == "analysis" ? Body::kReasoning : Body::kContent);
  }
  return {.consumed = message + kMessage.size(), .status = StepStatus::kProgress};
}

void HarmonyReader::start_body(Body body) {
  in_header_ = false;
  body_ = body;
  arguments_.reset();
  run_.restart();
}

ParseStep HarmonyReader::step_body(std::string_view text, bool final, ReplyEventSink& out) {
  const MarkerHit hit = find_first_marker(text, kBodyEnds);
  const bool ends = hit.pos != std::string_view::npos || final;
  const size_t region_end = hit.pos != std::string_view::npos ? hit.pos
                            : final                          ? text.size()
                                    : text.size() - partial_marker_tail(text, kBodyEnds);
  const size_t consumed = emit_body(text.substr(0, region_end), ends, out);
  if (!ends) return {.consumed = consumed, .status = StepStatus::kNeedMore};
  in_header_ = true;
  const size_t marker_bytes = hit.pos != std::string_view::npos && hit.marker < kNConsumedBodyEnds
                                  ? kBodyEnds[hit.marker].size()
                                  : 0;
  return {.consumed = region_end + marker_bytes, .status = StepStatus::kProgress};
}

size_t HarmonyReader::emit_body(std::string_view text, bool ends, ReplyEventSink& out) {
  switch (body_) {
    case Body::kReasoning: return run_.emit(text, ends, ReplyEventKind::kReasoning, out);
    case Body::kContent: return run_.emit(text, ends, ReplyEventKind::kContent, out);
    case Body::kToolCall: return emit_call(text, ends, out);
  }
  return text.size();
}

size_t HarmonyReader::emit_call(std::string_view text, bool ends, ReplyEventSink& out) {
  size_t begin = 0;
  if (!arguments_) {
    begin = skip_space(text, 0);
    if (begin == text.size()) return text.size();
    if (text[begin] != '{') {
      // Not JSON arguments: the body is shown as text rather than lost.
      body_ = Body::kContent;
      return emit_body(text, ends, out);
    }
    arguments_.emplace(out.begin_tool_call(call_name_));
  }
  const ParseStep step = arguments_->step(text.substr(begin), ends, out);
  if (step.status == StepStatus::kNeedMore) return begin + step.consumed;
  // The arguments ended (or broke off): what else the body holds is text.
  body_ = Body::kContent;
  run_.restart();
  const size_t done = begin + step.consumed;
  return done + emit_body(text.substr(done), ends, out);
}

}  // namespace strata
