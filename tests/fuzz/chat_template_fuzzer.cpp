// libFuzzer target for the chat template engine (model/chat/jinja/): any template text is
// parsed, and any conversation is rendered with it, as a model's tokenizer.chat_template
// is parsed at load and rendered per request.
//
// Input (FuzzedDataProvider): flags, the template, bos and eos text, then messages until
// the input runs out. Each message is a dict with a role (a known one or arbitrary text)
// and content (text, None, a list of text parts, or an arbitrary value); some carry tool
// calls or reasoning_content. Flags choose add_generation_prompt, enable_thinking, tools
// and an arbitrary extra variable.
//
// Promises checked:
//  - parsing and rendering throw nothing but jinja::ParseError, TemplateRaised and
//    RenderError (anything else escapes and libFuzzer reports it), and never crash,
//    hang or leak (the sanitizers and libFuzzer's -timeout and -rss_limit_mb);
//  - every error carries a message;
//  - a template renders the same text twice (rendering is a pure function of the input);
//  - detect_reply_format reads any template.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_template.h"
#include "model/chat/jinja/jinja_value.h"
#include "model/chat/reply/reply_format.h"
#include "model/tokenizer/utf8.h"

namespace strata {
namespace {

using jinja::Value;
using jinja::ValueDict;
using jinja::ValueList;

constexpr size_t kMaxTemplateBytes = 8192;
constexpr size_t kMaxTextBytes = 256;
constexpr size_t kMaxMessages = 32;
constexpr int kMaxValueDepth = 3;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "chat_template_fuzzer: %s\n", what.c_str());
  std::abort();
}

// Message text comes from JSON, which is valid UTF-8.
std::string text(FuzzedDataProvider& input, size_t max_bytes = kMaxTextBytes) {
  return utf8::sanitize(input.ConsumeRandomLengthString(max_bytes));
}

// Any value a request's JSON could hold: none, bool, int, float, string, list, dict.
Value any_value(FuzzedDataProvider& input, int depth) {
  const auto kind = input.ConsumeIntegralInRange<int>(0, depth >= kMaxValueDepth ? 4 : 6);
  switch (kind) {
    case 0:
      return Value::none();
    case 1:
      return Value(input.ConsumeBool());
    case 2:
      return Value(input.ConsumeIntegral<int64_t>());
    case 3:
      return Value(input.ConsumeFloatingPoint<double>());
    case 4:
      return Value(text(input));
    case 5: {
      ValueList items;
      const auto n = input.ConsumeIntegralInRange<int>(0, 4);
      for (int i = 0; i < n; ++i) items.push_back(any_value(input, depth + 1));
      return Value::list(std::move(items));
    }
    default: {
      ValueDict items;
      const auto n = input.ConsumeIntegralInRange<int>(0, 4);
      for (int i = 0; i < n; ++i) items.emplace_back(text(input, 16), any_value(input, depth + 1));
      return Value::dict(std::move(items));
    }
  }
}

constexpr std::array<std::string_view, 6> kRoles = {"system", "user",      "assistant",
                                                    "tool",   "developer", "ipython"};

// The content as chat_messages.h shapes it: text, None, text parts, or anything.
Value content(FuzzedDataProvider& input, uint8_t pick) {
  switch ((pick >> 3) & 3) {
    case 0:
    case 1:
      return Value(text(input));
    case 2:
      return Value::none();
    default:
      return input.ConsumeBool()
                 ? Value::list({Value::dict({{"type", "text"}, {"text", text(input)}})})
                 : any_value(input, 1);
  }
}

Value tool_calls(FuzzedDataProvider& input) {
  ValueDict function = {{"name", text(input, 32)}, {"arguments", any_value(input, 1)}};
  return Value::list({Value::dict({{"id", text(input, 16)},
                                   {"type", "function"},
                                   {"function", Value::dict(std::move(function))}})});
}

// Bits of `pick`: 0-2 the role (7: arbitrary text), 3-4 the content, 5 tool calls,
// 6 reasoning_content, 7 a tool_call_id.
Value message(FuzzedDataProvider& input) {
  const auto pick = input.ConsumeIntegral<uint8_t>();
  const size_t role_index = pick & 7;
  ValueDict fields;
  fields.emplace_back(
      "role", role_index < kRoles.size() ? Value(kRoles[role_index]) : Value(text(input, 16)));
  fields.emplace_back("content", content(input, pick));
  if (pick & 0x20) fields.emplace_back("tool_calls", tool_calls(input));
  if (pick & 0x40) fields.emplace_back("reasoning_content", text(input));
  if (pick & 0x80) fields.emplace_back("tool_call_id", text(input, 16));
  return Value::dict(std::move(fields));
}

Value tools(FuzzedDataProvider& input) {
  ValueDict parameters = {{"type", "object"}, {"properties", any_value(input, 1)}};
  ValueDict function = {{"name", text(input, 32)},
                        {"description", text(input)},
                        {"parameters", Value::dict(std::move(parameters))}};
  return Value::list(
      {Value::dict({{"type", "function"}, {"function", Value::dict(std::move(function))}})});
}

// The error's message; aborts where it has none (a user would see an empty error).
template <typename Error>
void check_message(const Error& error, std::string_view what) {
  if (std::string_view(error.what()).empty()) fail(std::string(what) + " without a message");
}

std::optional<std::string> render(const jinja::Template& chat_template, const Value& variables,
                                  const jinja::RenderTime& time) {
  try {
    return chat_template.render(variables, time);
  } catch (const jinja::TemplateRaised&) {
    // The template's own raise_exception text, which may well be empty.
  } catch (const jinja::RenderError& e) {
    check_message(e, "a RenderError");
  }
  return std::nullopt;
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  FuzzedDataProvider input(data, size);
  const auto flags = input.ConsumeIntegral<uint8_t>();
  const std::string source = input.ConsumeRandomLengthString(kMaxTemplateBytes);
  ValueDict variables = {{"bos_token", text(input, 16)}, {"eos_token", text(input, 16)}};
  variables.emplace_back("add_generation_prompt", (flags & 1) != 0);
  variables.emplace_back("enable_thinking", (flags & 2) != 0);
  variables.emplace_back("tools", (flags & 4) ? tools(input) : Value::none());
  variables.emplace_back("documents", Value::none());
  if (flags & 8) variables.emplace_back(text(input, 16), any_value(input, 0));
  ValueList messages;
  while (input.remaining_bytes() > 0 && messages.size() < kMaxMessages) {
    messages.push_back(message(input));
  }
  variables.emplace_back("messages", Value::list(std::move(messages)));

  (void)detect_reply_format(source);
  std::optional<jinja::Template> chat_template;
  try {
    chat_template.emplace(source);
  } catch (const jinja::ParseError& e) {
    check_message(e, "a ParseError");
    return 0;
  }
  // A fixed time: strftime_now() must not make two renders differ.
  std::tm local_time{};
  local_time.tm_year = 126;
  local_time.tm_mon = 2;
  local_time.tm_mday = 14;
  const jinja::RenderTime time{.local_time = local_time};
  const Value all = Value::dict(std::move(variables));
  const std::optional<std::string> first = render(*chat_template, all, time);
  if (first && render(*chat_template, all, time) != first) {
    fail("the same template and variables rendered two different texts");
  }
  return 0;
}
