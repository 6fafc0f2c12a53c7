#include "service/server/daemon.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/str_cat.h"
#include "service/http/http_server.h"
#include "service/server/api_router.h"
#include "service/systemd/listen_fds.h"
#include "service/systemd/systemd_notifier.h"

namespace strata {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);

std::chrono::seconds whole_seconds(double seconds) {
  return std::chrono::seconds(std::max<int64_t>(1, static_cast<int64_t>(seconds + 0.5)));
}

std::chrono::milliseconds whole_milliseconds(double seconds) {
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000 + 0.5)));
}

http::HttpServerOptions http_options(const ServeSettings& s) {
  return {.max_body_bytes = s.max_body_bytes,
          .request_timeout = whole_seconds(s.request_timeout_seconds),
          .idle_timeout = whole_seconds(s.idle_timeout_seconds)};
}

ModelHostOptions model_options(const ServeSettings& s) {
  std::optional<WeightType> kv_type = parse_weight_type(s.kv_type);
  std::optional<std::string> chat_template;
  if (!s.chat_template.empty()) chat_template = s.chat_template;
  return {.model_path = s.model,
          .chat_template = std::move(chat_template),
          .engine = {.context_length = s.context_length, .max_running = s.max_running,
                     .max_batch_tokens = s.max_batch_tokens,
                     .host_cache_bytes = s.host_cache_bytes,
                     .kv_type = kv_type.value_or(WeightType::kF16),
                     .block_tokens = s.block_tokens, .threads = s.threads,
                     .backend = parse_backend(s.backend),
                     .vram_cache_fraction = s.vram_cache_fraction, .cache_dir = s.cache_dir,
                     .disk_cache_bytes = s.disk_cache_bytes, .persist = s.persist == "all",
                     .disk_retry_max = whole_milliseconds(s.disk_retry_seconds)}};
}

// The names a request's "model" may use: the alias, the file name, its stem.
std::vector<std::string> model_names(const ServeSettings& s) {
  const std::filesystem::path file(s.model);
  std::vector<std::string> names{s.model_alias};
  for (std::string name : {file.filename().string(), file.stem().string()}) {
    if (name != s.model_alias) names.push_back(name);
  }
  return names;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

// Listeners handed over by systemd, or those the settings name.
void listen(http::HttpServer& server, const ServeSettings& s) {
  std::vector<systemd::ActivatedSocket> activated = systemd::take_activated_sockets();
  for (const systemd::ActivatedSocket& socket : activated) {
    const bool is_unix = socket.kind == systemd::ActivatedSocket::Kind::kUnix;
    server.adopt_listener(socket.fd, is_unix);
    log_info("listening on ", is_unix ? str_cat("unix:", socket.unix_path) : "a TCP socket",
             " (from systemd)");
  }
  if (!activated.empty()) return;
  if (!s.socket.empty()) {
    server.listen_unix(s.socket);
    log_info("listening on unix:", s.socket);
  }
  if (!s.host.empty()) {
    const auto endpoint = server.listen_tcp(s.host, static_cast<uint16_t>(s.port));
    const std::string address = endpoint.address().is_v6()
                                    ? str_cat("[", endpoint.address().to_string(), "]")
                                    : endpoint.address().to_string();
    log_info("listening on http://", address, ":", endpoint.port(), "/");
  }
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await timer.async_wait(kAsTuple);
}

}  // namespace

Daemon::Daemon(ServeSettings settings) : settings_(std::move(settings)) {}

int Daemon::run() {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  systemd::SystemdNotifier systemd;
  metrics::ServiceMetrics metrics;
  Admission admission(settings_.max_running + settings_.max_waiting);
  ActiveRequests active;
  ModelHost host(model_options(settings_));
  ApiContext api{.model_id = settings_.model_alias, .model_names = model_names(settings_),
                 .started_at = unix_now(), .model_host = host, .metrics = metrics,
                 .admission = admission, .active = active,
                 .access = {.allowed_hosts = settings_.allowed_hosts,
                            .cors_origins = settings_.cors_origins,
                            .api_key = settings_.api_key},
                 .check_host = settings_.host.empty() || is_loopback_host(settings_.host)};
  http::HttpServer server(io, http_options(settings_), [&api](http::HttpExchange& exchange) {
    return serve_api(exchange, api);
  });
  listen(server, settings_);

  std::atomic<int> exit_code{0};
  std::atomic<bool> hurry{false};  // a second signal: cancel now

  auto drain = [&]() -> asio::awaitable<void> {
    systemd.stopping();
    log_info("stopping: finishing ", admission.n_active(), " running request(s)");
    server.stop_accepting();
    server.close_idle_connections();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(
                              settings_.shutdown_grace_seconds * 1000));
    while (!hurry && admission.n_active() > 0 && std::chrono::steady_clock::now() < deadline) {
      co_await sleep_for(50ms);
    }
    if (host.state() == ModelHost::State::kReady && active.size() > 0) {
      log_info("stopping: cancelling ", active.size(), " request(s) still running");
      active.cancel_all(host.engine());
    }
    // Cancelled streams write their last event and close; give them a moment.
    for (int i = 0; i < 100 && server.n_connections() > 0; ++i) co_await sleep_for(50ms);
    io.stop();
  };

  asio::signal_set signals(io, SIGTERM, SIGINT);
  auto on_signals = [&]() -> asio::awaitable<void> {
    auto [error, signal] = co_await signals.async_wait(kAsTuple);
    if (error) co_return;
    log_info("received ", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    asio::co_spawn(io, drain(), asio::detached);
    auto [again, second] = co_await signals.async_wait(kAsTuple);
    if (!again) hurry = true;
  };
  asio::co_spawn(io, on_signals(), asio::detached);

  // While the model loads, keep systemd's start timeout from running out.
  auto keep_systemd_informed = [&]() -> asio::awaitable<void> {
    const std::optional<std::chrono::microseconds> watchdog = systemd.watchdog_interval();
    for (;;) {
      if (host.state() == ModelHost::State::kLoading) systemd.extend_timeout(30s);
      if (watchdog) systemd.watchdog();
      const auto period = watchdog ? std::min<std::chrono::microseconds>(*watchdog / 2, 5s)
                                   : std::chrono::microseconds(5s);
      co_await sleep_for(std::chrono::duration_cast<std::chrono::milliseconds>(period));
    }
  };
  if (systemd.active()) asio::co_spawn(io, keep_systemd_informed(), asio::detached);

  systemd.status(str_cat("loading ", settings_.model));
  log_info("loading ", settings_.model);
  host.start([&](const std::string& error) {
    if (error.empty()) {
      systemd.ready(str_cat("serving ", settings_.model_alias));
      log_info("ready: serving ", settings_.model_alias);
      return;
    }
    log_error("cannot load the model: ", error);
    exit_code = 1;
    io.stop();
  });

  std::vector<std::jthread> threads;
  for (int i = 1; i < settings_.http_threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (std::jthread& thread : threads) thread.join();
  return exit_code;
}

}  // namespace strata
