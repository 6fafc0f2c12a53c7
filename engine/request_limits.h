// Request limits: what one request may ask of a loaded model, checked in this
// one place — a prompt of at least one token, every id in the vocabulary,
// max_tokens at least 1, prompt plus max_tokens within the context, the KV
// blocks that needs within the cache, and valid sampling parameters. The
// answer is a value: the HTTP layer turns it into the OpenAI error, the
// command line into a message, and Engine::submit refuses what does not fit.
//
// Threads: pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/generate_request.h"
#include "model/tokenizer/tokenizer.h"

namespace strata {

struct RequestLimits {
  int64_t n_vocab = 0;         // the model's embedding rows: prompt ids below it
  int64_t context_length = 0;  // prompt + max_tokens, at most
  int64_t block_tokens = 1;    // tokens per KV block
  int64_t n_kv_blocks = 0;     // blocks the cache holds: one request must fit in them
};

struct RequestError {
  enum class Kind {
    kEmptyPrompt,
    kTokenOutsideVocabulary,  // token_id says which
    kMaxTokensTooSmall,
    kContextExceeded,         // n_prompt + max_tokens > context_length
    kCacheTooSmall,           // the request needs more KV blocks than the cache has
    kInvalidSampling,
  };
  Kind kind = Kind::kEmptyPrompt;
  std::string message;  // for a person: what is wrong, with the numbers
  TokenId token_id = 0;
};

// nullopt when `request` fits `limits`. An id must name a token of the
// tokenizer and a row of the model's embedding.
std::optional<RequestError> check_request(const GenerateRequest& request,
                                          const RequestLimits& limits, const Tokenizer& tokenizer);

}  // namespace strata
