#include "model/chat/reply/arguments_streamer.h"

namespace strata {

ParseStep ArgumentsStreamer::step(std::string_view text, bool final, ReplyEventSink& out) {
  const size_t n = scanner_.scan(text);
  out.arguments(tool_index_, text.substr(0, n));
  switch (scanner_.state()) {
    case JsonScanner::State::kComplete: return {.consumed = n, .status = StepStatus::kDone};
    case JsonScanner::State::kInvalid: return {.consumed = n, .status = StepStatus::kBroken};
    case JsonScanner::State::kScanning: break;
  }
  return {.consumed = n, .status = final ? StepStatus::kBroken : StepStatus::kNeedMore};
}

}  // namespace strata
