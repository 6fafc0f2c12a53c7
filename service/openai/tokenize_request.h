// The bodies of POST /v1/tokenize and POST /v1/detokenize (vLLM's extensions),
// parsed and validated into plain data.
//
// tokenize: {"prompt": TEXT} or {"messages": [...]} (a chat completion's body, read
// and validated as /v1/chat/completions reads it; the chat is then rendered in the
// model's format), and add_special_tokens (a boolean, default true; it applies to a
// prompt: a chat's special tokens come from its template). Unknown fields are ignored.
// detokenize: {"tokens": [ids]}, each an integer in [0, n_vocab).
//
// Pure functions: any thread (the service parses on its Asio threads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/tokenizer/vocab.h"
#include "service/openai/chat_completion_request.h"
#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::openai {

struct TokenizeRequest {
  std::optional<ChatCompletionRequest> chat;  // messages given: render them, not prompt
  std::string prompt;                         // when !chat
  bool add_special_tokens = true;             // BOS/EOS around a prompt
};

// The request, or a 400 ApiError naming the field at fault. Never throws.
std::variant<TokenizeRequest, ApiError> parse_tokenize_request(const Json& body);

// The ids, or a 400 ApiError naming "tokens". Never throws.
std::variant<std::vector<TokenId>, ApiError> parse_detokenize_request(const Json& body,
                                                                      int64_t n_vocab);

}  // namespace strata::openai
