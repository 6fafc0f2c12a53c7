// ApiError: a request the service refuses, as an HTTP status and OpenAI's error object
// ({"error": {"message", "type", "param", "code"}}). Built wherever a request is judged
// (parsing, admission); turned into a response body in one place at the HTTP edge.
//
// Plain data and pure functions: any thread.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace strata::openai {

struct ApiError {
  int status = 400;                    // HTTP status
  std::string type;                    // "invalid_request_error", "server_error", ...
  std::string message;                 // for a person: what was wrong and how to fix it
  std::optional<std::string> param{};  // the request field at fault ("temperature",
                                       // "messages.[0].content"); null when none is
  std::optional<std::string> code{};   // machine-readable, e.g. "model_not_found"
};

// 400 invalid_request_error naming the field at fault.
ApiError invalid_request(std::string message, std::optional<std::string> param = std::nullopt);
// 404 invalid_request_error (unknown route or model).
ApiError not_found(std::string message);
// 429 rate_limit_error (queue full; the HTTP layer adds Retry-After).
ApiError too_many_requests(std::string message);
// 500 server_error (the engine failed the request).
ApiError server_error(std::string message);
// 503 server_error (the model is still loading, or the server is stopping).
ApiError unavailable(std::string message);

// {"error": {"message": ..., "type": ..., "param": ... | null, "code": ... | null}}: the
// body of an error response, and the payload of an error frame mid-stream.
nlohmann::ordered_json error_json(const ApiError& error);

}  // namespace strata::openai
