// Qwen3-Coder tool calls, arguments as raw text per parameter:
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
//   </tool_call>
// A value becomes JSON by its parameter's schema type: a string stays text, other types
// are parsed. Each parameter is reported once its value is complete.
#include <algorithm>
#include <optional>
#include <string>

#include "model/chat/reply/json_scanner.h"
#include "model/chat/reply/json_text.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kFunctionOpen = "<function=";
constexpr std::string_view kFunctionClose = "</function>";
constexpr std::string_view kParameterOpen = "<parameter=";
constexpr std::string_view kParameterClose = "</parameter>";
constexpr std::string_view kToolCallClose = "</tool_call>";
// Longest function or parameter name taken before the tag is judged malformed.
constexpr size_t kMaxNameBytes = 256;

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// `raw` as the JSON value its schema type asks for; text that does not parse as that
// type stays a string, so nothing the model wrote is lost.
std::string parameter_json(std::string_view raw, ParameterType type) {
  const std::string_view trimmed = trim_trailing_space(raw.substr(skip_space(raw, 0)));
  switch (type) {
    case ParameterType::kString:
      return json_quote(raw);
    case ParameterType::kInteger:
    case ParameterType::kNumber:
      if (is_json_number(trimmed)) return std::string(trimmed);
      break;
    case ParameterType::kBoolean: {
      const std::string word = lowercase(trimmed);
      if (word == "true" || word == "false") return word;
      break;
    }
    case ParameterType::kNull:
      if (trimmed == "null" || trimmed == "None") return "null";
      break;
    case ParameterType::kObject:
    case ParameterType::kArray: {
      const char open = type == ParameterType::kObject ? '{' : '[';
      if (trimmed.starts_with(open) && is_json_value(trimmed)) return std::string(trimmed);
      break;
    }
    case ParameterType::kUnknown:
      if (is_json_value(trimmed)) return std::string(trimmed);
      break;
  }
  return json_quote(raw);
}

// The name in `<tag=name>` whose '=' ends at text[start]; nullopt: need more text.
// An empty name, or one too long or spanning lines, is malformed (empty string view).
std::optional<std::string_view> tag_name(std::string_view text, size_t start, bool final) {
  const size_t close = text.find('>', start);
  const std::string_view name =
      text.substr(start, close == std::string_view::npos ? std::string_view::npos : close - start);
  if (name.find('\n') != std::string_view::npos || name.size() > kMaxNameBytes) {
    return std::string_view();
  }
  if (close == std::string_view::npos) {
    if (final) return std::string_view();
    return std::nullopt;
  }
  return name;
}

class Qwen3CoderSection final : public ToolCallSection {
 public:
  explicit Qwen3CoderSection(const ToolSignatures& tools) : tools_(tools) {}

  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    switch (phase_) {
      case Phase::kFunction: return step_function(text, final, out);
      case Phase::kParameters: return step_parameters(text, final, out);
      case Phase::kClose: return step_close(text, final);
    }
    return {.consumed = 0, .status = StepStatus::kBroken};
  }

 private:
  enum class Phase { kFunction, kParameters, kClose };

  ParseStep step_function(std::string_view text, bool final, ReplyEventSink& out) {
    const size_t p = skip_space(text, 0);
    switch (match_at(text, p, kFunctionOpen)) {
      case Match::kYes: break;
      case Match::kPartial:
        if (!final && p < text.size()) return {.consumed = 0, .status = StepStatus::kNeedMore};
        [[fallthrough]];
      case Match::kNo:
        if (p == text.size() && !final) return {.consumed = 0, .status = StepStatus::kNeedMore};
        return {.consumed = 0, .status = StepStatus::kRejected};
    }
    const size_t name_start = p + kFunctionOpen.size();
    const std::optional<std::string_view> name = tag_name(text, name_start, final);
    if (!name) return {.consumed = 0, .status = StepStatus::kNeedMore};
    if (name->empty()) return {.consumed = 0, .status = StepStatus::kRejected};
    const auto tool = tools_.find(*name);
    signature_ = tool == tools_.end() ? nullptr : &tool->second;
    index_ = out.begin_tool_call(*name);
    out.arguments(index_, "{");
    phase_ = Phase::kParameters;
    return {.consumed = name_start + name->size() + 1, .status = StepStatus::kProgress};
  }

  ParseStep step_parameters(std::string_view text, bool final, ReplyEventSink& out) {
    const size_t p = skip_space(text, 0);
    if (match_at(text, p, kParameterOpen) == Match::kYes) return step_parameter(text, p, final, out);
    if (match_at(text, p, kFunctionClose) == Match::kYes) {
      out.arguments(index_, "}");
      phase_ = Phase::kClose;
      return {.consumed = p + kFunctionClose.size(), .status = StepStatus::kProgress};
    }
    const bool undecided = p == text.size() || match_at(text, p, kParameterOpen) == Match::kPartial ||
                           match_at(text, p, kFunctionClose) == Match::kPartial;
    if (undecided && !final) return {.consumed = 0, .status = StepStatus::kNeedMore};
    // Cut off, or text that is no parameter: the call ends with what it has.
    out.arguments(index_, "}");
    return {.consumed = undecided ? text.size() : p, .status = StepStatus::kDone};
  }

  ParseStep step_parameter(std::string_view text, size_t open, bool final, ReplyEventSink& out) {
    const size_t name_start = open + kParameterOpen.size();
    const std::optional<std::string_view> name = tag_name(text, name_start, final);
    if (!name) return {.consumed = 0, .status = StepStatus::kNeedMore};
    if (name->empty()) {
      out.arguments(index_, "}");
      return {.consumed = open, .status = StepStatus::kBroken};
    }
    const size_t value_start = name_start + name->size() + 1;
    // Models sometimes leave out </parameter>: the next tag ends the value too. A long
    // value (a file's content) is searched only where new text may complete a tag.
    const std::string_view ends[] = {kParameterClose, kParameterOpen, kFunctionClose};
    const size_t search_from = std::max(value_start, value_searched_to_);
    MarkerHit end = find_first_marker(text.substr(search_from), ends);
    if (end.pos == std::string_view::npos && !final) {
      value_searched_to_ = text.size() - std::min(text.size(), kParameterClose.size());
      return {.consumed = 0, .status = StepStatus::kNeedMore};
    }
    value_searched_to_ = 0;
    if (end.pos != std::string_view::npos) end.pos += search_from - value_start;
    std::string_view value = text.substr(value_start, end.pos);
    // The template writes "\n" after the opening tag and before the closing one.
    if (value.starts_with('\n')) value.remove_prefix(1);
    if (value.ends_with('\n')) value.remove_suffix(1);
    emit_parameter(*name, value, out);
    if (end.pos == std::string_view::npos) return {.consumed = text.size(), .status = StepStatus::kProgress};
    const size_t closing = end.marker == 0 ? kParameterClose.size() : 0;
    return {.consumed = value_start + end.pos + closing, .status = StepStatus::kProgress};
  }

  void emit_parameter(std::string_view name, std::string_view value, ReplyEventSink& out) {
    ParameterType type = ParameterType::kUnknown;
    if (signature_ != nullptr) {
      const auto parameter = signature_->parameters.find(name);
      if (parameter != signature_->parameters.end()) type = parameter->second;
    }
    std::string fragment = n_parameters_++ == 0 ? "" : ", ";
    fragment += json_quote(name) + ": " + parameter_json(value, type);
    out.arguments(index_, fragment);
  }

  ParseStep step_close(std::string_view text, bool final) {
    const size_t p = skip_space(text, 0);
    switch (match_at(text, p, kToolCallClose)) {
      case Match::kYes: return {.consumed = p + kToolCallClose.size(), .status = StepStatus::kDone};
      case Match::kPartial:
        if (final) return {.consumed = text.size(), .status = StepStatus::kDone};
        return {.consumed = 0, .status = StepStatus::kNeedMore};
      case Match::kNo: break;
    }
    return {.consumed = 0, .status = StepStatus::kDone};
  }

  const ToolSignatures& tools_;
  const ToolSignature* signature_ = nullptr;
  Phase phase_ = Phase::kFunction;
  size_t index_ = 0;
  size_t n_parameters_ = 0;
  // While a value waits for its end tag: where the search for the tag may resume (bytes
  // into the unconsumed text; no tag starts before it).
  size_t value_searched_to_ = 0;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_qwen3_coder_section(const ToolSignatures& tools) {
  return std::make_unique<Qwen3CoderSection>(tools);
}

}  // namespace strata
