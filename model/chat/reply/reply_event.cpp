#include "model/chat/reply/reply_event.h"

#include <utility>

namespace strata {

void ReplyEventSink::content(std::string_view text) {
  append(ReplyEventKind::kContent, text, 0);
}

void ReplyEventSink::reasoning(std::string_view text) {
  append(ReplyEventKind::kReasoning, text, 0);
}

size_t ReplyEventSink::begin_tool_call(std::string_view name) {
  const size_t index = n_tool_calls_++;
  events_.push_back({.kind = ReplyEventKind::kToolCallBegin,
                     .text = std::string(name),
                     .tool_index = index});
  return index;
}

void ReplyEventSink::arguments(size_t tool_index, std::string_view fragment) {
  append(ReplyEventKind::kToolCallArguments, fragment, tool_index);
}

std::vector<ReplyEvent> ReplyEventSink::take() {
  return std::exchange(events_, {});
}

void ReplyEventSink::append(ReplyEventKind kind, std::string_view text, size_t tool_index) {
  if (text.empty()) return;
  if (!events_.empty() && events_.back().kind == kind &&
      events_.back().tool_index == tool_index) {
    events_.back().text.append(text);
    return;
  }
  events_.push_back({.kind = kind, .text = std::string(text), .tool_index = tool_index});
}

}  // namespace strata
