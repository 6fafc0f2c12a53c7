// From a parsed request body to what the engine runs: the OpenAI request read
// and validated (service/openai/), the model name checked, the chat rendered
// and the prompt tokenized, the length checked against the context, and the
// response's shared fields chosen. Everything a client can get wrong is
// answered here, as an ApiError, before the engine sees the request.
//
// Pure function of its arguments (random id and seed aside): any thread. The
// service calls it on the connection's Asio thread: tokenizing happens there.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "engine/generate_request.h"
#include "engine/request_limits.h"
#include "model/loaded_model.h"
#include "service/openai/openai_error.h"
#include "service/openai/reply_writer.h"
#include "service/openai/response_format.h"

namespace strata {

struct PreparedGeneration {
  GenerateRequest request;
  std::unique_ptr<openai::ReplyWriter> writer;  // the reply in the request's API
  std::string model;                            // the name the reply reports
  bool stream = false;
  bool include_usage = false;
};

struct ModelLimits {
  const LoadedModel& model;
  RequestLimits request;                 // the engine's (Engine::limits())
  std::vector<std::string> model_names;  // accepted as "model"; the first is reported
};

std::variant<PreparedGeneration, openai::ApiError> prepare_generation(
    openai::Endpoint endpoint, const openai::Json& body, const ModelLimits& limits);

// OpenAI's wording, which clients parse: "This model's maximum context length is N tokens.
// However, you requested M tokens (P in the messages, C in the completion). ..."
openai::ApiError context_length_exceeded(openai::Endpoint endpoint, int64_t context_length,
                                         int64_t prompt_tokens, int64_t completion_tokens);

}  // namespace strata
