#include "service/server/cache_endpoints.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "service/server/json_response.h"

namespace strata {
namespace {

namespace asio = boost::asio;
using Json = nlohmann::ordered_json;

// How long POST /v1/cache/persist waits for the writes to be durable.
constexpr auto kPersistTimeout = std::chrono::minutes(5);
constexpr auto kClearTimeout = std::chrono::seconds(30);

// A number the engine thread hands back to a waiting coroutine.
struct EngineReply {
  std::mutex mutex;
  std::optional<int64_t> value;

  void set(int64_t n) {
    std::lock_guard lock(mutex);
    value = n;
  }
  std::optional<int64_t> get() {
    std::lock_guard lock(mutex);
    return value;
  }
};

// Polls for the engine's reply: an admin endpoint, where a few milliseconds
// do not matter, so no hand-off to the strand is needed.
http::Awaitable<std::optional<int64_t>> wait_for(std::shared_ptr<EngineReply> reply,
                                                 std::chrono::steady_clock::duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::optional<int64_t> value = reply->get()) co_return value;
    timer.expires_after(std::chrono::milliseconds(5));
    co_await timer.async_wait(asio::use_awaitable);
  }
  co_return std::nullopt;
}

// Built outside the coroutines (GCC 12: see info_endpoints.cpp).
Json disk_json(const DiskWorker& disk, int64_t block_bytes) {
  const DiskTierStats d = disk.stats();
  return Json{{"tier", "disk"},
              {"blocks", d.n_blocks},
              {"capacity_blocks", d.capacity_blocks},
              {"bytes", d.n_blocks * block_bytes},
              {"capacity_bytes", d.capacity_blocks * block_bytes},
              {"writes_enabled", d.writing},
              {"write_failures", d.n_write_failures},
              {"reopens", d.n_reopens},
              {"persist", disk.writes_through() ? "all" : "none"},
              {"loads", d.n_loads},
              {"load_failures", d.n_load_failures},
              {"dropped", d.n_dropped},
              {"bytes_written", d.bytes_written},
              {"bytes_read", d.bytes_read},
              {"moves_in_flight", d.n_in_flight}};
}

// The pinned host tier below a GPU's VRAM.
Json host_json(const HostTierStats& t1, int64_t block_bytes) {
  return Json{{"tier", "host"},
              {"blocks_used", t1.n_copies_in_flight},
              {"blocks_cached", t1.n_blocks_cached},
              {"capacity_blocks", t1.n_blocks_total},
              {"capacity_bytes", t1.n_blocks_total * block_bytes},
              {"block_hits", t1.n_block_hits},
              {"blocks_promoted", t1.n_blocks_promoted},
              {"blocks_demoted", t1.n_blocks_demoted},
              {"bytes_to_vram", t1.bytes_to_device},
              {"bytes_from_vram", t1.bytes_to_host},
              {"moves_in_flight", t1.n_copies_in_flight}};
}

http::Response cache_response(const ModelHost& host) {
  const EngineStats stats = host.engine().stats();
  const int64_t block_bytes = host.kv_block_bytes();
  const std::optional<HostTierStats>& t1 = stats.host_tier;
  Json tiers = Json::array();
  // The tier the backend computes in (VRAM on a GPU, host memory on the CPU);
  // its hits exclude blocks brought up from below.
  tiers.push_back(Json{{"tier", t1 ? "vram" : "host"},
                       {"blocks_used", stats.n_blocks_used},
                       {"blocks_cached", stats.n_blocks_cached},
                       {"capacity_blocks", stats.n_blocks_total},
                       {"capacity_bytes", stats.n_blocks_total * block_bytes},
                       {"block_hits", stats.n_block_hits - (t1 ? t1->n_blocks_promoted
                                                               : stats.n_blocks_loaded)}});
  if (t1) tiers.push_back(host_json(*t1, block_bytes));
  if (const DiskWorker* disk = host.disk_tier()) {
    Json json = disk_json(*disk, block_bytes);
    // Prompts found on disk but computed, the cost model judging that faster.
    json["loads_declined"] = stats.n_loads_declined;
    tiers.push_back(std::move(json));
  }
  return json_response(http::Status::ok,
                       Json{{"block_tokens", host.kv_block_tokens()},
                            {"block_bytes", block_bytes},
                            {"cached_prompt_tokens", stats.n_cached_prompt_tokens},
                            {"prompt_tokens", stats.n_prompt_tokens},
                            {"tiers", std::move(tiers)}});
}

http::Response timed_out_response(const char* what) {
  return error_response(openai::unavailable(std::string(what) + " did not finish in time."));
}

// The choice is made here, not in the coroutine: GCC 12 double-frees the
// temporaries of a conditional expression in a coroutine frame.
http::Response cleared_response(std::optional<int64_t> n_host_blocks) {
  if (!n_host_blocks) return timed_out_response("Clearing the cache");
  return json_response(http::Status::ok, Json{{"cleared", {{"host_blocks", *n_host_blocks}}}});
}

http::Response persisted_response(std::optional<int64_t> n_on_disk) {
  if (!n_on_disk) return timed_out_response("Writing the cache to disk");
  return json_response(http::Status::ok, Json{{"blocks_on_disk", *n_on_disk}});
}

http::Response not_ready_response() {
  return error_response(openai::unavailable("The model is still loading. Retry after a moment."));
}

}  // namespace

http::Awaitable<void> serve_cache(http::HttpExchange& exchange, ApiContext& api) {
  if (api.model_host.state() != ModelHost::State::kReady) {
    co_await exchange.respond(not_ready_response());
    co_return;
  }
  co_await exchange.respond(cache_response(api.model_host));
}

http::Awaitable<void> serve_cache_clear(http::HttpExchange& exchange, ApiContext& api) {
  if (api.model_host.state() != ModelHost::State::kReady) {
    co_await exchange.respond(not_ready_response());
    co_return;
  }
  auto reply = std::make_shared<EngineReply>();
  api.model_host.engine().clear_cache([reply](int64_t n) { reply->set(n); });
  const std::optional<int64_t> n = co_await wait_for(reply, kClearTimeout);
  co_await exchange.respond(cleared_response(n));
}

http::Awaitable<void> serve_cache_persist(http::HttpExchange& exchange, ApiContext& api) {
  if (api.model_host.state() != ModelHost::State::kReady) {
    co_await exchange.respond(not_ready_response());
    co_return;
  }
  auto reply = std::make_shared<EngineReply>();
  api.model_host.engine().persist_cache([reply](int64_t n) { reply->set(n); });
  const std::optional<int64_t> n = co_await wait_for(reply, kPersistTimeout);
  co_await exchange.respond(persisted_response(n));
}

}  // namespace strata
