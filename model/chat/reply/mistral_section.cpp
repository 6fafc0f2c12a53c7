// Mistral tool calls, after the [TOOL_CALLS] control token:
//   v3 (Mistral 7B v0.3, Nemo):   [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]
//   v11+ (Small 3.2, Magistral):  [TOOL_CALLS]f[ARGS]{...}   (one marker per call)
// Some versions put [CALL_ID]id between the name and [ARGS]; the id is the caller's to
// assign, so it is skipped.
#include <optional>

#include "model/chat/reply/arguments_streamer.h"
#include "model/chat/reply/call_sequence_reader.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

size_t skip_name(std::string_view text, size_t pos) {
  while (pos < text.size() && is_name_char(text[pos])) ++pos;
  return pos;
}

class MistralSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    switch (phase_) {
      case Phase::kStart: return step_start(text, final, out);
      case Phase::kList: return list_.step(text, final, out);
      case Phase::kArguments: return streamer_->step(text, final, out);
    }
    return {.consumed = 0, .status = StepStatus::kBroken};
  }

 private:
  enum class Phase { kStart, kList, kArguments };

  ParseStep step_start(std::string_view text, bool final, ReplyEventSink& out) {
    const ParseStep need_more{.consumed = 0,
                              .status = final ? StepStatus::kRejected : StepStatus::kNeedMore};
    const ParseStep rejected{.consumed = 0, .status = StepStatus::kRejected};
    const size_t p = skip_space(text, 0);
    if (p == text.size()) return need_more;
    if (text[p] == '[') {
      phase_ = Phase::kList;
      return {.consumed = 0, .status = StepStatus::kProgress};
    }
    const size_t name_end = skip_name(text, p);
    if (name_end == text.size()) return need_more;
    if (name_end == p) return rejected;
    size_t q = name_end;
    switch (match_at(text, q, kCallId)) {
      case Match::kYes: q = skip_name(text, q + kCallId.size()); break;
      case Match::kPartial: return need_more;
      case Match::kNo: break;
    }
    switch (match_at(text, q, kArgs)) {
      case Match::kYes: break;
      case Match::kPartial: return need_more;
      case Match::kNo: return rejected;
    }
    const size_t arguments = skip_space(text, q + kArgs.size());
    if (arguments == text.size()) return need_more;
    if (text[arguments] != '{') return rejected;
    streamer_.emplace(out.begin_tool_call(text.substr(p, name_end - p)));
    phase_ = Phase::kArguments;
    return {.consumed = arguments, .status = StepStatus::kProgress};
  }

  Phase phase_ = Phase::kStart;
  CallSequenceReader list_{',', true};
  std::optional<ArgumentsStreamer> streamer_;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_mistral_section() {
  return std::make_unique<MistralSection>();
}

}  // namespace strata
