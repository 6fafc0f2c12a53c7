// Llama 3, as Meta-Llama-3-8B-Instruct's template (tests/data/chat_templates/llama3.jinja
// and llama3-revised.jinja):
//   {% for message in messages %}
//     {% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'
//                      + message['content'] | trim + '<|eot_id|>' %}
//     {% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}
//     {{ content }}
//   {% endfor %}
//   {% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
//   {% endif %}        <- the `if` is absent from the first release: always added
// Every role is printed as given; content is trimmed (Python's str.strip()).
#include "model/chat/family_renderers.h"
#include "model/chat/python_strip.h"

namespace strata {

std::string render_llama3(const ChatFormat& format, std::span<const ChatMessage> messages,
                          const ChatRenderOptions& options) {
  std::string prompt;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i == 0) prompt += options.bos_token;
    prompt += "<|start_header_id|>";
    prompt += messages[i].role;
    prompt += "<|end_header_id|>\n\n";
    prompt += python_strip(messages[i].content);
    prompt += "<|eot_id|>";
  }
  if (options.add_generation_prompt || format.always_adds_generation_prompt) {
    prompt += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  }
  return prompt;
}

}  // namespace strata
