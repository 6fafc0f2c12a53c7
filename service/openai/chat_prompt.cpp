#include "service/openai/chat_prompt.h"

#include "service/openai/json_to_jinja.h"

namespace strata::openai {

ChatTemplateInput chat_template_input(const ChatCompletionRequest& request) {
  ChatTemplateInput input;
  input.messages = json_to_jinja(request.messages);
  if (request.tools.offered()) input.tools = json_to_jinja(request.tools.tools);
  for (const auto& [name, value] : request.template_kwargs.items()) {
    input.kwargs.emplace_back(name, json_to_jinja(value));
  }
  return input;
}

}  // namespace strata::openai
