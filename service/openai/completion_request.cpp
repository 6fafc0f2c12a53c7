#include "service/openai/completion_request.h"

#include <exception>

#include "common/str_cat.h"
#include "service/openai/json_fields.h"

namespace strata::openai {
namespace {

void read_prompt(const Json* prompt, CompletionRequest& request) {
  if (prompt == nullptr) throw_bad_request("prompt is required", "prompt");
  if (prompt->is_string()) {
    request.prompt_text = prompt->get<std::string>();
    return;
  }
  if (!prompt->is_array()) {
    throw_bad_request("prompt must be a string or an array of token ids", "prompt");
  }
  if (prompt->empty()) throw_bad_request("prompt must not be empty", "prompt");
  if ((*prompt)[0].is_string() || (*prompt)[0].is_array()) {
    if (prompt->size() > 1) {
      throw_bad_request("Several prompts in one request are not supported", "prompt");
    }
    if ((*prompt)[0].is_string()) {
      request.prompt_text = (*prompt)[0].get<std::string>();
      return;
    }
    prompt = &(*prompt)[0];  // [[ids...]]: one tokenized prompt
    if (prompt->empty()) throw_bad_request("prompt must not be empty", "prompt");
  }
  request.prompt_is_tokens = true;
  request.prompt_tokens.reserve(prompt->size());
  for (const Json& id : *prompt) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      throw_bad_request("prompt must be a string or an array of token ids (integers >= 0)",
                        "prompt");
    }
    request.prompt_tokens.push_back(static_cast<TokenId>(id.get<int64_t>()));
  }
}

}  // namespace

std::variant<CompletionRequest, ApiError> parse_completion_request(const Json& body) {
  try {
    if (!body.is_object()) return invalid_request("The request body must be a JSON object.");
    CompletionRequest request;
    read_prompt(find_field(body, "prompt"), request);
    request.options = read_generation_options(body);
    if (read_bool(find_field(body, "echo"), "echo").value_or(false)) {
      throw_bad_request("echo is not supported", "echo");
    }
    if (!read_string(find_field(body, "suffix"), "suffix").value_or("").empty()) {
      throw_bad_request("suffix is not supported", "suffix");
    }
    if (read_integer(find_field(body, "best_of"), "best_of").value_or(1) != 1) {
      throw_bad_request("best_of other than 1 is not supported", "best_of");
    }
    GenerationOptions& options = request.options;
    if (auto logprobs = read_integer(find_field(body, "logprobs"), "logprobs")) {
      if (*logprobs < 0 || *logprobs > SamplingParams::kMaxLogprobs) {
        throw_bad_request(str_cat("logprobs must be in [0, ", SamplingParams::kMaxLogprobs,
                                  "], got ", *logprobs),
                          "logprobs");
      }
      options.logprobs = true;
      options.sampling.n_logprobs = static_cast<int32_t>(*logprobs);
    }
    validate_sampling(options);
    return request;
  } catch (const BadRequest& bad) {
    return bad.error;
  } catch (const std::exception& e) {  // JSON library errors: not expected, never a crash
    return invalid_request(str_cat("Invalid request body: ", e.what()));
  }
}

}  // namespace strata::openai
