// What a chat request hands the model's chat template (model/chat/chat_template.h): its
// messages, the tools it offers (none where tool_choice is "none"), and its
// chat_template_kwargs as further variables.
//
// Pure function: any thread.
#pragma once

#include "model/chat/chat_template.h"
#include "service/openai/chat_completion_request.h"

namespace strata::openai {

ChatTemplateInput chat_template_input(const ChatCompletionRequest& request);

}  // namespace strata::openai
