// ChatML, in two variants.
//
// Plain (tests/data/chat_templates/chatml.jinja, as OpenHermes-2.5 and most chatml models):
//   {% for message in messages %}
//     {{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}
//   {% endfor %}
//   {% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}
//
// Qwen3 (tests/data/chat_templates/qwen3.jinja), without tools:
//   - messages[0], if a system message, opens the prompt; later system and all user turns
//     print as plain chatml; unknown roles print nothing.
//   - The last user query is the last user turn that is not a bare
//     <tool_response>...</tool_response> (multi-step tool use).
//   - An assistant turn's content is split on </think>: reasoning is what lies between the
//     last <think> and the first </think>; the reply is what follows the last </think>.
//     After the last user query a turn keeps its reasoning in a <think> block when it is
//     the final message or has reasoning; before it, only the reply is printed.
//   - Consecutive tool turns share one user turn of <tool_response> blocks.
//   - enable_thinking=false ends the generation prompt with an empty think block.
#include <string_view>

#include "model/chat/family_renderers.h"
#include "model/chat/python_strip.h"

namespace strata {
namespace {

std::string render_plain_chatml(std::span<const ChatMessage> messages,
                                const ChatRenderOptions& options) {
  std::string prompt;
  for (const ChatMessage& message : messages) {
    prompt += "<|im_start|>";
    prompt += message.role;
    prompt += '\n';
    prompt += message.content;
    prompt += "<|im_end|>\n";
  }
  if (options.add_generation_prompt) prompt += "<|im_start|>assistant\n";
  return prompt;
}

// Qwen3's ns.last_query_index: the index of the last user turn that is a real query,
// or the last index when there is none.
size_t last_query_index(std::span<const ChatMessage> messages) {
  for (size_t i = messages.size(); i-- > 0;) {
    const ChatMessage& message = messages[i];
    const bool is_tool_response = message.content.starts_with("<tool_response>") &&
                                  message.content.ends_with("</tool_response>");
    if (message.role == "user" && !is_tool_response) return i;
  }
  return messages.size() - 1;
}

// An assistant turn's content split as Qwen3's template splits it.
struct ThinkingSplit {
  std::string_view reasoning;  // between the last <think> and the first </think>
  std::string_view reply;      // after the last </think>
};

ThinkingSplit split_thinking(std::string_view content) {
  constexpr std::string_view kOpen = "<think>";
  constexpr std::string_view kClose = "</think>";
  const size_t first_close = content.find(kClose);
  if (first_close == std::string_view::npos) return {.reasoning = {}, .reply = content};
  // content.split('</think>')[-1].lstrip('\n')
  const size_t last_close = content.rfind(kClose);
  std::string_view reply = python_lstrip(content.substr(last_close + kClose.size()), "\n");
  // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
  std::string_view before = python_rstrip(content.substr(0, first_close), "\n");
  const size_t last_open = before.rfind(kOpen);
  if (last_open != std::string_view::npos) before.remove_prefix(last_open + kOpen.size());
  return {.reasoning = python_lstrip(before, "\n"), .reply = reply};
}

std::string render_qwen3(std::span<const ChatMessage> messages,
                         const ChatRenderOptions& options) {
  // The template reads messages[0].role before anything else.
  if (messages.empty()) throw_no_messages();
  std::string prompt;
  if (messages[0].role == "system") {
    prompt += "<|im_start|>system\n";
    prompt += messages[0].content;
    prompt += "<|im_end|>\n";
  }
  const size_t query_index = last_query_index(messages);
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    const bool is_last = i + 1 == messages.size();
    if (message.role == "user" || (message.role == "system" && i != 0)) {
      prompt += "<|im_start|>";
      prompt += message.role;
      prompt += '\n';
      prompt += message.content;
      prompt += "<|im_end|>\n";
    } else if (message.role == "assistant") {
      const ThinkingSplit split = split_thinking(message.content);
      prompt += "<|im_start|>assistant\n";
      if (i > query_index && (is_last || !split.reasoning.empty())) {
        prompt += "<think>\n";
        prompt += python_strip(split.reasoning, "\n");
        prompt += "\n</think>\n\n";
        prompt += python_lstrip(split.reply, "\n");
      } else {
        prompt += split.reply;
      }
      prompt += "<|im_end|>\n";
    } else if (message.role == "tool") {
      if (i == 0 || messages[i - 1].role != "tool") prompt += "<|im_start|>user";
      prompt += "\n<tool_response>\n";
      prompt += message.content;
      prompt += "\n</tool_response>";
      if (is_last || messages[i + 1].role != "tool") prompt += "<|im_end|>\n";
    }
  }
  if (options.add_generation_prompt) {
    prompt += "<|im_start|>assistant\n";
    if (!options.enable_thinking) prompt += "<think>\n\n</think>\n\n";
  }
  return prompt;
}

}  // namespace

std::string render_chatml(const ChatFormat& format, std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options) {
  return format.has_thinking ? render_qwen3(messages, options)
                             : render_plain_chatml(messages, options);
}

}  // namespace strata
