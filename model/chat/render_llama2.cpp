// Llama 2 chat, as meta-llama/Llama-2-7b-chat-hf's template
// (tests/data/chat_templates/llama2.jinja):
//   - messages[0], if a system message, is wrapped in <<SYS>>\n...\n<</SYS>>\n\n and
//     prefixed to the first remaining message.
//   - The remaining messages must go user, assistant, user, ... (a non-user role in an
//     assistant slot passes the check and prints nothing).
//   - user: bos + '[INST] ' + content.strip() + ' [/INST]'
//     assistant: ' ' + content.strip() + ' ' + eos
//   - There is no generation prompt: the prompt already ends with [/INST].
#include <optional>
#include <stdexcept>
#include <string_view>

#include "model/chat/family_renderers.h"
#include "model/chat/python_strip.h"

namespace strata {

std::string render_llama2(std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options) {
  if (messages.empty()) throw_no_messages();
  std::optional<std::string_view> system;
  if (messages[0].role == "system") {
    system = messages[0].content;
    messages = messages.subspan(1);
  }
  std::string prompt;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if ((message.role == "user") != (i % 2 == 0)) {
      throw std::invalid_argument(
          "Conversation roles must alternate user/assistant/user/assistant/...");
    }
    std::string content;
    if (i == 0 && system) {
      content = "<<SYS>>\n";
      content += *system;
      content += "\n<</SYS>>\n\n";
    }
    content += message.content;
    // strip() applies to the whole content, <<SYS>> block included.
    if (message.role == "user") {
      prompt += options.bos_token;
      prompt += "[INST] ";
      prompt += python_strip(content);
      prompt += " [/INST]";
    } else if (message.role == "assistant") {
      prompt += ' ';
      prompt += python_strip(content);
      prompt += ' ';
      prompt += options.eos_token;
    }
  }
  return prompt;
}

}  // namespace strata
