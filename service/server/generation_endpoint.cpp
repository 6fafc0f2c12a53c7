#include "service/server/generation_endpoint.h"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"
#include "service/openai/json_fields.h"
#include "service/server/event_channel.h"
#include "service/server/json_response.h"
#include "service/server/prepare_generation.h"

namespace strata {
namespace {

using namespace boost::asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;
using openai::ApiError;

// Time to first token and between tokens, for /metrics.
class TokenTimer {
 public:
  TokenTimer(metrics::ServiceMetrics& metrics, Clock::time_point received)
      : metrics_(metrics), last_(received) {}

  void on_event(const EngineEvent& event) {
    if (event.token_ids.empty()) return;
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    if (first_) {
      metrics_.observe_time_to_first_token(seconds);
    } else {
      metrics_.observe_inter_token_latency(seconds);
    }
    first_ = false;
    last_ = now;
  }

 private:
  metrics::ServiceMetrics& metrics_;
  Clock::time_point last_;
  bool first_ = true;
};

// A cancel the client did not ask for (it is still listening): the server's
// shutdown ran out of grace.
ApiError cancelled_by_server() {
  return openai::unavailable(
      "The server is shutting down; this request was cancelled before it finished.");
}

// Writes each event as SSE until the final one. False when the client could
// not be written to.
http::Awaitable<bool> pump_stream(http::HttpExchange& exchange, EventChannel& channel,
                                  openai::ReplyWriter& writer, TokenTimer& timer) {
  for (;;) {
    for (const EngineEvent& event : co_await channel.next()) {
      timer.on_event(event);
      const bool cancelled = event.finish == FinishReason::kCancelled;
      const std::string frames =
          cancelled ? writer.stream_error(cancelled_by_server()) : writer.stream_event(event);
      if (!co_await exchange.write_chunk(frames)) co_return false;
      if (event.finish) co_return co_await exchange.end_stream();
    }
  }
}

// Gives the writer every event up to the final one, which is returned.
http::Awaitable<EngineEvent> collect(EventChannel& channel, openai::ReplyWriter& writer,
                                     TokenTimer& timer) {
  for (;;) {
    for (const EngineEvent& event : co_await channel.next()) {
      timer.on_event(event);
      writer.add_event(event);
      if (event.finish) co_return event;
    }
  }
}

http::Awaitable<void> answer_stream(http::HttpExchange& exchange, ApiContext& api,
                                    PreparedGeneration& prepared, EventChannel& channel,
                                    uint64_t id, TokenTimer& timer) {
  openai::ReplyWriter& writer = *prepared.writer;
  bool delivered = co_await exchange.start_stream(http::Status::ok, "text/event-stream") &&
                   co_await exchange.write_chunk(writer.stream_start());
  if (delivered) {
    auto race = co_await (pump_stream(exchange, channel, writer, timer) || exchange.client_gone());
    delivered = race.index() == 0 && std::get<0>(race);
  }
  if (!delivered) {
    api.model_host.engine().cancel(id);
    api.metrics.count_client_cancel();
    exchange.close_after_response();
  }
}

http::Awaitable<void> answer_whole(http::HttpExchange& exchange, ApiContext& api,
                                   openai::Endpoint endpoint, PreparedGeneration& prepared,
                                   EventChannel& channel, uint64_t id, TokenTimer& timer) {
  auto race = co_await (collect(channel, *prepared.writer, timer) || exchange.client_gone());
  if (race.index() == 1) {
    api.model_host.engine().cancel(id);
    api.metrics.count_client_cancel();
    exchange.close_after_response();
    co_return;
  }
  const EngineEvent& last = std::get<0>(race);
  if (last.finish == FinishReason::kError) {
    co_await exchange.respond(
        error_response(openai::server_error(str_cat("Generation failed: ", last.error)), endpoint));
  } else if (last.finish == FinishReason::kCancelled) {
    co_await exchange.respond(error_response(cancelled_by_server(), endpoint));
  } else {
    co_await exchange.respond(json_response(http::Status::ok, prepared.writer->body()));
  }
}

}  // namespace

http::Awaitable<void> serve_generation(http::HttpExchange& exchange, ApiContext& api,
                                       openai::Endpoint endpoint) {
  // Admission first: a refused request costs no parsing and no tokenizing.
  std::optional<Admission::Ticket> ticket = api.admission.try_admit();
  if (!ticket) {
    co_await exchange.respond(
        error_response(openai::too_many_requests(str_cat(
                           "The server is busy: ", api.admission.max_active(),
                           " requests are already running or waiting. Retry after a moment.")),
                       endpoint));
    co_return;
  }
  if (api.model_host.state() != ModelHost::State::kReady) {
    co_await exchange.respond(error_response(
        openai::unavailable("The model is still loading. Retry after a moment."), endpoint));
    co_return;
  }
  auto body = openai::parse_json_body(exchange.request().body());
  if (auto* error = std::get_if<ApiError>(&body)) {
    co_await exchange.respond(error_response(*error, endpoint));
    co_return;
  }
  const ModelHost& host = api.model_host;
  auto prepared_or = prepare_generation(endpoint, std::get<openai::Json>(body),
                                        ModelLimits{.model = host.model(),
                                                    .request = host.engine().limits(),
                                                    .model_names = api.model_names});
  if (auto* error = std::get_if<ApiError>(&prepared_or)) {
    co_await exchange.respond(error_response(*error, endpoint));
    co_return;
  }
  PreparedGeneration& prepared = std::get<PreparedGeneration>(prepared_or);

  auto channel = EventChannel::create(co_await boost::asio::this_coro::executor);
  uint64_t id = 0;
  std::string refused;  // the engine's reason, for a client
  try {
    id = host.engine().submit(std::move(prepared.request),
                              [channel](const EngineEvent& event) { channel->push(event); });
  } catch (const std::invalid_argument& e) {
    refused = e.what();
  }
  if (!refused.empty()) {
    co_await exchange.respond(
        error_response(openai::invalid_request(std::move(refused)), endpoint));
    co_return;
  }
  ActiveRequests::Guard registered(api.active, id);
  TokenTimer timer(api.metrics, exchange.received());
  if (prepared.stream) {
    co_await answer_stream(exchange, api, prepared, *channel, id, timer);
  } else {
    co_await answer_whole(exchange, api, endpoint, prepared, *channel, id, timer);
  }
  api.metrics.observe_request_duration(
      std::chrono::duration<double>(Clock::now() - exchange.received()).count());
}

}  // namespace strata
