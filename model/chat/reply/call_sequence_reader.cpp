#include "model/chat/reply/call_sequence_reader.h"

#include "model/chat/reply/markup_scan.h"

namespace strata {

ParseStep CallSequenceReader::step(std::string_view text, bool final, ReplyEventSink& out) {
  switch (phase_) {
    case Phase::kOpen: {
      if (!bracketed_) return step_next(text, 0, final, out);
      const size_t p = skip_space(text, 0);
      if (p == text.size()) {
        return {.consumed = 0, .status = final ? StepStatus::kRejected : StepStatus::kNeedMore};
      }
      if (text[p] != '[') return {.consumed = 0, .status = StepStatus::kRejected};
      return step_next(text, p + 1, final, out);
    }
    case Phase::kCall: {
      const ParseStep step = reader_.step(text, final, out);
      if (step.status != StepStatus::kDone) return step;
      phase_ = Phase::kBetween;
      reader_ = CallObjectReader();
      return {.consumed = step.consumed, .status = StepStatus::kProgress};
    }
    case Phase::kBetween:
      return step_between(text, final, out);
  }
  return {.consumed = 0, .status = StepStatus::kBroken};
}

ParseStep CallSequenceReader::step_next(std::string_view text, size_t start, bool final,
                                        ReplyEventSink& out) {
  const ParseStep step = reader_.step(text.substr(start), final, out);
  if (!reader_.committed()) {
    if (step.status == StepStatus::kNeedMore) return {.consumed = 0, .status = step.status};
    // Not a call: the first one rejects the sequence; a later one ends it before its
    // separator, which stays text.
    return {.consumed = 0, .status = committed_ ? StepStatus::kDone : StepStatus::kRejected};
  }
  committed_ = true;
  if (step.status == StepStatus::kDone) {
    phase_ = Phase::kBetween;
    reader_ = CallObjectReader();
    return {.consumed = start + step.consumed, .status = StepStatus::kProgress};
  }
  phase_ = Phase::kCall;
  const StepStatus status =
      step.status == StepStatus::kBroken ? StepStatus::kBroken : StepStatus::kProgress;
  return {.consumed = start + step.consumed, .status = status};
}

ParseStep CallSequenceReader::step_between(std::string_view text, bool final,
                                           ReplyEventSink& out) {
  const size_t p = skip_space(text, 0);
  if (p == text.size()) {
    return {.consumed = 0, .status = final ? StepStatus::kDone : StepStatus::kNeedMore};
  }
  if (bracketed_ && text[p] == ']') return {.consumed = p + 1, .status = StepStatus::kDone};
  if (text[p] == separator_) return step_next(text, p + 1, final, out);
  return {.consumed = 0, .status = StepStatus::kDone};
}

}  // namespace strata
