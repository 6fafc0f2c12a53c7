// POST /v1/chat/completions, /v1/completions, /v1/messages and /v1/responses:
// admission, preparation
// (prepare_generation.h), submission to the engine, then the answer — one
// JSON body, or server-sent events as the engine produces them — while
// watching for the client to leave, which cancels the generation.
//
// Threads: a coroutine on the connection's strand.
#pragma once

#include "service/http/http_exchange.h"
#include "service/openai/response_format.h"
#include "service/server/api_context.h"

namespace strata {

http::Awaitable<void> serve_generation(http::HttpExchange& exchange, ApiContext& api,
                                       openai::Endpoint endpoint);

}  // namespace strata
