// Tool calls of models whose template offers tools in no markup of its own: the reply
// is JSON, perhaps in a ```json fence, in one of the shapes such models are prompted
// with:
//   {"name": "f", "arguments": {...}}
//   {"tool_call": {"name": "f", "arguments": {...}}}
//   {"tool_calls": [{"name": "f", "arguments": {...}}, ...]}
#include <optional>

#include "model/chat/reply/call_sequence_reader.h"
#include "model/chat/reply/json_text.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kFence = "```";
constexpr std::string_view kJsonFence = "```json";

class GenericJsonSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    switch (phase_) {
      case Phase::kStart: return step_start(text, final, out);
      case Phase::kCalls: {
        const ParseStep step = calls_->step(text, final, out);
        if (step.status != StepStatus::kDone) return step;
        phase_ = Phase::kClose;
        return {.consumed = step.consumed, .status = StepStatus::kProgress};
      }
      case Phase::kClose: return step_close(text, final);
    }
    return {.consumed = 0, .status = StepStatus::kBroken};
  }

 private:
  enum class Phase { kStart, kCalls, kClose };

  // Finds where the calls start (after the fence and the wrapper's key) and tries them;
  // nothing is consumed until the first call is reported.
  ParseStep step_start(std::string_view text, bool final, ReplyEventSink& out) {
    const ParseStep need_more{.consumed = 0,
                              .status = final ? StepStatus::kRejected : StepStatus::kNeedMore};
    const ParseStep rejected{.consumed = 0, .status = StepStatus::kRejected};
    size_t p = skip_space(text, 0);
    fenced_ = false;
    if (match_at(text, p, kJsonFence) == Match::kYes) {
      p += kJsonFence.size();
      fenced_ = true;
    } else if (match_at(text, p, kFence) == Match::kYes) {
      if (match_at(text, p, kJsonFence) == Match::kPartial) return need_more;
      p += kFence.size();
      fenced_ = true;
    } else if (match_at(text, p, kFence) == Match::kPartial) {
      return need_more;
    }
    p = skip_space(text, p);
    if (p == text.size()) return need_more;
    if (text[p] != '{') return rejected;
    const size_t key_start = skip_space(text, p + 1);
    const JsonStringRead key = read_json_string(text, key_start);
    if (key.status == JsonStringRead::Status::kIncomplete) return need_more;
    size_t calls_start = p;
    wrapped_ = key.status == JsonStringRead::Status::kComplete &&
               (key.value == "tool_calls" || key.value == "tool_call");
    if (wrapped_) {
      const size_t colon = skip_space(text, key.end);
      if (colon == text.size()) return need_more;
      if (text[colon] != ':') return rejected;
      calls_start = colon + 1;
    }
    calls_.emplace(key.value == "tool_calls" ? ',' : ';', key.value == "tool_calls");
    const ParseStep step = calls_->step(text.substr(calls_start), final, out);
    if (!calls_->committed()) {
      return step.status == StepStatus::kNeedMore ? need_more : rejected;
    }
    phase_ = step.status == StepStatus::kDone ? Phase::kClose : Phase::kCalls;
    const StepStatus status =
        step.status == StepStatus::kBroken ? StepStatus::kBroken : StepStatus::kProgress;
    return {.consumed = calls_start + step.consumed, .status = status};
  }

  // The wrapper's closing brace and the closing fence, where they were opened.
  ParseStep step_close(std::string_view text, bool final) {
    size_t p = skip_space(text, 0);
    if (wrapped_) {
      if (p == text.size()) return {.consumed = 0, .status = final ? StepStatus::kDone : StepStatus::kNeedMore};
      if (text[p] != '}') return {.consumed = 0, .status = StepStatus::kDone};
      p = skip_space(text, p + 1);
    }
    if (fenced_) {
      switch (match_at(text, p, kFence)) {
        case Match::kYes: return {.consumed = p + kFence.size(), .status = StepStatus::kDone};
        case Match::kPartial:
          if (final) return {.consumed = text.size(), .status = StepStatus::kDone};
          return {.consumed = 0, .status = StepStatus::kNeedMore};
        case Match::kNo: break;
      }
    }
    return {.consumed = wrapped_ ? p : 0, .status = StepStatus::kDone};
  }

  Phase phase_ = Phase::kStart;
  bool fenced_ = false;
  bool wrapped_ = false;
  std::optional<CallSequenceReader> calls_;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_generic_json_section() {
  return std::make_unique<GenericJsonSection>();
}

}  // namespace strata
