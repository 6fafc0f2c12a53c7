// DeepSeek tool calls, written with fullwidth bars (U+FF5C) and U+2581 in the markers:
//   V3 / R1:  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f
//             ```json
//             {...}
//             ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   V3.1:     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
//             <｜tool▁calls▁end｜>
// The layout is told from what follows the separator: the arguments' brace (V3.1) or
// the function name (V3, whose head is the call type).
#include <optional>

#include "model/chat/reply/arguments_streamer.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kCallBegin = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>";
constexpr std::string_view kCallEnd = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
constexpr std::string_view kCallsEnd = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
constexpr std::string_view kSeparator = "<\uFF5Ctool\u2581sep\uFF5C>";
constexpr std::string_view kFence = "```";
constexpr std::string_view kJsonFence = "```json";
// A call's head (type or name) longer than this without a separator is not markup.
constexpr size_t kMaxHeadBytes = 256;

ParseStep need_more_or(bool final, StepStatus at_end) {
  return {.consumed = 0, .status = final ? at_end : StepStatus::kNeedMore};
}

class DeepSeekSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    switch (phase_) {
      case Phase::kBetween: return step_between(text, final, out);
      case Phase::kArguments: {
        const ParseStep step = streamer_->step(text, final, out);
        if (step.status != StepStatus::kDone) return step;
        phase_ = Phase::kCallEnd;
        return {.consumed = step.consumed, .status = StepStatus::kProgress};
      }
      case Phase::kCallEnd: return step_call_end(text, final);
    }
    return {.consumed = 0, .status = StepStatus::kBroken};
  }

 private:
  enum class Phase { kBetween, kArguments, kCallEnd };

  // What ends a section once its first call was reported; rejects it before.
  StepStatus not_markup() const { return n_calls_ > 0 ? StepStatus::kDone : StepStatus::kRejected; }

  ParseStep step_between(std::string_view text, bool final, ReplyEventSink& out) {
    const size_t p = skip_space(text, 0);
    if (match_at(text, p, kCallBegin) == Match::kYes) {
      return step_call(text, p + kCallBegin.size(), final, out);
    }
    if (match_at(text, p, kCallsEnd) == Match::kYes) {
      return {.consumed = p + kCallsEnd.size(), .status = StepStatus::kDone};
    }
    const bool partial = match_at(text, p, kCallBegin) == Match::kPartial ||
                         match_at(text, p, kCallsEnd) == Match::kPartial;
    if (partial && !final) return {.consumed = 0, .status = StepStatus::kNeedMore};
    // A marker cut off by the end of the generation is still markup: dropped.
    if (partial && n_calls_ > 0) return {.consumed = text.size(), .status = StepStatus::kDone};
    return {.consumed = 0, .status = not_markup()};
  }

  ParseStep step_call(std::string_view text, size_t head_start, bool final, ReplyEventSink& out) {
    const size_t separator = text.find(kSeparator, head_start);
    if (separator == std::string_view::npos) {
      if (text.size() - head_start > kMaxHeadBytes) return {.consumed = 0, .status = not_markup()};
      return need_more_or(final, not_markup());
    }
    const std::string_view head = text.substr(head_start, separator - head_start);
    const size_t after = separator + kSeparator.size();
    const size_t brace = skip_space(text, after);
    if (brace == text.size()) return need_more_or(final, not_markup());
    if (text[brace] == '{') return begin_call(head, brace, out);
    // V3: the name runs to the end of the line, then a fence opens the arguments.
    const size_t line_end = text.find('\n', after);
    if (line_end == std::string_view::npos) {
      if (text.size() - after > kMaxHeadBytes) return {.consumed = 0, .status = not_markup()};
      return need_more_or(final, not_markup());
    }
    size_t q = skip_space(text, line_end);
    switch (match_at(text, q, kJsonFence)) {
      case Match::kYes: q += kJsonFence.size(); break;
      case Match::kPartial: return need_more_or(final, not_markup());
      case Match::kNo:
        if (match_at(text, q, kFence) == Match::kYes) q += kFence.size();
        break;
    }
    q = skip_space(text, q);
    if (q == text.size()) return need_more_or(final, not_markup());
    if (text[q] != '{') return {.consumed = 0, .status = not_markup()};
    return begin_call(text.substr(after, line_end - after), q, out);
  }

  ParseStep begin_call(std::string_view name, size_t arguments, ReplyEventSink& out) {
    name = trim_trailing_space(name.substr(skip_space(name, 0)));
    if (name.empty()) return {.consumed = 0, .status = not_markup()};
    ++n_calls_;
    streamer_.emplace(out.begin_tool_call(name));
    phase_ = Phase::kArguments;
    return {.consumed = arguments, .status = StepStatus::kProgress};
  }

  ParseStep step_call_end(std::string_view text, bool final) {
    size_t p = skip_space(text, 0);
    switch (match_at(text, p, kFence)) {
      case Match::kYes: p = skip_space(text, p + kFence.size()); break;
      case Match::kPartial:
        if (!final) return {.consumed = 0, .status = StepStatus::kNeedMore};
        break;
      case Match::kNo: break;
    }
    switch (match_at(text, p, kCallEnd)) {
      case Match::kYes:
        phase_ = Phase::kBetween;
        return {.consumed = p + kCallEnd.size(), .status = StepStatus::kProgress};
      case Match::kPartial:
        if (final) return {.consumed = text.size(), .status = StepStatus::kDone};
        return {.consumed = 0, .status = StepStatus::kNeedMore};
      case Match::kNo: break;
    }
    return {.consumed = 0, .status = StepStatus::kDone};
  }

  Phase phase_ = Phase::kBetween;
  size_t n_calls_ = 0;
  std::optional<ArgumentsStreamer> streamer_;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_deepseek_section() {
  return std::make_unique<DeepSeekSection>();
}

}  // namespace strata
