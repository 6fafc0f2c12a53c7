// The body of POST /v1/chat/completions, parsed and validated into plain data.
//
// Accepted: messages (chat_messages.h), tools, tool_choice and parallel_tool_calls
// (chat_tools.h), chat_template_kwargs (an object of further template variables, e.g.
// {"enable_thinking": false}) and reasoning_effort (passed to the template as a variable
// of that name, as transformers' chat templates for reasoning models read it), the shared
// fields of GenerationOptions, logprobs (bool) and top_logprobs (0..20, needs logprobs).
// n must be 1. Replies are not constrained yet: response_format other than text, and
// tool_choice "required" or a named function, are refused. Unknown fields are ignored.
// Token ids and context length are checked later, once the prompt is tokenized.
//
// Pure function: any thread (the service parses on its Asio threads).
#pragma once

#include <variant>
#include <vector>

#include "service/openai/chat_tools.h"
#include "service/openai/generation_options.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

struct ChatCompletionRequest {
  Json messages;                          // >= 1, as chat_messages.h shapes them
  ChatTools tools;
  Json template_kwargs = Json::object();  // chat_template_kwargs and reasoning_effort
  GenerationOptions options;          // logprobs and sampling.n_logprobs from this endpoint
};

// The request, or a 400 ApiError whose param names the field at fault
// ("messages.[1].role"). Never throws.
std::variant<ChatCompletionRequest, ApiError> parse_chat_completion_request(
    const Json& body);

}  // namespace strata::openai
