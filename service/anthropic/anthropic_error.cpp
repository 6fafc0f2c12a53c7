#include "service/anthropic/anthropic_error.h"

namespace strata::anthropic {

std::string_view error_type(int status) {
  switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return status < 500 ? "invalid_request_error" : "api_error";
  }
}

openai::Json error_json(const openai::ApiError& error) {
  openai::Json body = openai::Json::object();
  body["type"] = "error";
  body["error"] = {{"type", error_type(error.status)}, {"message", error.message}};
  return body;
}

}  // namespace strata::anthropic
