// The body of POST /v1/chat/completions, parsed and validated into plain data.
//
// Accepted: messages (role system | developer (read as system) | user | assistant;
// content a string, or an array of {"type": "text", "text": ...} parts, joined with "\n";
// an assistant's content may be null), the shared fields of GenerationOptions, logprobs
// (bool) and top_logprobs (0..20, needs logprobs). n must be 1. Unknown fields are
// ignored. Token ids and context length are checked later, once the prompt is tokenized.
//
// Pure function: any thread (the service parses on its Asio threads).
#pragma once

#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/chat/chat_render.h"
#include "service/openai/generation_options.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

struct ChatCompletionRequest {
  std::vector<ChatMessage> messages;  // >= 1
  GenerationOptions options;          // logprobs and sampling.n_logprobs from this endpoint
};

// The request, or a 400 ApiError whose param names the field at fault
// ("messages.[1].role"). Never throws.
std::variant<ChatCompletionRequest, ApiError> parse_chat_completion_request(
    const nlohmann::json& body);

}  // namespace strata::openai
