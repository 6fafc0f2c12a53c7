#include "service/server/info_endpoints.h"

#include <stdexcept>
#include <utility>

#include "common/str_cat.h"
#include "service/anthropic/messages_request.h"
#include "service/openai/chat_prompt.h"
#include "service/openai/json_fields.h"
#include "service/openai/tokenize_request.h"
#include "service/server/json_response.h"

namespace strata {
namespace {

using openai::ApiError;
using Json = nlohmann::ordered_json;

metrics::EngineGauges engine_gauges(const ModelHost& host) {
  const EngineStats stats = host.engine().stats();
  metrics::EngineGauges gauges{.running = stats.n_running,
                               .waiting = stats.n_waiting,
                               .prompt_tokens = stats.n_prompt_tokens,
                               .cached_prompt_tokens = stats.n_cached_prompt_tokens,
                               .generated_tokens = stats.n_generated_tokens,
                               .preemptions = stats.n_preemptions,
                               .steps = stats.n_steps,
                               .tiers = {},
                               .moves = {},
                               .moves_in_flight = 0,
                               .disk_writes_enabled = false,
                               .disk_write_failures = 0,
                               .disk_reopens = 0};
  // The tier the backend computes in: host memory (T1) on the CPU, VRAM (T0)
  // on a GPU. Its hits are blocks matched there that were not first brought
  // up from a tier below.
  const std::optional<HostTierStats>& t1 = stats.host_tier;
  gauges.tiers.push_back({.tier = t1 ? "vram" : "host",
                          .blocks_used = stats.n_blocks_used,
                          .blocks_cached = stats.n_blocks_cached,
                          .blocks_total = stats.n_blocks_total,
                          .block_hits = stats.n_block_hits - (t1 ? t1->n_blocks_promoted
                                                                 : stats.n_blocks_loaded)});
  if (t1) {
    gauges.tiers.push_back({.tier = "host",
                            .blocks_used = t1->n_copies_in_flight,
                            .blocks_cached = t1->n_blocks_cached,
                            .blocks_total = t1->n_blocks_total,
                            .block_hits = t1->n_block_hits});
    gauges.moves.push_back({.from = "vram", .to = "host", .bytes = t1->bytes_to_host});
    gauges.moves.push_back({.from = "host", .to = "vram", .bytes = t1->bytes_to_device});
    gauges.moves_in_flight += t1->n_copies_in_flight;
  }
  if (const DiskWorker* disk = host.disk_tier()) {
    const DiskTierStats d = disk->stats();
    gauges.tiers.push_back({.tier = "disk",
                            .blocks_used = d.n_in_flight,
                            .blocks_cached = d.n_blocks,
                            .blocks_total = d.capacity_blocks,
                            .block_hits = d.n_loads});
    gauges.moves.push_back({.from = "host", .to = "disk", .bytes = d.bytes_written});
    gauges.moves.push_back({.from = "disk", .to = "host", .bytes = d.bytes_read});
    gauges.moves_in_flight += d.n_in_flight;
    gauges.disk_writes_enabled = d.writing;
    gauges.disk_write_failures = d.n_write_failures;
    gauges.disk_reopens = d.n_reopens;
  }
  return gauges;
}

// Built outside the coroutine (see health_response).
openai::Json input_tokens_json(int64_t n_tokens) {
  openai::Json out = openai::Json::object();
  out["input_tokens"] = n_tokens;
  return out;
}

// The length of a chat request's prompt, or why the template rejects it.
std::variant<int64_t, ApiError> count_chat_tokens(const openai::ChatCompletionRequest& request,
                                                  const LoadedModel& model) {
  try {
    return static_cast<int64_t>(
        model.encode_chat(openai::chat_template_input(request)).tokens.size());
  } catch (const std::invalid_argument& e) {
    return openai::invalid_request(
        str_cat("The model's chat template rejects these messages: ", e.what()), "messages");
  }
}

// The body as a JSON object, or the error already sent; nullopt also when the
// model is not ready (503 sent).
http::Awaitable<std::optional<openai::Json>> read_model_request(
    http::HttpExchange& exchange, ApiContext& api,
    openai::Endpoint endpoint = openai::Endpoint::kChatCompletions) {
  if (api.model_host.state() != ModelHost::State::kReady) {
    co_await exchange.respond(error_response(
        openai::unavailable("The model is still loading. Retry after a moment."), endpoint));
    co_return std::nullopt;
  }
  auto body = openai::parse_json_body(exchange.request().body());
  if (auto* error = std::get_if<ApiError>(&body)) {
    co_await exchange.respond(error_response(*error, endpoint));
    co_return std::nullopt;
  }
  co_return std::get<openai::Json>(std::move(body));
}

// The tokens a tokenize request stands for, or what is wrong with it.
std::variant<std::vector<TokenId>, ApiError> tokenize_body(const openai::Json& body,
                                                           const LoadedModel& model) {
  auto parsed = openai::parse_tokenize_request(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) return std::move(*error);
  const openai::TokenizeRequest& request = std::get<openai::TokenizeRequest>(parsed);
  if (!request.chat) {
    return model.tokenizer().encode(request.prompt, {.add_special = request.add_special_tokens,
                                                     .parse_special = true});
  }
  try {
    return model.encode_chat(openai::chat_template_input(*request.chat)).tokens;
  } catch (const std::invalid_argument& e) {
    return openai::invalid_request(e.what(), "messages");
  }
}

// Built outside the coroutine: GCC 12 miscompiles string literals in
// braced JSON initializers inside coroutine frames ("array used as initializer").
http::Response health_response(ModelHost::State state) {
  const char* status = state == ModelHost::State::kReady     ? "ok"
                       : state == ModelHost::State::kLoading ? "loading"
                                                             : "failed";
  const http::Status code =
      state == ModelHost::State::kReady ? http::Status::ok : http::Status::service_unavailable;
  return json_response(code, Json{{"status", status}});
}

http::Response models_response(const ApiContext& api) {
  Json model{{"id", api.model_id}, {"object", "model"}, {"created", api.started_at},
             {"owned_by", "strata"}};
  if (api.model_host.state() == ModelHost::State::kReady) {
    model["max_model_len"] = api.model_host.context_length();
  }
  return json_response(http::Status::ok,
                       Json{{"object", "list"}, {"data", Json::array({std::move(model)})}});
}

http::Response tokens_response(const std::vector<TokenId>& ids, int64_t context_length) {
  return json_response(http::Status::ok, Json{{"tokens", ids}, {"count", ids.size()},
                                              {"max_model_len", context_length}});
}

http::Response text_of_tokens_response(std::string text) {
  return json_response(http::Status::ok, Json{{"prompt", std::move(text)}});
}

}  // namespace

http::Awaitable<void> serve_health(http::HttpExchange& exchange, ApiContext& api) {
  co_await exchange.respond(health_response(api.model_host.state()));
}

http::Awaitable<void> serve_models(http::HttpExchange& exchange, ApiContext& api) {
  co_await exchange.respond(models_response(api));
}

http::Awaitable<void> serve_metrics(http::HttpExchange& exchange, ApiContext& api) {
  std::optional<metrics::EngineGauges> gauges;
  if (api.model_host.state() == ModelHost::State::kReady) gauges = engine_gauges(api.model_host);
  co_await exchange.respond(text_response(http::Status::ok,
                                          "text/plain; version=0.0.4; charset=utf-8",
                                          api.metrics.render(gauges ? &*gauges : nullptr)));
}

http::Awaitable<void> serve_tokenize(http::HttpExchange& exchange, ApiContext& api) {
  std::optional<openai::Json> body = co_await read_model_request(exchange, api);
  if (!body) co_return;
  auto tokens = tokenize_body(*body, api.model_host.model());
  if (auto* error = std::get_if<ApiError>(&tokens)) {
    co_await exchange.respond(error_response(*error));
    co_return;
  }
  const auto& ids = std::get<std::vector<TokenId>>(tokens);
  co_await exchange.respond(tokens_response(ids, api.model_host.context_length()));
}

http::Awaitable<void> serve_count_tokens(http::HttpExchange& exchange, ApiContext& api) {
  constexpr openai::Endpoint kMessages = openai::Endpoint::kMessages;
  std::optional<openai::Json> body = co_await read_model_request(exchange, api, kMessages);
  if (!body) co_return;
  auto request =
      anthropic::parse_messages_request(*body, anthropic::MessagesEndpoint::kCountTokens);
  if (auto* error = std::get_if<ApiError>(&request)) {
    co_await exchange.respond(error_response(*error, kMessages));
    co_return;
  }
  auto n_tokens = count_chat_tokens(std::get<openai::ChatCompletionRequest>(request),
                                    api.model_host.model());
  if (auto* error = std::get_if<ApiError>(&n_tokens)) {
    co_await exchange.respond(error_response(*error, kMessages));
    co_return;
  }
  co_await exchange.respond(json_response(http::Status::ok, input_tokens_json(std::get<int64_t>(n_tokens))));
}

http::Awaitable<void> serve_detokenize(http::HttpExchange& exchange, ApiContext& api) {
  std::optional<openai::Json> body = co_await read_model_request(exchange, api);
  if (!body) co_return;
  const Tokenizer& tokenizer = api.model_host.model().tokenizer();
  auto ids = openai::parse_detokenize_request(*body, tokenizer.n_vocab());
  if (auto* error = std::get_if<ApiError>(&ids)) {
    co_await exchange.respond(error_response(*error));
    co_return;
  }
  // A whole text from its first token, as Hugging Face's decode() gives it.
  co_await exchange.respond(
      text_of_tokens_response(tokenizer.decode(std::get<std::vector<TokenId>>(ids),
                                               {.strip_leading_space = true})));
}

}  // namespace strata
