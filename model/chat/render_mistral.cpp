// Mistral, as mistralai/Mistral-7B-Instruct-v0.3's template
// (tests/data/chat_templates/mistral.jinja), without tools:
//   - messages[0], if a system message, is set aside and printed before the content of
//     the last message, if that is a user turn (otherwise it is dropped).
//   - All the remaining user/assistant turns are checked to alternate first (tool turns
//     skipped); then, in order: user '[INST] ' + content + '[/INST]', assistant
//     ' ' + content|trim + eos; a tool turn fails for want of a tool call id; any other
//     role fails.
//   - bos opens the prompt; there is no generation prompt.
#include <optional>
#include <stdexcept>
#include <string_view>

#include "model/chat/family_renderers.h"
#include "model/chat/python_strip.h"

namespace strata {
namespace {

bool is_tool_role(std::string_view role) { return role == "tool" || role == "tool_results"; }

}  // namespace

std::string render_mistral(std::span<const ChatMessage> messages,
                           const ChatRenderOptions& options) {
  if (messages.empty()) throw_no_messages();
  std::optional<std::string_view> system;
  if (messages[0].role == "system") {
    system = messages[0].content;
    messages = messages.subspan(1);
  }
  size_t n_turns = 0;  // user/assistant slots seen, tool turns skipped
  for (const ChatMessage& message : messages) {
    if (is_tool_role(message.role)) continue;
    if ((message.role == "user") != (n_turns % 2 == 0)) {
      throw std::invalid_argument(
          "After the optional system message, conversation roles must alternate "
          "user/assistant/user/assistant/...");
    }
    ++n_turns;
  }
  std::string prompt = options.bos_token;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (message.role == "user") {
      prompt += "[INST] ";
      if (i + 1 == messages.size() && system) {
        prompt += *system;
        prompt += "\n\n";
      }
      prompt += message.content;
      prompt += "[/INST]";
    } else if (message.role == "assistant") {
      prompt += ' ';
      prompt += python_strip(message.content);
      prompt += options.eos_token;
    } else if (is_tool_role(message.role)) {
      // The template needs a 9-character tool_call_id, which a ChatMessage cannot carry.
      throw std::invalid_argument("Tool call IDs should be alphanumeric strings with length 9!");
    } else {
      throw std::invalid_argument(
          "Only user and assistant roles are supported, with the exception of an initial "
          "optional system message!");
    }
  }
  return prompt;
}

}  // namespace strata
