// Anthropic's error shape: {"type": "error", "error": {"type": ..., "message": ...}},
// for the Messages API. The same ApiError that the OpenAI endpoints answer with, written
// the way the Anthropic SDKs read it; the HTTP status stays the same.
//
// Pure functions: any thread.
#pragma once

#include <string_view>

#include "service/openai/json_fields.h"
#include "service/openai/openai_error.h"

namespace strata::anthropic {

// The error type Anthropic gives a status: invalid_request_error (400),
// not_found_error (404), rate_limit_error (429), api_error (500), overloaded_error
// (503 and 529), ...
std::string_view error_type(int status);

// The body of an error response, and the data of an `error` event mid-stream.
openai::Json error_json(const openai::ApiError& error);

}  // namespace strata::anthropic
