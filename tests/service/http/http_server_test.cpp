// HttpServer end to end: an in-process server on a real Unix socket and a real
// TCP port, driven by raw sockets so that every test sees the exact bytes on
// the wire.
#include "service/http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::http {
namespace {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

// ---------------------------------------------------------------------------
// A raw client: bytes in, bytes out.

struct WireResponse {
  std::string head;  // status line and headers, up to and with the blank line
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string raw_body;                        // as on the wire (chunk framing included)
  std::string body;                            // decoded
  std::vector<std::string> chunks;             // when chunked

  bool has(const std::string& name) const { return headers.count(name) != 0; }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class RawClient {
 public:
  explicit RawClient(int fd) : fd_(fd) {}
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() { close(); }

  // Connected, or nullptr when refused.
  static std::unique_ptr<RawClient> try_unix(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      return nullptr;
    }
    return std::make_unique<RawClient>(fd);
  }
  static std::unique_ptr<RawClient> try_tcp(uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      return nullptr;
    }
    return std::make_unique<RawClient>(fd);
  }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // One read, waiting at most `timeout`. False on timeout or once closed.
  bool read_some(Millis timeout) {
    if (closed_) return false;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (ready <= 0) return false;
    char data[65536];
    const ssize_t n = ::recv(fd_, data, sizeof data, 0);
    if (n > 0) {
      buffer_.append(data, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) return true;
    closed_ = true;  // EOF, or reset
    reset_ = n < 0;
    return false;
  }

  // Reads until the buffer holds `size` bytes (true) or the time is up or the
  // peer closed (false).
  bool read_at_least(size_t size, Millis timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (buffer_.size() < size) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left <= 0ms || closed_) return false;
      read_some(left);
    }
    return true;
  }
  bool read_until(std::string_view needle, Millis timeout, size_t from = 0) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (buffer_.find(needle, from) == std::string::npos) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left <= 0ms || closed_) return false;
      read_some(left);
    }
    return true;
  }

  // True when the server closes the connection within `timeout`; bytes that
  // come first are kept.
  bool wait_closed(Millis timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (!closed_) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left <= 0ms) return false;
      read_some(left);
    }
    return true;
  }

  // Nothing arrives and the connection stays open for `time`.
  bool quiet_for(Millis time) {
    const size_t before = buffer_.size();
    const Clock::time_point deadline = Clock::now() + time;
    for (;;) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
      if (left <= 0ms) break;
      read_some(left);
      if (closed_ || buffer_.size() != before) return false;
    }
    return true;
  }

  // One whole response off the front of the buffer.
  std::optional<WireResponse> read_response(Millis timeout = 5000ms) {
    const Clock::time_point deadline = Clock::now() + timeout;
    auto left = [&] {
      return std::max(Millis(0), std::chrono::duration_cast<Millis>(deadline - Clock::now()));
    };
    if (!read_until("\r\n\r\n", left())) return std::nullopt;
    WireResponse r;
    const size_t head_end = buffer_.find("\r\n\r\n") + 4;
    r.head = buffer_.substr(0, head_end);
    // Status line.
    const size_t line_end = r.head.find("\r\n");
    const std::string status_line = r.head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return std::nullopt;
    r.status = std::stoi(status_line.substr(9, 3));
    size_t at = line_end + 2;
    while (at < head_end - 2) {
      const size_t end = r.head.find("\r\n", at);
      const std::string line = r.head.substr(at, end - at);
      const size_t colon = line.find(':');
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[lower(line.substr(0, colon))] = value;
      at = end + 2;
    }
    size_t body_at = head_end;
    if (r.status / 100 == 1) {
      buffer_.erase(0, head_end);
      return r;
    }
    if (lower(r.header("transfer-encoding")) == "chunked") {
      for (;;) {
        if (!read_until("\r\n", left(), body_at)) return std::nullopt;
        const size_t size_end = buffer_.find("\r\n", body_at);
        const size_t size = std::stoul(buffer_.substr(body_at, size_end - body_at), nullptr, 16);
        if (!read_at_least(size_end + 2 + size + 2, left())) return std::nullopt;
        const std::string data = buffer_.substr(size_end + 2, size);
        if (buffer_.substr(size_end + 2 + size, 2) != "\r\n") return std::nullopt;
        body_at = size_end + 2 + size + 2;
        if (size == 0) break;
        r.chunks.push_back(data);
        r.body += data;
      }
    } else if (r.has("content-length")) {
      const size_t size = std::stoul(r.header("content-length"));
      if (!read_at_least(head_end + size, left())) return std::nullopt;
      r.body = buffer_.substr(head_end, size);
      body_at = head_end + size;
    } else {
      wait_closed(left());
      body_at = buffer_.size();
      r.body = buffer_.substr(head_end);
    }
    r.raw_body = buffer_.substr(head_end, body_at - head_end);
    buffer_.erase(0, body_at);
    return r;
  }

  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string& buffer() { return buffer_; }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
  bool reset_ = false;
};

std::string post(const std::string& target, const std::string& body,
                 const std::string& extra_headers = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
}

std::string get(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + extra_headers + "\r\n";
}

// Polls `condition` until it holds or `timeout` passes.
template <class F>
bool eventually(F&& condition, Millis timeout = 5000ms) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// ---------------------------------------------------------------------------
// The server under test, its handler and what the handler saw.

enum class Transport { kUnix, kTcp };

std::string transport_name(const ::testing::TestParamInfo<Transport>& info) {
  return info.param == Transport::kUnix ? "Unix" : "Tcp";
}

class ServerFixture {
 public:
  ServerFixture() {
    char name[] = "/tmp/strata-http-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = name;
    socket_path_ = dir_ + "/sub/strata.sock";  // the folder does not exist yet
  }
  ~ServerFixture() {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void start(HttpServerOptions options = {}) {
    server_ = std::make_unique<HttpServer>(
        io_, options, [this](HttpExchange& exchange) { return handle(exchange); });
    server_->listen_unix(socket_path_);
    port_ = server_->listen_tcp("127.0.0.1", 0).port();
    thread_ = std::thread([this] { io_.run(); });
  }

  void stop() {
    if (!server_) return;
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }

  std::unique_ptr<RawClient> connect(Transport transport) {
    auto client = transport == Transport::kUnix ? RawClient::try_unix(socket_path_)
                                                : RawClient::try_tcp(port_);
    EXPECT_TRUE(client != nullptr) << "cannot connect";
    return client;
  }

  // --- what the handler recorded (io thread → test thread) ---
  struct Gone {
    bool decided = false;
    bool gone = false;  // client_gone() won the race
    Clock::time_point at;
  };
  std::optional<Gone> wait_gone(Millis timeout) {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, timeout, [&] { return gone_.decided; })) return std::nullopt;
    return gone_;
  }
  bool wait_slow_started(Millis timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return slow_timer_ != nullptr; });
  }
  void release_slow() {
    std::lock_guard lock(mutex_);
    asio::steady_timer* timer = slow_timer_;
    asio::post(timer->get_executor(), [timer] { timer->cancel(); });
  }
  int handled() const { return handled_.load(); }

 protected:
  Awaitable<void> handle(HttpExchange& exchange) {
    handled_.fetch_add(1);
    const std::string path(exchange.path());
    const Request& request = exchange.request();
    if (path == "/echo") {
      Response response{Status::ok, 11};
      response.set(bhttp::field::content_type, "text/plain");
      response.body() = request.body();
      co_await exchange.respond(std::move(response));
    } else if (path == "/stream") {
      if (!co_await exchange.start_stream(Status::ok, "text/event-stream")) co_return;
      for (const char* chunk : {"one", "two", "three"}) {
        if (!co_await exchange.write_chunk(chunk)) co_return;
      }
      co_await exchange.end_stream();
    } else if (path == "/wait-gone") {
      // Races client_gone() against a timer, as the generation endpoint does.
      asio::steady_timer timer(co_await asio::this_coro::executor, wait_gone_for_);
      auto race = co_await (exchange.client_gone() || timer.async_wait(asio::use_awaitable));
      {
        std::lock_guard lock(mutex_);
        gone_ = Gone{.decided = true, .gone = race.index() == 0, .at = Clock::now()};
      }
      changed_.notify_all();
      Response response{Status::ok, 11};
      response.body() = "waited";
      co_await exchange.respond(std::move(response));
    } else if (path == "/throw") {
      throw std::runtime_error("the handler failed");
    } else if (path == "/slow") {
      asio::steady_timer timer(co_await asio::this_coro::executor,
                               asio::steady_timer::time_point::max());
      {
        std::lock_guard lock(mutex_);
        slow_timer_ = &timer;
      }
      changed_.notify_all();
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      {
        std::lock_guard lock(mutex_);
        slow_timer_ = nullptr;
      }
      Response response{Status::ok, 11};
      response.body() = "slow done";
      co_await exchange.respond(std::move(response));
    } else {
      Response response{Status::not_found, 11};
      response.body() = "no such path";
      co_await exchange.respond(std::move(response));
    }
  }

  // Declared before io_: handlers' frames are destroyed with io_.
  std::mutex mutex_;
  std::condition_variable changed_;
  Gone gone_;
  asio::steady_timer* slow_timer_ = nullptr;
  std::atomic<int> handled_{0};
  Clock::duration wait_gone_for_ = 10s;

  std::string dir_;
  std::string socket_path_;
  uint16_t port_ = 0;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      asio::make_work_guard(io_)};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// The protocol, on both listeners.
class HttpProtocolTest : public ServerFixture, public ::testing::TestWithParam<Transport> {
 protected:
  HttpProtocolTest() {
    HttpServerOptions options;
    options.max_header_bytes = 1024;
    options.max_body_bytes = 1024;
    start(options);
  }
  std::unique_ptr<RawClient> connect() { return ServerFixture::connect(GetParam()); }
};

INSTANTIATE_TEST_SUITE_P(BothListeners, HttpProtocolTest,
                         ::testing::Values(Transport::kUnix, Transport::kTcp), transport_name);

// Server-level behaviour; each test starts the server with its own options.
class HttpServerTest : public ServerFixture, public ::testing::Test {};

nlohmann::json error_json(const WireResponse& r) {
  EXPECT_EQ(r.header("content-type"), "application/json") << r.head;
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(body.contains("error")) << r.body;
  return body.value("error", nlohmann::json::object());
}

TEST_P(HttpProtocolTest, KeepAliveServesTwoRequestsOnOneConnection) {
  auto client = connect();
  ASSERT_TRUE(client->send(post("/echo", "hello")));
  auto first = client->read_response();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, "hello");
  EXPECT_EQ(first->header("content-length"), "5");
  EXPECT_EQ(first->header("server"), "strata");
  EXPECT_NE(lower(first->header("connection")), "close");
  ASSERT_TRUE(client->send(post("/echo", "world")));
  auto second = client->read_response();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "world");
  EXPECT_TRUE(client->quiet_for(100ms)) << "the connection stays open";
  EXPECT_EQ(server_->n_connections(), 1);
}

TEST_P(HttpProtocolTest, PipelinedRequestsAreAnsweredInOrder) {
  auto client = connect();
  ASSERT_TRUE(client->send(post("/echo", "first") + get("/stream") + post("/echo", "third")));
  auto a = client->read_response();
  auto b = client->read_response();
  auto c = client->read_response();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->body, "first");
  EXPECT_EQ(b->body, "onetwothree");
  EXPECT_EQ(c->body, "third");
  EXPECT_TRUE(client->buffer().empty()) << client->buffer();
}

TEST_P(HttpProtocolTest, ConnectionCloseIsHonoured) {
  auto client = connect();
  ASSERT_TRUE(client->send(post("/echo", "bye", "Connection: close\r\n")));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "bye");
  EXPECT_EQ(lower(response->header("connection")), "close");
  EXPECT_TRUE(client->wait_closed(2000ms)) << "the server closes after the response";
  EXPECT_TRUE(client->buffer().empty());
}

TEST_P(HttpProtocolTest, Http10WithoutKeepAliveCloses) {
  auto client = connect();
  ASSERT_TRUE(client->send("GET /echo HTTP/1.0\r\n\r\n"));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->head.rfind("HTTP/1.0 200", 0), 0u) << response->head;
  EXPECT_TRUE(client->wait_closed(2000ms));
}

TEST_P(HttpProtocolTest, ChunkedResponseDecodes) {
  auto client = connect();
  ASSERT_TRUE(client->send(get("/stream")));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(lower(response->header("transfer-encoding")), "chunked");
  EXPECT_EQ(response->header("content-type"), "text/event-stream");
  EXPECT_EQ(response->header("cache-control"), "no-cache");
  EXPECT_FALSE(response->has("content-length"));
  EXPECT_EQ(response->chunks, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(response->raw_body, "3\r\none\r\n3\r\ntwo\r\n5\r\nthree\r\n0\r\n\r\n");
  // Kept alive after a stream.
  ASSERT_TRUE(client->send(post("/echo", "after")));
  auto next = client->read_response();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "after");
}

TEST_P(HttpProtocolTest, ExpectContinueGets100BeforeTheBody) {
  auto client = connect();
  ASSERT_TRUE(
      client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 7\r\nExpect: "
                   "100-continue\r\n\r\n"));
  ASSERT_TRUE(client->read_until("\r\n\r\n", 2000ms)) << "no 100 Continue: " << client->buffer();
  EXPECT_EQ(client->buffer(), "HTTP/1.1 100 Continue\r\n\r\n");
  client->buffer().clear();
  ASSERT_TRUE(client->send("payload"));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "payload");
}

TEST_P(HttpProtocolTest, NoContinueWithoutExpect) {
  auto client = connect();
  ASSERT_TRUE(client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\n"));
  EXPECT_TRUE(client->quiet_for(100ms)) << client->buffer();
  ASSERT_TRUE(client->send("abc"));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "abc");
}

TEST_P(HttpProtocolTest, HeadersOverTheLimitAre431) {
  auto client = connect();
  ASSERT_TRUE(client->send(get("/echo", "X-Big: " + std::string(2000, 'a') + "\r\n")));
  auto response = client->read_response();
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(error_json(*response).value("type", ""), "invalid_request_error");
  EXPECT_EQ(lower(response->header("connection")), "close");
  EXPECT_TRUE(client->wait_closed(2000ms));
}

TEST_P(HttpProtocolTest, HeadersJustUnderTheLimitAreFine) {
  auto client = connect();
  ASSERT_TRUE(client->send(post("/echo", "ok", "X-Big: " + std::string(800, 'a') + "\r\n")));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
}

// Content-Length above the limit: refused from the headers alone, the body
// never read.
TEST_P(HttpProtocolTest, ContentLengthOverTheLimitIs413) {
  auto client = connect();
  ASSERT_TRUE(client->send(
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000\r\n\r\n"));
  auto response = client->read_response();
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 413) << response->head << response->body;
  const nlohmann::json error = error_json(*response);
  EXPECT_NE(error.value("message", "").find("1024"), std::string::npos) << error.dump();
  EXPECT_EQ(lower(response->header("connection")), "close");
  EXPECT_TRUE(client->wait_closed(2000ms));
  EXPECT_EQ(handled(), 0);
}

TEST_P(HttpProtocolTest, ContentLengthOverTheLimitWithExpectIs413Without100) {
  auto client = connect();
  ASSERT_TRUE(client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2000\r\n"
                           "Expect: 100-continue\r\n\r\n"));
  auto response = client->read_response();
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 413) << "not 100: the client must not send the body";
}

TEST_P(HttpProtocolTest, ChunkedBodyOverTheLimitIs413) {
  auto client = connect();
  std::string request =
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 4; ++i) request += "200\r\n" + std::string(512, 'b') + "\r\n";
  request += "0\r\n\r\n";
  ASSERT_TRUE(client->send(request));
  auto response = client->read_response();
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 413) << response->body;
  error_json(*response);
  EXPECT_TRUE(client->wait_closed(2000ms));
  EXPECT_EQ(handled(), 0);
}

TEST_P(HttpProtocolTest, BodiesAtTheLimitAreAccepted) {
  auto client = connect();
  const std::string body(1024, 'c');
  ASSERT_TRUE(client->send(post("/echo", body)));
  auto plain = client->read_response();
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->body, body);
  ASSERT_TRUE(
      client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "200\r\n" +
                   body.substr(0, 512) + "\r\n200\r\n" + body.substr(512) + "\r\n0\r\n\r\n"));
  auto chunked = client->read_response();
  ASSERT_TRUE(chunked);
  EXPECT_EQ(chunked->status, 200);
  EXPECT_EQ(chunked->body, body);
}

// Not HTTP at all: the request line itself is garbage.
TEST_P(HttpProtocolTest, GarbageRequestLineIs400) {
  auto client = connect();
  ASSERT_TRUE(client->send("HELLO THERE\r\n\r\n"));
  EXPECT_TRUE(client->wait_closed(2000ms));
  auto response = client->read_response(100ms);
  ASSERT_TRUE(response) << "closed without a response; got '" << client->buffer() << "'";
  EXPECT_EQ(response->status, 400);
  error_json(*response);
}

TEST_P(HttpProtocolTest, BinaryGarbageIs400) {
  auto client = connect();
  ASSERT_TRUE(
      client->send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15)));
  EXPECT_TRUE(client->wait_closed(2000ms));
  auto response = client->read_response(100ms);
  ASSERT_TRUE(response) << "a TLS hello got no response; got '" << client->buffer() << "'";
  EXPECT_EQ(response->status, 400);
}

// A valid request line, then a header line that is not a header.
TEST_P(HttpProtocolTest, GarbageHeaderIs400) {
  auto client = connect();
  ASSERT_TRUE(client->send("GET /echo HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n"));
  auto response = client->read_response();
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 400);
  const nlohmann::json error = error_json(*response);
  EXPECT_EQ(error.value("type", ""), "invalid_request_error");
  EXPECT_TRUE(client->wait_closed(2000ms));
  EXPECT_EQ(handled(), 0);
}

TEST_P(HttpProtocolTest, HandlerThatThrowsGets500Json) {
  auto client = connect();
  ASSERT_TRUE(client->send(get("/throw")));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  const nlohmann::json error = error_json(*response);
  EXPECT_EQ(error.value("type", ""), "server_error");
  EXPECT_EQ(error.value("message", ""), "internal error") << "no internals leak";
  EXPECT_EQ(lower(response->header("connection")), "close");
  EXPECT_TRUE(client->wait_closed(2000ms));
  // The server goes on.
  auto other = connect();
  ASSERT_TRUE(other->send(post("/echo", "still here")));
  auto next = other->read_response();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "still here");
}

TEST_P(HttpProtocolTest, ClientGoneFiresWhenTheClientCloses) {
  auto client = connect();
  ASSERT_TRUE(client->send(get("/wait-gone")));
  std::this_thread::sleep_for(100ms);  // the handler is waiting
  EXPECT_FALSE(wait_gone(0ms)) << "nothing decided while the client is there";
  const Clock::time_point closed_at = Clock::now();
  client->close();
  auto gone = wait_gone(3000ms);
  ASSERT_TRUE(gone) << "client_gone() did not fire (the handler's timer is 10 s)";
  EXPECT_TRUE(gone->gone);
  const auto latency = std::chrono::duration_cast<Millis>(gone->at - closed_at);
  EXPECT_LT(latency, 200ms) << "client_gone() took " << latency.count() << " ms";
  std::printf("client_gone latency: %lld ms\n", static_cast<long long>(latency.count()));
  EXPECT_TRUE(eventually([&] { return server_->n_connections() == 0; }));
}

TEST_P(HttpProtocolTest, ClientGoneFiresOnHalfClose) {
  auto client = connect();
  ASSERT_TRUE(client->send(get("/wait-gone")));
  std::this_thread::sleep_for(100ms);
  client->shutdown_write();
  auto gone = wait_gone(3000ms);
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->gone) << "an orderly shutdown of the client's side reads as gone";
}

// A request sent while the first one is being answered makes the socket
// readable; it must not read as the client leaving.
TEST_P(HttpProtocolTest, ClientGoneDoesNotFireForAPipelinedRequest) {
  wait_gone_for_ = 400ms;
  auto client = connect();
  ASSERT_TRUE(client->send(get("/wait-gone")));
  std::this_thread::sleep_for(100ms);  // the first request is read and waiting
  ASSERT_TRUE(client->send(post("/echo", "second")));
  auto gone = wait_gone(3000ms);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->gone) << "a pipelined request was taken for the client leaving";
  auto first = client->read_response();
  auto second = client->read_response();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "waited");
  EXPECT_EQ(second->body, "second") << "the pipelined request is still answered";
}

TEST_P(HttpProtocolTest, ClientGoneDoesNotFireForARequestInTheSameWrite) {
  wait_gone_for_ = 300ms;
  auto client = connect();
  ASSERT_TRUE(client->send(get("/wait-gone") + post("/echo", "second")));
  auto gone = wait_gone(3000ms);
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->gone);
  auto first = client->read_response();
  auto second = client->read_response();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(second->body, "second");
}

TEST_F(HttpServerTest, StalledHeadersTimeOutAfterRequestTimeout) {
  HttpServerOptions options;
  options.request_timeout = 1s;
  options.idle_timeout = 30s;  // longer, so that it cannot be what closes
  start(options);
  auto client = connect(Transport::kTcp);
  ASSERT_TRUE(client->send("GET /echo HTTP/1.1\r\nHost: localhost\r\n"));  // and no more
  const Clock::time_point sent = Clock::now();
  EXPECT_TRUE(client->wait_closed(4000ms))
      << "a request stalled in its headers is still open after 4 s (request_timeout 1 s)";
  const auto took = std::chrono::duration_cast<Millis>(Clock::now() - sent);
  EXPECT_GE(took, 900ms) << "closed before the timeout";
}

TEST_F(HttpServerTest, StalledBodyGets408) {
  HttpServerOptions options;
  options.request_timeout = 1s;
  start(options);
  auto client = connect(Transport::kTcp);
  ASSERT_TRUE(
      client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nabc"));
  auto response = client->read_response(4000ms);
  ASSERT_TRUE(response) << client->buffer();
  EXPECT_EQ(response->status, 408);
  EXPECT_TRUE(client->wait_closed(2000ms));
  EXPECT_EQ(handled(), 0);
}

TEST_F(HttpServerTest, IdleTimeoutClosesAKeptAliveConnection) {
  HttpServerOptions options;
  options.idle_timeout = 1s;
  start(options);
  auto client = connect(Transport::kUnix);
  ASSERT_TRUE(client->send(post("/echo", "x")));
  ASSERT_TRUE(client->read_response());
  const Clock::time_point answered = Clock::now();
  EXPECT_TRUE(client->wait_closed(4000ms));
  EXPECT_GE(Clock::now() - answered, 900ms);
  EXPECT_TRUE(client->buffer().empty()) << "closed silently: " << client->buffer();
}

TEST_F(HttpServerTest, CloseIdleConnectionsLetsBusyOnesFinish) {
  start();
  auto idle = connect(Transport::kTcp);
  ASSERT_TRUE(idle->send(post("/echo", "x")));
  ASSERT_TRUE(idle->read_response());
  auto busy = connect(Transport::kUnix);
  ASSERT_TRUE(busy->send(get("/slow")));
  ASSERT_TRUE(wait_slow_started(3000ms));
  ASSERT_TRUE(eventually([&] { return server_->n_connections() == 2; }));

  server_->close_idle_connections();
  EXPECT_TRUE(idle->wait_closed(1000ms)) << "the idle connection is closed at once";
  EXPECT_TRUE(idle->buffer().empty());
  EXPECT_TRUE(busy->quiet_for(100ms)) << "the busy one is left to finish";
  EXPECT_EQ(server_->n_connections(), 1);

  release_slow();
  auto response = busy->read_response();
  ASSERT_TRUE(response) << busy->buffer();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "slow done");
  EXPECT_TRUE(busy->wait_closed(2000ms)) << "then closed, though kept alive";
  EXPECT_TRUE(eventually([&] { return server_->n_connections() == 0; }));

  // Still accepting (stop_accepting was not called), but a new connection is
  // closed at once.
  auto late = connect(Transport::kTcp);
  ASSERT_TRUE(late);
  late->send(post("/echo", "late"));
  EXPECT_TRUE(late->wait_closed(2000ms));
  EXPECT_EQ(late->buffer().find("late"), std::string::npos);
}

TEST_F(HttpServerTest, StopAcceptingRefusesNewConnections) {
  start();
  auto existing = connect(Transport::kTcp);
  ASSERT_TRUE(existing->send(post("/echo", "a")));
  ASSERT_TRUE(existing->read_response());

  server_->stop_accepting();
  EXPECT_TRUE(eventually([&] { return RawClient::try_tcp(port_) == nullptr; }, 2000ms))
      << "TCP still accepts";
  EXPECT_TRUE(eventually([&] { return RawClient::try_unix(socket_path_) == nullptr; }, 2000ms))
      << "the Unix socket still accepts";
  // The connection already open is served as before.
  ASSERT_TRUE(existing->send(post("/echo", "b")));
  auto response = existing->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "b");
}

TEST_F(HttpServerTest, SocketFileHasMode0660AndIsRemovedAtTheEnd) {
  start();
  struct stat info {};
  ASSERT_EQ(::lstat(socket_path_.c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 07777, 0660u) << std::oct << (info.st_mode & 07777);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/sub")) << "its folder was created";
  stop();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(socket_path_)));
}

TEST_F(HttpServerTest, SecondServerOnALiveSocketPathThrows) {
  start();
  asio::io_context other_io;
  HttpServer other(other_io, {}, [](HttpExchange&) -> Awaitable<void> { co_return; });
  try {
    other.listen_unix(socket_path_);
    ADD_FAILURE() << "listen_unix took a live server's socket";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(socket_path_), std::string::npos) << e.what();
  }
  // The first server still answers there.
  auto client = connect(Transport::kUnix);
  ASSERT_TRUE(client->send(post("/echo", "mine")));
  auto response = client->read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "mine");
}

TEST_F(HttpServerTest, ListenTcpPortZeroPicksAPort) {
  start();
  EXPECT_NE(port_, 0);
}

TEST_F(HttpServerTest, NConnectionsCounts) {
  start();
  EXPECT_EQ(server_->n_connections(), 0);
  auto a = connect(Transport::kUnix);
  auto b = connect(Transport::kTcp);
  auto c = connect(Transport::kTcp);
  EXPECT_TRUE(eventually([&] { return server_->n_connections() == 3; }))
      << server_->n_connections();
  a.reset();
  c->close();
  EXPECT_TRUE(eventually([&] { return server_->n_connections() == 1; }))
      << server_->n_connections();
  ASSERT_TRUE(b->send(post("/echo", "b", "Connection: close\r\n")));
  ASSERT_TRUE(b->read_response());
  EXPECT_TRUE(eventually([&] { return server_->n_connections() == 0; }))
      << server_->n_connections();
}

// close_idle_connections() is documented as callable from any thread, while
// connections end on the io thread. Run it in a loop while many connections
// end: under ASan, any look at a connection already freed is reported.
TEST(HttpServerRaceTest, CloseIdleConnectionsWhileConnectionsEnd) {
  char name[] = "/tmp/strata-http-race-XXXXXX";
  ASSERT_NE(::mkdtemp(name), nullptr);
  const std::string socket_path = std::string(name) + "/s.sock";
  constexpr int kRounds = 8;
  constexpr int kConnections = 48;
  for (int round = 0; round < kRounds; ++round) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    auto server = std::make_unique<HttpServer>(
        io, HttpServerOptions{}, [](HttpExchange& exchange) -> Awaitable<void> {
          co_await exchange.respond(Response{Status::ok, 11});
        });
    server->listen_unix(socket_path);
    std::thread thread([&io] { io.run(); });
    std::vector<std::unique_ptr<RawClient>> clients;
    for (int i = 0; i < kConnections; ++i) clients.push_back(RawClient::try_unix(socket_path));
    ASSERT_TRUE(eventually([&] { return server->n_connections() == kConnections; }));
    std::atomic<bool> stop{false};
    std::thread drainer([&] {
      while (!stop.load()) server->close_idle_connections();
    });
    // Half leave on their own, half are closed by the drain.
    for (int i = 0; i < kConnections; i += 2) clients[i]->close();
    EXPECT_TRUE(eventually([&] { return server->n_connections() == 0; }, 10000ms));
    stop.store(true);
    drainer.join();
    work.reset();
    io.stop();
    thread.join();
    server.reset();
  }
  std::filesystem::remove_all(name);
}

}  // namespace
}  // namespace strata::http
