// libFuzzer target for the HTTP request parser and router: the input is the
// bytes a client sends on one connection to a real HttpServer (Beast's parser
// with the server's limits, its Host and Expect handling) whose handler is the
// real serve_api (service/server/api_router: access checks, CORS, routing),
// serving a model that is still loading.
//
// Input: byte 0 chooses the listener (bit 0: loopback TCP, where the Host, API
// key and Origin checks apply; else the Unix socket) and how the bytes are
// split into writes (bits 1-7: bytes per write, 0 for one write, at most 64
// writes; on the Unix socket each write waits until the server has read the
// one before, so the parser sees the request in exactly those pieces; on TCP
// until the bytes were delivered); the rest goes on the wire, then the client
// shuts its sending side.
//
// Promises checked:
//  - the server sends well-formed HTTP/1.x responses and nothing else, and
//    closes the connection (and forgets it) soon after the client is done;
//  - every request that reaches the handler has one Host (HTTP/1.1), a body
//    within the limit, and gets exactly one response; the server answers
//    unreadable requests itself, once, last, and closes;
//  - no response is a 500 (a handler that threw), every error is an OpenAI
//    error object (/health's "loading" aside), and nothing follows a response
//    that closes the connection.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/sockios.h>

#include <atomic>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/str_cat.h"
#include "service/http/http_server.h"
#include "service/metrics/service_metrics.h"
#include "service/server/api_router.h"
#include "service/server/model_host.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
namespace bhttp = boost::beast::http;

constexpr int64_t kMaxBodyBytes = 4096;
constexpr int64_t kMaxHeaderBytes = 2048;
constexpr size_t kMaxWrites = 64;
// Far longer than the server needs to answer a few KB on loopback; a
// connection still open after it is a hang.
constexpr auto kPatience = std::chrono::seconds(3);

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "http_request_fuzzer: %s\n", what.c_str());
  std::abort();
}

// The server, its API context and the thread that runs them: built once,
// never destroyed (the fuzzer exits with them running; an atexit handler stops
// the thread first).
struct Server {
  boost::asio::io_context io;
  ModelHost host{ModelHostOptions{.model_path = "/nonexistent/never-loaded.gguf", .engine = {}}};
  metrics::ServiceMetrics metrics;
  Admission admission{4};
  ActiveRequests active;
  ApiContext api{.model_id = "tiny",
                 .model_names = {"tiny"},
                 .started_at = 0,
                 .model_host = host,
                 .metrics = metrics,
                 .admission = admission,
                 .active = active,
                 .access = {.allowed_hosts = {"strata.test"},
                            .cors_origins = {"http://localhost:3000"},
                            .api_key = "sk-fuzz"},
                 .check_host = true};
  std::atomic<int64_t> n_handled{0};  // requests handed to the handler
  std::unique_ptr<http::HttpServer> http;
  std::filesystem::path dir;
  std::string unix_path;
  uint16_t tcp_port = 0;
  std::thread thread;
};
Server* server = nullptr;

// What the parser may hand the handler, whatever the client sent.
void check_request(const http::Request& request) {
  const int version = static_cast<int>(request.version());
  if (version != 10 && version != 11) fail(str_cat("a request of version ", version));
  const auto hosts = request.count(bhttp::field::host);
  if (hosts > 1 || (version == 11 && hosts != 1)) fail(str_cat("a request with ", hosts, " Hosts"));
  if (static_cast<int64_t>(request.body().size()) > kMaxBodyBytes) fail("a body over the limit");
}

http::Awaitable<void> handle(http::HttpExchange& exchange) {
  check_request(exchange.request());
  server->n_handled.fetch_add(1);
  co_await serve_api(exchange, server->api);
}

// A blocking connect that a signal interrupts (libFuzzer's timers) carries on in the
// background; POSIX says to wait for it to finish rather than call connect again.
int finish_connect(int fd, int rc) {
  if (rc == 0 || errno != EINTR) return rc;
  pollfd ready{.fd = fd, .events = POLLOUT, .revents = 0};
  while (::poll(&ready, 1, -1) < 0 && errno == EINTR) {
  }
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return -1;
  errno = error;
  return error == 0 ? 0 : -1;
}

int connect_to(bool tcp) {
  const int fd = ::socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(str_cat("socket: ", std::strerror(errno)));
  int rc = 0;
  if (tcp) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(server->tcp_port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    rc = finish_connect(
        fd, ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address));
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  } else {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, server->unix_path.c_str(), server->unix_path.size() + 1);
    rc = finish_connect(
        fd, ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address));
  }
  if (rc != 0) fail(str_cat("connect: ", std::strerror(errno)));
  return fd;
}

// Reads what has arrived into `received`, waiting up to `wait_ms`. False once
// the server has closed its side.
bool read_available(int fd, std::string& received, int wait_ms) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  if (::poll(&p, 1, wait_ms) <= 0) return true;
  char buffer[16384];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  if (n > 0) received.append(buffer, static_cast<size_t>(n));
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR));
}

// Sends `bytes`, then waits until nothing is left in flight (SIOCOUTQ: on a
// Unix socket, bytes the server has not read yet; on TCP, bytes not yet
// acknowledged), reading the responses meanwhile so that the server never
// blocks writing. False when the server closed the connection first.
bool send_and_wait(int fd, std::string_view bytes, std::string& received) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return false;  // the server closed after refusing the request
    }
    if (!read_available(fd, received, n > 0 ? 0 : 1)) return false;
  }
  const auto deadline = Clock::now() + kPatience;
  for (int unread = 1; unread > 0;) {
    if (::ioctl(fd, SIOCOUTQ, &unread) != 0) return false;
    if (!read_available(fd, received, unread > 0 ? 1 : 0)) return false;
    // A server that stopped reading mid-request (its limit reached) has
    // answered and closed; one still reading soon drains the queue.
    if (Clock::now() > deadline) return true;
  }
  return true;
}

struct ParsedResponse {
  int status = 0;
  bool keep_alive = false;
  std::string server;
  std::string content_type;
  std::string body;
};

// The responses in `bytes`; aborts unless the bytes are whole HTTP responses.
std::vector<ParsedResponse> parse_responses(std::string_view bytes) {
  std::vector<ParsedResponse> responses;
  while (!bytes.empty()) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.body_limit(64 << 20);
    while (!parser.is_done()) {
      boost::beast::error_code error;
      const size_t n = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), error);
      bytes.remove_prefix(n);
      if (error == bhttp::error::need_more && !bytes.empty()) continue;
      if (error) fail("a malformed or truncated response: " + error.message());
      if (n == 0 && !parser.is_done()) fail("a response that does not end");
    }
    const auto& message = parser.get();
    responses.push_back({.status = static_cast<int>(message.result_int()),
                         .keep_alive = message.keep_alive(),
                         .server = std::string(message[bhttp::field::server]),
                         .content_type = std::string(message[bhttp::field::content_type]),
                         .body = message.body()});
  }
  return responses;
}

void check_responses(const std::vector<ParsedResponse>& responses, int64_t n_handled) {
  static const std::set<int> kExpected = {200, 204, 400, 401, 403, 404, 405, 413, 431, 503};
  int64_t n_final = 0;
  for (size_t i = 0; i < responses.size(); ++i) {
    const ParsedResponse& r = responses[i];
    if (r.status == 100) continue;  // Expect: 100-continue
    ++n_final;
    if (kExpected.count(r.status) == 0) fail(str_cat("a ", r.status, " response"));
    if (r.server != "strata") fail("a response without Server: strata");
    if (r.status >= 400) {
      if (!r.content_type.starts_with("application/json")) fail("an error that is not JSON");
      // /health says "loading" with a 503 of its own shape; every other error
      // is OpenAI's error object.
      const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
      const bool health = r.status == 503 && body.is_object() && body.size() == 1 &&
                          body.value("status", "") == "loading";
      const bool api_error = body.is_object() && body.contains("error") &&
                             body["error"].is_object() &&
                             body["error"].value("message", nlohmann::json()).is_string() &&
                             body["error"].value("type", nlohmann::json()).is_string();
      if (!health && !api_error) fail("an error that is not an OpenAI error object: " + r.body);
    }
    if (!r.keep_alive && i + 1 != responses.size()) fail("a response after one that closed");
  }
  // One response per handled request, plus at most one refusal by the server
  // itself, which then closes.
  if (n_final != n_handled && n_final != n_handled + 1) {
    fail(str_cat(n_final, " responses to ", n_handled, " handled requests"));
  }
  if (n_final == n_handled + 1 &&
      (responses.back().status < 400 || responses.back().keep_alive)) {
    fail("the server's own answer is not a closing error");
  }
}

void stop_server() {
  server->io.stop();
  server->thread.join();
  std::error_code ignored;
  std::filesystem::remove_all(server->dir, ignored);
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace strata;
  set_log_level(LogLevel::kError);
  server = new Server;  // never freed; see Server
  server->dir = std::filesystem::temp_directory_path() /
                str_cat("strata_http_request_fuzzer_", ::getpid());
  std::filesystem::create_directories(server->dir);
  server->unix_path = (server->dir / "api.sock").string();
  server->http = std::make_unique<http::HttpServer>(
      server->io,
      http::HttpServerOptions{.max_body_bytes = kMaxBodyBytes,
                              .max_header_bytes = kMaxHeaderBytes,
                              .request_timeout = std::chrono::seconds(30),
                              .idle_timeout = std::chrono::seconds(30),
                              .write_timeout = std::chrono::seconds(5)},
      handle);
  server->http->listen_unix(server->unix_path);
  server->tcp_port = server->http->listen_tcp("127.0.0.1", 0).port();
  server->thread = std::thread([] { server->io.run(); });
  std::atexit(stop_server);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  if (size == 0) return 0;
  const bool tcp = (data[0] & 1) != 0;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t piece = data[0] >> 1;
  if (piece == 0) piece = std::max<size_t>(wire.size(), 1);
  piece = std::max(piece, (wire.size() + kMaxWrites - 1) / kMaxWrites);

  server->n_handled.store(0);
  const int fd = connect_to(tcp);
  std::string received;
  for (size_t at = 0; at < wire.size(); at += piece) {
    if (!send_and_wait(fd, wire.substr(at, piece), received)) break;
  }
  ::shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + kPatience;
  while (read_available(fd, received, 10)) {
    if (Clock::now() > deadline) fail("the server kept the connection open after the client left");
  }
  ::close(fd);
  while (server->http->n_connections() != 0) {
    if (Clock::now() > deadline) fail("the server did not forget a closed connection");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  check_responses(parse_responses(received), server->n_handled.load());
  return 0;
}
