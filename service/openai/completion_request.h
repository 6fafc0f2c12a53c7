// The body of POST /v1/completions (OpenAI's legacy text completion), parsed and
// validated into plain data.
//
// Accepted: prompt as a string, a one-string array, or an array of token ids (>= 0;
// checked against the vocabulary later, once the model is known); the shared fields of
// GenerationOptions; logprobs as an integer 0..20 (the alternatives per token; OpenAI
// allows 5). Refused with 400: several prompts, n != 1, echo, suffix, best_of > 1.
// Unknown fields are ignored.
//
// Pure function: any thread (the service parses on its Asio threads).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "model/tokenizer/vocab.h"
#include "service/openai/generation_options.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

struct CompletionRequest {
  // Exactly one of the two holds the prompt: text to tokenize, or ids as given (>= 1).
  std::string prompt_text;
  std::vector<TokenId> prompt_tokens;
  bool prompt_is_tokens = false;
  GenerationOptions options;  // logprobs and sampling.n_logprobs from "logprobs"
};

// The request, or a 400 ApiError whose param names the field at fault. Never throws.
std::variant<CompletionRequest, ApiError> parse_completion_request(const Json& body);

}  // namespace strata::openai
