#include "model/chat/reply/call_object_reader.h"

#include <string>

#include "model/chat/reply/json_scanner.h"
#include "model/chat/reply/json_text.h"
#include "model/chat/reply/markup_scan.h"

namespace strata {
namespace {

// What the text so far says about the call, read from the object's start each time.
struct CallHead {
  enum class Kind { kNeedMore, kRejected, kStream, kWhole } kind = Kind::kRejected;
  std::string name = {};
  size_t arguments_pos = 0;  // kStream: the arguments object's opening brace
  std::string arguments = {};  // the arguments' JSON text, where read whole
  size_t end = 0;            // kWhole: after the object's closing brace
};

// Length of the complete JSON value at text[pos]; 0 while it may go on, npos if invalid.
size_t complete_value_length(std::string_view text, size_t pos, bool final) {
  JsonScanner scanner;
  const size_t n = scanner.scan(text.substr(pos));
  if (final || pos + n < text.size()) scanner.finish();
  switch (scanner.state()) {
    case JsonScanner::State::kComplete: return n;
    case JsonScanner::State::kInvalid: return std::string_view::npos;
    case JsonScanner::State::kScanning: break;
  }
  return final ? std::string_view::npos : 0;
}

// Arguments given as a string holding a JSON object (some fine-tunes write them so).
std::optional<std::string> arguments_from_string(const std::string& decoded) {
  const size_t start = skip_space(decoded, 0);
  if (start == decoded.size() || decoded[start] != '{' || !is_json_value(decoded)) {
    return std::nullopt;
  }
  return std::string(trim_trailing_space(std::string_view(decoded).substr(start)));
}

enum class MemberRead { kRead, kNeedMore, kRejected, kArgumentsBegin };

// Reads the value of member `key` at text[pos] into `head`, advancing `pos` past it.
// kArgumentsBegin: the arguments object starts at `pos` and the name is known.
MemberRead read_member(std::string_view key, std::string_view text, size_t& pos, bool final,
                       CallHead& head) {
  if (key == "name") {
    const JsonStringRead name = read_json_string(text, pos);
    if (name.status == JsonStringRead::Status::kIncomplete) return MemberRead::kNeedMore;
    if (name.status == JsonStringRead::Status::kInvalid || name.value.empty()) {
      return MemberRead::kRejected;
    }
    head.name = name.value;
    pos = name.end;
    return MemberRead::kRead;
  }
  const bool is_arguments = key == "arguments" || key == "parameters";
  if (is_arguments && text[pos] == '{' && !head.name.empty()) return MemberRead::kArgumentsBegin;
  if (is_arguments && text[pos] == '"') {
    const JsonStringRead value = read_json_string(text, pos);
    if (value.status == JsonStringRead::Status::kIncomplete) return MemberRead::kNeedMore;
    if (value.status == JsonStringRead::Status::kInvalid) return MemberRead::kRejected;
    const std::optional<std::string> arguments = arguments_from_string(value.value);
    if (!arguments) return MemberRead::kRejected;
    head.arguments = *arguments;
    pos = value.end;
    return MemberRead::kRead;
  }
  // Arguments before the name are kept whole; "type" and "id" are skipped. Any other
  // key means a JSON reply that is not a call.
  if (!(is_arguments && text[pos] == '{') && key != "type" && key != "id") {
    return MemberRead::kRejected;
  }
  const size_t n = complete_value_length(text, pos, final);
  if (n == 0) return MemberRead::kNeedMore;
  if (n == std::string_view::npos) return MemberRead::kRejected;
  if (is_arguments) head.arguments = std::string(text.substr(pos, n));
  pos += n;
  return MemberRead::kRead;
}

CallHead read_head(std::string_view text, bool final) {
  using Kind = CallHead::Kind;
  const CallHead need_more{.kind = final ? Kind::kRejected : Kind::kNeedMore};
  const CallHead rejected{.kind = Kind::kRejected};
  size_t p = skip_space(text, 0);
  if (p == text.size()) return need_more;
  if (text[p] != '{') return rejected;
  CallHead head;
  for (bool first = true;; first = false) {
    p = skip_space(text, first ? p + 1 : p);
    if (p == text.size()) return need_more;
    if (text[p] == '}') {
      head.end = p + 1;
      break;
    }
    if (!first) {
      if (text[p] != ',') return rejected;
      p = skip_space(text, p + 1);
    }
    const JsonStringRead key = read_json_string(text, p);
    if (key.status == JsonStringRead::Status::kIncomplete) return need_more;
    if (key.status == JsonStringRead::Status::kInvalid) return rejected;
    p = skip_space(text, key.end);
    if (p == text.size()) return need_more;
    if (text[p] != ':') return rejected;
    p = skip_space(text, p + 1);
    if (p == text.size()) return need_more;
    switch (read_member(key.value, text, p, final, head)) {
      case MemberRead::kRead: break;
      case MemberRead::kNeedMore: return need_more;
      case MemberRead::kRejected: return rejected;
      case MemberRead::kArgumentsBegin:
        head.kind = Kind::kStream;
        head.arguments_pos = p;
        return head;
    }
  }
  if (head.name.empty()) return rejected;
  head.kind = Kind::kWhole;
  if (head.arguments.empty()) head.arguments = "{}";
  return head;
}

// After the arguments: further members, then the closing brace. A model that forgets the
// brace has still written a whole call, so anything unexpected ends the object here.
ParseStep read_tail(std::string_view text, bool final) {
  size_t p = 0;
  while (true) {
    p = skip_space(text, p);
    if (p == text.size()) {
      return {.consumed = final ? p : 0, .status = final ? StepStatus::kDone : StepStatus::kNeedMore};
    }
    if (text[p] == '}') return {.consumed = p + 1, .status = StepStatus::kDone};
    if (text[p] != ',') return {.consumed = p, .status = StepStatus::kDone};
    const size_t member = p;
    const JsonStringRead key = read_json_string(text, skip_space(text, p + 1));
    if (key.status == JsonStringRead::Status::kInvalid) {
      return {.consumed = member, .status = StepStatus::kDone};
    }
    p = key.status == JsonStringRead::Status::kComplete ? skip_space(text, key.end) : text.size();
    if (p < text.size() && text[p] != ':') return {.consumed = member, .status = StepStatus::kDone};
    p = p < text.size() ? skip_space(text, p + 1) : p;
    const size_t n = p < text.size() ? complete_value_length(text, p, final) : 0;
    if (n == std::string_view::npos) return {.consumed = member, .status = StepStatus::kDone};
    if (n == 0) {
      return {.consumed = final ? member : 0,
              .status = final ? StepStatus::kDone : StepStatus::kNeedMore};
    }
    p += n;
  }
}

}  // namespace

ParseStep CallObjectReader::step(std::string_view text, bool final, ReplyEventSink& out) {
  switch (phase_) {
    case Phase::kHead:
      return step_head(text, final, out);
    case Phase::kArguments: {
      const ParseStep step = streamer_->step(text, final, out);
      if (step.status != StepStatus::kDone) return step;
      phase_ = Phase::kTail;
      return {.consumed = step.consumed, .status = StepStatus::kProgress};
    }
    case Phase::kTail:
      return read_tail(text, final);
  }
  return {.consumed = 0, .status = StepStatus::kBroken};
}

ParseStep CallObjectReader::step_head(std::string_view text, bool final, ReplyEventSink& out) {
  CallHead head = read_head(text, final);
  switch (head.kind) {
    case CallHead::Kind::kNeedMore: return {.consumed = 0, .status = StepStatus::kNeedMore};
    case CallHead::Kind::kRejected: return {.consumed = 0, .status = StepStatus::kRejected};
    case CallHead::Kind::kWhole: {
      const size_t index = out.begin_tool_call(head.name);
      out.arguments(index, head.arguments);
      phase_ = Phase::kTail;  // committed; nothing of the object is left
      return {.consumed = head.end, .status = StepStatus::kDone};
    }
    case CallHead::Kind::kStream:
      streamer_.emplace(out.begin_tool_call(head.name));
      phase_ = Phase::kArguments;
      return {.consumed = head.arguments_pos, .status = StepStatus::kProgress};
  }
  return {.consumed = 0, .status = StepStatus::kRejected};
}

}  // namespace strata
