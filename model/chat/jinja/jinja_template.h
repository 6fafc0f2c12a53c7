// A Hugging Face chat template (the Jinja2 text in a GGUF's tokenizer.chat_template),
// parsed once when the model loads and rendered per request, byte for byte as
// transformers' apply_chat_template renders it with Python's Jinja2: an immutable
// sandbox with trim_blocks, lstrip_blocks and loop controls, transformers' tojson, the
// raise_exception and strftime_now globals, and the {% generation %} tag.
//
// Usage:
//   const jinja::Template chat_template(gguf_chat_template);   // throws ParseError
//   std::string prompt = chat_template.render(
//       jinja::Value::dict({{"messages", messages}, {"add_generation_prompt", true},
//                           {"bos_token", "<s>"}, {"eos_token", "</s>"}}),
//       jinja::RenderTime::now());
#pragma once

#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_value.h"

namespace strata::jinja {

struct Stmt;

// The wall-clock time strftime_now() formats: a broken-down local time, so a render can
// be repeated exactly (tests) or take the server's clock (RenderTime::now()).
struct RenderTime {
  std::tm local_time{};

  // The current time in the process's local zone.
  static RenderTime now();
};

class Template {
 public:
  // Parses `source`. Throws ParseError, naming the construct and line, for a template
  // that is malformed or uses a filter, test or tag this engine lacks.
  explicit Template(std::string_view source);

  // Renders with `variables` (a dict: messages, tools, add_generation_prompt, bos_token,
  // ...). Throws TemplateRaised where the template calls raise_exception, RenderError for
  // any other failure. Const and thread-safe: any number of threads may render at once.
  std::string render(const Value& variables, const RenderTime& now) const;

 private:
  std::shared_ptr<const std::vector<Stmt>> body_;
};

}  // namespace strata::jinja
