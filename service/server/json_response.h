// The responses the API sends: JSON bodies and OpenAI error objects, with the
// headers that go with them (Retry-After on 429 and 503).
//
// Pure functions: any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "service/http/http_types.h"
#include "service/openai/openai_error.h"

namespace strata {

http::Response json_response(http::Status status, const nlohmann::ordered_json& body);
http::Response text_response(http::Status status, std::string content_type, std::string body);
http::Response error_response(const openai::ApiError& error);

}  // namespace strata
