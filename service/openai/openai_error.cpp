#include "service/openai/openai_error.h"

#include <utility>

namespace strata::openai {

ApiError invalid_request(std::string message, std::optional<std::string> param) {
  return {.status = 400, .type = "invalid_request_error", .message = std::move(message),
          .param = std::move(param)};
}

ApiError not_found(std::string message) {
  return {.status = 404, .type = "invalid_request_error", .message = std::move(message)};
}

ApiError too_many_requests(std::string message) {
  return {.status = 429, .type = "rate_limit_error", .message = std::move(message)};
}

ApiError server_error(std::string message) {
  return {.status = 500, .type = "server_error", .message = std::move(message)};
}

ApiError unavailable(std::string message) {
  return {.status = 503, .type = "server_error", .message = std::move(message)};
}

nlohmann::ordered_json error_json(const ApiError& error) {
  nlohmann::ordered_json body;
  body["message"] = error.message;
  body["type"] = error.type;
  body["param"] = error.param ? nlohmann::ordered_json(*error.param) : nullptr;
  body["code"] = error.code ? nlohmann::ordered_json(*error.code) : nullptr;
  return {{"error", std::move(body)}};
}

}  // namespace strata::openai
