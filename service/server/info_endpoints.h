// The small endpoints: GET /health, GET /v1/models, GET /metrics,
// POST /v1/tokenize and POST /v1/detokenize.
//
// Threads: coroutines on the connection's strand.
#pragma once

#include "service/http/http_exchange.h"
#include "service/server/api_context.h"

namespace strata {

// 200 {"status": "ok"} when the model is ready, else 503 {"status": "loading" | "failed"}.
http::Awaitable<void> serve_health(http::HttpExchange& exchange, ApiContext& api);
// {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}
http::Awaitable<void> serve_models(http::HttpExchange& exchange, ApiContext& api);
// Prometheus text format (service/metrics/service_metrics.h).
http::Awaitable<void> serve_metrics(http::HttpExchange& exchange, ApiContext& api);
// {"prompt": TEXT | "messages": [...], "add_special_tokens": bool}
//   -> {"tokens": [...], "count": N, "max_model_len": N} (vLLM's shape)
http::Awaitable<void> serve_tokenize(http::HttpExchange& exchange, ApiContext& api);
// {"tokens": [...]} -> {"prompt": TEXT}
// POST /v1/messages/count_tokens: {"input_tokens": N} for an Anthropic Messages body.
http::Awaitable<void> serve_count_tokens(http::HttpExchange& exchange, ApiContext& api);
http::Awaitable<void> serve_detokenize(http::HttpExchange& exchange, ApiContext& api);

}  // namespace strata
