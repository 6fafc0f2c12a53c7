#include "service/server/json_response.h"

#include <utility>

#include "service/anthropic/anthropic_error.h"
#include "service/openai/response_format.h"

namespace strata {

namespace bhttp = boost::beast::http;

http::Response text_response(http::Status status, std::string content_type, std::string body) {
  http::Response response{status, 11};
  response.set(bhttp::field::content_type, std::move(content_type));
  response.body() = std::move(body);
  return response;
}

http::Response json_response(http::Status status, const nlohmann::ordered_json& body) {
  return text_response(status, "application/json", openai::dump_json(body));
}

http::Response error_response(const openai::ApiError& error, openai::Endpoint endpoint) {
  http::Response response = json_response(
      static_cast<http::Status>(error.status),
      endpoint == openai::Endpoint::kMessages ? anthropic::error_json(error)
                                              : openai::error_json(error));
  // Both are passing states (a full queue, a model still loading): tell
  // clients when to try again, which OpenAI's SDKs honour.
  if (error.status == 429 || error.status == 503) response.set(bhttp::field::retry_after, "1");
  return response;
}

}  // namespace strata
