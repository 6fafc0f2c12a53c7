// The responses the API sends: JSON bodies and error objects (OpenAI's, or Anthropic's
// for /v1/messages), with the headers that go with them (Retry-After on 429 and 503).
//
// Pure functions: any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "service/http/http_types.h"
#include "service/openai/openai_error.h"
#include "service/openai/response_format.h"

namespace strata {

http::Response json_response(http::Status status, const nlohmann::ordered_json& body);
http::Response text_response(http::Status status, std::string content_type, std::string body);
http::Response error_response(
    const openai::ApiError& error,
    openai::Endpoint endpoint = openai::Endpoint::kChatCompletions);

}  // namespace strata
