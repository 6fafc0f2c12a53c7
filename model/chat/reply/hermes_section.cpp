// Hermes 2 Pro / Qwen2.5 / Qwen3 tool calls:
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
// Parallel calls are consecutive sections; the reply parser starts one per <tool_call>.
#include "model/chat/reply/call_object_reader.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kCloseTag = "</tool_call>";

class HermesSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    if (!call_done_) {
      const ParseStep step = reader_.step(text, final, out);
      if (step.status != StepStatus::kDone) return step;
      call_done_ = true;
      return {.consumed = step.consumed, .status = StepStatus::kProgress};
    }
    // The closing tag; a model that leaves it out has still made its call.
    const size_t p = skip_space(text, 0);
    switch (match_at(text, p, kCloseTag)) {
      case Match::kYes: return {.consumed = p + kCloseTag.size(), .status = StepStatus::kDone};
      case Match::kPartial:
        // Cut off inside the tag at the end of the generation: still markup, dropped.
        if (final) return {.consumed = text.size(), .status = StepStatus::kDone};
        return {.consumed = 0, .status = StepStatus::kNeedMore};
      case Match::kNo: break;
    }
    return {.consumed = 0, .status = StepStatus::kDone};
  }

 private:
  CallObjectReader reader_;
  bool call_done_ = false;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_hermes_section() {
  return std::make_unique<HermesSection>();
}

}  // namespace strata
