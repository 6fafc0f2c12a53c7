// ChatTemplate: a model's chat template, run as Hugging Face transformers runs it.
//
// The template is the Jinja2 text of the GGUF's `tokenizer.chat_template`, parsed once
// when the model loads by Strata's Jinja engine (model/chat/jinja/) and rendered per
// request with the variables transformers' apply_chat_template passes: messages, tools,
// documents, add_generation_prompt, bos_token, eos_token, and the request's
// chat_template_kwargs (enable_thinking, reasoning_effort, ...). The text it renders is
// byte-identical to Jinja2's (tests/model/chat/chat_template_parity_test.cpp).
//
// Immutable once built: render() may run on several threads at once.
#pragma once

#include <ctime>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "model/chat/jinja/jinja_value.h"
#include "model/chat/reply/reply_format.h"

namespace strata {

namespace jinja {
class Template;
}

// What one render reads, beyond the model's own special tokens.
struct ChatTemplateInput {
  jinja::Value messages = jinja::Value::list({});  // list of message dicts, as the API has them
  jinja::Value tools = jinja::Value::none();       // list of tool dicts, or None
  jinja::Value documents = jinja::Value::none();   // list of document dicts, or None
  bool add_generation_prompt = true;
  jinja::ValueDict kwargs = {};  // further variables: enable_thinking, reasoning_effort, ...
  // The time strftime_now() formats (local time). 0: the current time.
  std::time_t now = 0;
};

// A simple text conversation (the command line's `strata run --chat`).
struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool"
  std::string content;  // UTF-8
};

// The messages as the template reads them: a list of {"role", "content"} dicts.
jinja::Value chat_messages_value(std::span<const ChatMessage> messages);

class ChatTemplate {
 public:
  // The ChatML template, assumed where a model has none.
  static std::string_view chatml_source();

  // Parses `source`. bos_token and eos_token are the model's special-token text ("" where
  // it has none). Throws std::runtime_error naming the construct and the template line
  // where the template is not one Strata can run.
  ChatTemplate(std::string source, std::string bos_token, std::string eos_token);
  ~ChatTemplate();
  ChatTemplate(const ChatTemplate&) = delete;
  ChatTemplate& operator=(const ChatTemplate&) = delete;

  // The prompt text. Throws std::invalid_argument with a message a user can act on where
  // the template rejects the conversation: the template's own raise_exception text (e.g.
  // "Conversation roles must alternate user/assistant/user/assistant/..."), or Jinja's
  // error ("'dict object' has no attribute 'content'") prefixed with what failed.
  std::string render(const ChatTemplateInput& input) const;

  const std::string& source() const { return source_; }
  // How the model marks reasoning and tool calls in its replies, read from the template.
  const ReplyFormat& reply_format() const { return reply_format_; }

 private:
  std::string source_;
  std::string bos_token_;
  std::string eos_token_;
  std::unique_ptr<jinja::Template> template_;
  ReplyFormat reply_format_;
};

}  // namespace strata
