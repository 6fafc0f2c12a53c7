#include "service/server/api_router.h"

#include <array>
#include <string_view>

#include "common/str_cat.h"
#include "service/server/cache_endpoints.h"
#include "service/server/generation_endpoint.h"
#include "service/server/info_endpoints.h"
#include "service/server/json_response.h"
#include "service/web/web_response.h"

namespace strata {
namespace {

namespace bhttp = boost::beast::http;
using Handler = http::Awaitable<void> (*)(http::HttpExchange&, ApiContext&);

struct Route {
  std::string_view path;
  bhttp::verb method;
  Handler handler;
};

http::Awaitable<void> serve_chat(http::HttpExchange& exchange, ApiContext& api) {
  return serve_generation(exchange, api, openai::Endpoint::kChatCompletions);
}
http::Awaitable<void> serve_completions(http::HttpExchange& exchange, ApiContext& api) {
  return serve_generation(exchange, api, openai::Endpoint::kCompletions);
}
http::Awaitable<void> serve_messages(http::HttpExchange& exchange, ApiContext& api) {
  return serve_generation(exchange, api, openai::Endpoint::kMessages);
}
http::Awaitable<void> serve_responses(http::HttpExchange& exchange, ApiContext& api) {
  return serve_generation(exchange, api, openai::Endpoint::kResponses);
}

constexpr std::array kRoutes = {
    Route{"/health", bhttp::verb::get, serve_health},
    Route{"/metrics", bhttp::verb::get, serve_metrics},
    Route{"/v1/models", bhttp::verb::get, serve_models},
    Route{"/v1/chat/completions", bhttp::verb::post, serve_chat},
    Route{"/v1/completions", bhttp::verb::post, serve_completions},
    Route{"/v1/messages", bhttp::verb::post, serve_messages},
    Route{"/v1/messages/count_tokens", bhttp::verb::post, serve_count_tokens},
    Route{"/v1/responses", bhttp::verb::post, serve_responses},
    Route{"/v1/tokenize", bhttp::verb::post, serve_tokenize},
    Route{"/v1/detokenize", bhttp::verb::post, serve_detokenize},
    Route{"/v1/cache", bhttp::verb::get, serve_cache},
    Route{"/v1/cache/clear", bhttp::verb::post, serve_cache_clear},
    Route{"/v1/cache/persist", bhttp::verb::post, serve_cache_persist},
};

http::Awaitable<void> serve_web_asset(http::HttpExchange& exchange, ApiContext&) {
  const web::WebAsset* asset = web::find_web_asset(exchange.path());
  co_await exchange.respond(web::web_asset_response(*asset, exchange.request()));
}

// The chat page's files (/, /app.js, ...) share one route. They need no API key:
// the page asks for it and sends it with its API calls.
constexpr Route kWebRoute{"web", bhttp::verb::get, serve_web_asset};

const Route* find_route(std::string_view path) {
  for (const Route& route : kRoutes) {
    if (route.path == path) return &route;
  }
  if (web::find_web_asset(path) != nullptr) return &kWebRoute;
  return nullptr;
}

openai::ApiError forbidden(std::string message, std::string code) {
  return {.status = 403, .type = "permission_error", .message = std::move(message),
          .code = std::move(code)};
}

openai::ApiError bad_api_key() {
  return {.status = 401, .type = "invalid_request_error",
          .message = "Incorrect API key provided. Send it as `Authorization: Bearer KEY`.",
          .code = "invalid_api_key"};
}

// The TCP checks; the error to answer with, if any. Adds CORS headers.
std::optional<openai::ApiError> check_access(http::HttpExchange& exchange, const ApiContext& api,
                                             const Route* route) {
  if (exchange.trusted()) return std::nullopt;
  const http::Request& request = exchange.request();
  if (api.check_host && !http::host_allowed(api.access, request[bhttp::field::host])) {
    return forbidden(str_cat("The Host header `", request[bhttp::field::host],
                             "` is not this server's. Use http://127.0.0.1 or "
                             "http://localhost, or add the name to allowed-hosts."),
                     "invalid_host");
  }
  const std::string_view origin = request[bhttp::field::origin];
  if (!origin.empty()) {
    if (auto allowed = http::cors_allow_origin(api.access, origin)) {
      exchange.add_header(bhttp::field::access_control_allow_origin, *allowed);
      exchange.add_header(bhttp::field::vary, "Origin");
    }
  }
  // Browsers send no Authorization on a CORS preflight; /health is for probes.
  const bool open_route = (route != nullptr && route->path == "/health") || route == &kWebRoute ||
                          request.method() == bhttp::verb::options;
  if (!open_route &&
      !http::authorized(api.access, request[bhttp::field::authorization], request["x-api-key"])) {
    return bad_api_key();
  }
  return std::nullopt;
}

// A CORS preflight: allowed origins learn what they may send.
http::Response preflight(const http::HttpExchange& exchange, const ApiContext& api) {
  const std::string_view origin = exchange.request()[bhttp::field::origin];
  if (exchange.trusted() || !http::cors_allow_origin(api.access, origin)) {
    return error_response(forbidden("Cross-origin requests from this origin are not allowed.",
                                    "cors_not_allowed"));
  }
  http::Response response{http::Status::no_content, 11};
  response.set(bhttp::field::access_control_allow_methods, "GET, POST, OPTIONS");
  response.set(bhttp::field::access_control_allow_headers,
               "Authorization, Content-Type, X-Api-Key, Anthropic-Version");
  response.set(bhttp::field::access_control_max_age, "600");
  return response;
}

http::Awaitable<void> dispatch(http::HttpExchange& exchange, ApiContext& api, const Route* route) {
  const bhttp::verb method = exchange.request().method();
  if (route == nullptr) {
    co_await exchange.respond(error_response(openai::not_found(
        str_cat("Unknown path ", exchange.path(), ". See GET /v1/models, POST "
                "/v1/chat/completions and POST /v1/completions."))));
  } else if (method != route->method) {
    openai::ApiError error{.status = 405, .type = "invalid_request_error",
                           .message = str_cat(exchange.path(), " only accepts ",
                                              bhttp::to_string(route->method), ".")};
    http::Response response = error_response(error);
    response.set(bhttp::field::allow, bhttp::to_string(route->method));
    co_await exchange.respond(std::move(response));
  } else {
    co_await route->handler(exchange, api);
  }
}

}  // namespace

http::Awaitable<void> serve_api(http::HttpExchange& exchange, ApiContext& api) {
  const Route* route = find_route(exchange.path());
  if (auto error = check_access(exchange, api, route)) {
    exchange.close_after_response();
    co_await exchange.respond(error_response(*error));
  } else if (exchange.request().method() == bhttp::verb::options) {
    co_await exchange.respond(preflight(exchange, api));
  } else {
    co_await dispatch(exchange, api, route);
  }
  api.metrics.count_request(route != nullptr ? route->path : "other", exchange.status_sent());
}

}  // namespace strata
