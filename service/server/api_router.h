// The API's front door: the checks every request over TCP passes (Host
// header, API key, CORS), then the route table, then the request count in
// /metrics. The Unix socket is the trusted local path and skips the checks.
//
// Threads: a coroutine on the connection's strand.
#pragma once

#include "service/http/http_exchange.h"
#include "service/server/api_context.h"

namespace strata {

http::Awaitable<void> serve_api(http::HttpExchange& exchange, ApiContext& api);

}  // namespace strata
