// Llama 3.1 / 3.2 / 3.3 tool calls.
//
// Custom tools: the whole reply is a JSON object, {"name": "f", "parameters": {...}}
// (several separated by ';'). Built-in tools follow <|python_tag|>: either such JSON,
// a call of the form brave_search.call(query="...") (keyword arguments as Python
// literals), or Python code for the code interpreter, reported as a call of
// "code_interpreter" with arguments {"code": "..."}.
#include <optional>
#include <string>

#include "model/chat/reply/call_sequence_reader.h"
#include "model/chat/reply/json_text.h"
#include "model/chat/reply/markup_scan.h"
#include "model/chat/reply/tool_call_section.h"

namespace strata {
namespace {

constexpr std::string_view kBuiltinCall = ".call(";
constexpr std::string_view kCodeInterpreter = "code_interpreter";

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The position after the ')' closing the argument list that starts at text[pos],
// skipping Python string literals; npos while it is not written yet.
size_t find_call_close(std::string_view text, size_t pos) {
  char quote = 0;
  int depth = 1;
  for (size_t i = pos; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// A Python string literal at text[pos] as a JSON string; advances `pos` past it.
std::optional<std::string> python_string_json(std::string_view text, size_t& pos) {
  const char quote = text[pos];
  std::string value;
  for (size_t i = pos + 1; i < text.size(); ++i) {
    char c = text[i];
    if (c == quote) {
      pos = i + 1;
      return json_quote(value);
    }
    if (c == '\\' && i + 1 < text.size()) {
      c = text[++i];
      if (c == 'n') c = '\n';
      if (c == 't') c = '\t';
    }
    value += c;
  }
  return std::nullopt;
}

// Keyword arguments of a built-in call, `query="...", count=3`, as a JSON object;
// nullopt for anything else (positional arguments, expressions).
std::optional<std::string> python_kwargs_json(std::string_view args) {
  std::string json = "{";
  size_t p = skip_space(args, 0);
  while (p < args.size()) {
    const size_t name_start = p;
    while (p < args.size() && is_identifier_char(args[p])) ++p;
    if (p == name_start) return std::nullopt;
    const std::string_view name = args.substr(name_start, p - name_start);
    p = skip_space(args, p);
    if (p == args.size() || args[p] != '=') return std::nullopt;
    p = skip_space(args, p + 1);
    if (p == args.size()) return std::nullopt;
    std::string value;
    if (args[p] == '"' || args[p] == '\'') {
      const std::optional<std::string> quoted = python_string_json(args, p);
      if (!quoted) return std::nullopt;
      value = *quoted;
    } else {
      const size_t start = p;
      while (p < args.size() && args[p] != ',' && !is_space(args[p])) ++p;
      const std::string_view word = args.substr(start, p - start);
      if (word == "True" || word == "False" || word == "None") {
        value = word == "True" ? "true" : word == "False" ? "false" : "null";
      } else if (is_json_number(word)) {
        value = std::string(word);
      } else {
        return std::nullopt;
      }
    }
    json += (json.size() > 1 ? ", " : "") + json_quote(name) + ": " + value;
    p = skip_space(args, p);
    if (p < args.size() && args[p] != ',') return std::nullopt;
    if (p < args.size()) p = skip_space(args, p + 1);
  }
  return json + "}";
}

class Llama3JsonSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    return calls_.step(text, final, out);
  }

 private:
  CallSequenceReader calls_{';', false};
};

class Llama3PythonTagSection final : public ToolCallSection {
 public:
  ParseStep step(std::string_view text, bool final, ReplyEventSink& out) override {
    switch (phase_) {
      case Phase::kDecide: return step_decide(text, final, out);
      case Phase::kJson: return calls_.step(text, final, out);
      case Phase::kCode: return step_code(text, final, out);
    }
    return {.consumed = 0, .status = StepStatus::kBroken};
  }

 private:
  enum class Phase { kDecide, kJson, kCode };

  ParseStep step_decide(std::string_view text, bool final, ReplyEventSink& out) {
    const size_t p = skip_space(text, 0);
    if (p == text.size()) {
      return {.consumed = 0, .status = final ? StepStatus::kRejected : StepStatus::kNeedMore};
    }
    if (text[p] == '{') {
      phase_ = Phase::kJson;
      return {.consumed = 0, .status = StepStatus::kProgress};
    }
    size_t q = p;
    while (q < text.size() && (is_identifier_char(text[q]) || text[q] == '.')) ++q;
    // "brave_search.call(": the identifier runs into ".call(", so look for it from each dot.
    const size_t call = text.substr(p, q - p + kBuiltinCall.size()).find(kBuiltinCall);
    if (call != std::string_view::npos && call > 0) {
      return step_builtin(text, p, p + call, final, out);
    }
    const bool undecided = match_at(text, q, kBuiltinCall) == Match::kPartial ||
                           (q == text.size() && text.substr(p).find('.') != std::string_view::npos);
    if ((undecided || q == text.size()) && !final) {
      return {.consumed = 0, .status = StepStatus::kNeedMore};
    }
    return begin_code(p, out);
  }

  ParseStep step_builtin(std::string_view text, size_t name_start, size_t name_end, bool final,
                         ReplyEventSink& out) {
    const size_t args_start = name_end + kBuiltinCall.size();
    const size_t close = find_call_close(text, args_start);
    if (close == std::string_view::npos && !final) {
      return {.consumed = 0, .status = StepStatus::kNeedMore};
    }
    const std::optional<std::string> arguments =
        close == std::string_view::npos
            ? std::nullopt
            : python_kwargs_json(text.substr(args_start, close - 1 - args_start));
    if (!arguments) return begin_code(name_start, out);
    const size_t index = out.begin_tool_call(text.substr(name_start, name_end - name_start));
    out.arguments(index, *arguments);
    return {.consumed = close, .status = StepStatus::kDone};
  }

  ParseStep begin_code(size_t code_start, ReplyEventSink& out) {
    code_index_ = out.begin_tool_call(kCodeInterpreter);
    out.arguments(code_index_, "{\"code\": \"");
    phase_ = Phase::kCode;
    return {.consumed = code_start, .status = StepStatus::kProgress};
  }

  // The code runs to the end of the generation (<|eom_id|> stops it). Trailing
  // whitespace waits until more code follows it.
  ParseStep step_code(std::string_view text, bool final, ReplyEventSink& out) {
    std::string_view ready = trim_trailing_space(text);
    if (!final) ready.remove_suffix(incomplete_utf8_tail(ready));
    out.arguments(code_index_, json_escape(ready));
    if (!final) return {.consumed = ready.size(), .status = StepStatus::kNeedMore};
    out.arguments(code_index_, "\"}");
    return {.consumed = text.size(), .status = StepStatus::kDone};
  }

  Phase phase_ = Phase::kDecide;
  CallSequenceReader calls_{';', false};
  size_t code_index_ = 0;
};

}  // namespace

std::unique_ptr<ToolCallSection> make_llama3_json_section() {
  return std::make_unique<Llama3JsonSection>();
}

std::unique_ptr<ToolCallSection> make_llama3_python_tag_section() {
  return std::make_unique<Llama3PythonTagSection>();
}

}  // namespace strata
