#include "service/openai/tokenize_request.h"

#include <exception>

#include "common/str_cat.h"
#include "service/openai/chat_completion_request.h"
#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

bool is_token_id(const Json& token, int64_t n_vocab) {
  // Unsigned first: one above INT64_MAX would read as a negative int64.
  if (token.is_number_unsigned()) return token.get<uint64_t>() < static_cast<uint64_t>(n_vocab);
  return token.is_number_integer() && token.get<int64_t>() >= 0 && token.get<int64_t>() < n_vocab;
}

}  // namespace

std::variant<TokenizeRequest, ApiError> parse_tokenize_request(const Json& body) {
  try {
    if (!body.is_object()) return invalid_request("The request body must be a JSON object.");
    TokenizeRequest request;
    request.add_special_tokens =
        read_bool(find_field(body, "add_special_tokens"), "add_special_tokens").value_or(true);
    if (find_field(body, "messages") != nullptr) {
      auto chat = parse_chat_completion_request(body);
      if (auto* error = std::get_if<ApiError>(&chat)) return std::move(*error);
      request.chat = std::move(std::get<ChatCompletionRequest>(chat));
      return request;
    }
    std::optional<std::string> prompt = read_string(find_field(body, "prompt"), "prompt");
    if (!prompt) return invalid_request("Give \"prompt\" (a string) or \"messages\".", "prompt");
    request.prompt = std::move(*prompt);
    return request;
  } catch (const BadRequest& bad) {
    return bad.error;
  } catch (const std::exception& e) {  // JSON library errors: not expected, never a crash
    return invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

std::variant<std::vector<TokenId>, ApiError> parse_detokenize_request(const Json& body,
                                                                      int64_t n_vocab) {
  if (!body.is_object()) return invalid_request("The request body must be a JSON object.");
  const Json* tokens = find_field(body, "tokens");
  if (tokens == nullptr || !tokens->is_array()) {
    return invalid_request("\"tokens\" must be an array of token ids.", "tokens");
  }
  std::vector<TokenId> ids;
  ids.reserve(tokens->size());
  for (const Json& token : *tokens) {
    if (!is_token_id(token, n_vocab)) {
      return invalid_request(str_cat("Every token must be an integer id below ", n_vocab, "."),
                             "tokens");
    }
    ids.push_back(static_cast<TokenId>(token.get<int64_t>()));
  }
  return ids;
}

}  // namespace strata::openai
