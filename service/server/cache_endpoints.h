// The KV cache admin endpoints:
//   GET  /v1/cache          sizes and counts per tier, moves, settings
//   POST /v1/cache/clear    evicts every idle block of the host cache and
//                           empties the disk tier -> {"cleared": {...}}
//   POST /v1/cache/persist  writes every cached block to the disk tier and
//                           answers once they are durable -> {"blocks_on_disk": N}
// Like every route but /health, they need the API key on TCP when one is set.
//
// Threads: coroutines on the connection's strand.
#pragma once

#include "service/http/http_exchange.h"
#include "service/server/api_context.h"

namespace strata {

http::Awaitable<void> serve_cache(http::HttpExchange& exchange, ApiContext& api);
http::Awaitable<void> serve_cache_clear(http::HttpExchange& exchange, ApiContext& api);
http::Awaitable<void> serve_cache_persist(http::HttpExchange& exchange, ApiContext& api);

}  // namespace strata
