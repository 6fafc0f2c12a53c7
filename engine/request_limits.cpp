#include "engine/request_limits.h"

#include "common/str_cat.h"

namespace strata {

std::optional<RequestError> check_request(const GenerateRequest& request,
                                          const RequestLimits& limits,
                                          const Tokenizer& tokenizer) {
  using Kind = RequestError::Kind;
  const auto n_prompt = static_cast<int64_t>(request.prompt.size());
  if (n_prompt == 0) {
    return RequestError{.kind = Kind::kEmptyPrompt, .message = "the prompt is empty"};
  }
  for (TokenId id : request.prompt) {
    if (!tokenizer.is_valid(id) || id >= limits.n_vocab) {
      return RequestError{
          .kind = Kind::kTokenOutsideVocabulary,
          .message = str_cat("token id ", id, " in the prompt is outside the vocabulary (",
                             tokenizer.n_vocab(), " tokens)"),
          .token_id = id};
    }
  }
  if (request.max_tokens < 1) {
    return RequestError{
        .kind = Kind::kMaxTokensTooSmall,
        .message = str_cat("max_tokens must be at least 1, got ", request.max_tokens)};
  }
  // Compared this way round: prompt + max_tokens may overflow int64.
  if (request.max_tokens > limits.context_length - n_prompt) {
    return RequestError{
        .kind = Kind::kContextExceeded,
        .message = str_cat("the prompt (", n_prompt, " tokens) plus max_tokens (",
                           request.max_tokens, ") exceeds the context length (",
                           limits.context_length, ")")};
  }
  const int64_t n_blocks =
      (n_prompt + request.max_tokens + limits.block_tokens - 1) / limits.block_tokens;
  if (n_blocks > limits.n_kv_blocks) {
    return RequestError{.kind = Kind::kCacheTooSmall,
                        .message = str_cat("the request needs ", n_blocks,
                                           " KV blocks but the cache holds only ",
                                           limits.n_kv_blocks)};
  }
  if (std::optional<std::string> error = request.sampling.validate()) {
    return RequestError{.kind = Kind::kInvalidSampling, .message = *error};
  }
  return std::nullopt;
}

}  // namespace strata
