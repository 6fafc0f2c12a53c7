#include "model/chat/chat_template.h"

#include <stdexcept>

#include "common/str_cat.h"
#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_template.h"

namespace strata {
namespace {

// The plain ChatML template (as OpenHermes and many fine-tunes ship it).
constexpr std::string_view kChatmlSource =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}";

}  // namespace

jinja::Value chat_messages_value(std::span<const ChatMessage> messages) {
  jinja::ValueList list;
  list.reserve(messages.size());
  for (const ChatMessage& message : messages) {
    list.push_back(jinja::Value::dict({{"role", jinja::Value(message.role)},
                                       {"content", jinja::Value(message.content)}}));
  }
  return jinja::Value::list(std::move(list));
}

std::string_view ChatTemplate::chatml_source() { return kChatmlSource; }

ChatTemplate::ChatTemplate(std::string source, std::string bos_token, std::string eos_token)
    : source_(std::move(source)),
      bos_token_(std::move(bos_token)),
      eos_token_(std::move(eos_token)),
      template_(std::make_unique<jinja::Template>(source_)),
      reply_format_(detect_reply_format(source_)) {}

ChatTemplate::~ChatTemplate() = default;

std::string ChatTemplate::render(const ChatTemplateInput& input) const {
  // transformers' apply_chat_template: the special tokens, then the call's kwargs, which
  // may override them.
  jinja::ValueDict variables = {
      {"messages", input.messages},
      {"tools", input.tools},
      {"documents", input.documents},
      {"add_generation_prompt", jinja::Value(input.add_generation_prompt)},
      {"bos_token", jinja::Value(bos_token_)},
      {"eos_token", jinja::Value(eos_token_)},
  };
  for (const auto& [name, value] : input.kwargs) {
    bool replaced = false;
    for (auto& [existing, old_value] : variables) {
      if (existing == name) {
        old_value = value;
        replaced = true;
      }
    }
    if (!replaced) variables.emplace_back(name, value);
  }
  jinja::RenderTime now = jinja::RenderTime::now();
  if (input.now != 0) localtime_r(&input.now, &now.local_time);
  try {
    return template_->render(jinja::Value::dict(std::move(variables)), now);
  } catch (const jinja::TemplateRaised& e) {
    throw std::invalid_argument(e.what());
  } catch (const jinja::Error& e) {
    throw std::invalid_argument(str_cat("the chat template failed at line ", e.line(), ": ",
                                        e.what()));
  }
}

}  // namespace strata
