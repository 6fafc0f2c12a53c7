// What a reply parser reports: pieces of a generated reply, in the order the model wrote
// them. Concatenating the text of each kind gives the reply's content, its reasoning and,
// per tool call, the arguments as one JSON object text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class ReplyEventKind {
  kContent,            // text: answer text for the user (message.content)
  kReasoning,          // text: reasoning (reasoning_content)
  kToolCallBegin,      // tool_index, text: the function name
  kToolCallArguments,  // tool_index, text: the next fragment of the arguments' JSON text
};

struct ReplyEvent {
  ReplyEventKind kind = ReplyEventKind::kContent;
  std::string text = {};
  size_t tool_index = 0;  // 0, 1, ... in the order the calls begin (tool call kinds only)

  bool operator==(const ReplyEvent&) const = default;
};

// Collects events as parsing finds them, merging neighbours of one kind (and call), and
// numbers tool calls across the whole reply. Not thread-safe: one per parser.
class ReplyEventSink {
 public:
  void content(std::string_view text);
  void reasoning(std::string_view text);
  // Returns the new call's index.
  size_t begin_tool_call(std::string_view name);
  void arguments(size_t tool_index, std::string_view fragment);

  // The events since the last take().
  std::vector<ReplyEvent> take();

 private:
  void append(ReplyEventKind kind, std::string_view text, size_t tool_index);

  std::vector<ReplyEvent> events_;
  size_t n_tool_calls_ = 0;
};

}  // namespace strata
