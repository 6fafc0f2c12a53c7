#include "service/http/http_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <charconv>
#include <exception>
#include <optional>
#include <stdexcept>

#include "common/log.h"
#include "common/str_cat.h"
#include "service/http/unix_socket_path.h"
#include "service/openai/openai_error.h"
#include "service/openai/response_format.h"

namespace strata::http {
namespace {

constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
constexpr size_t kFirstReadBytes = 4096;

std::string error_body(Status status, std::string message) {
  openai::ApiError error{.status = static_cast<int>(status),
                         .type = static_cast<int>(status) >= 500 ? "server_error"
                                                                 : "invalid_request_error",
                         .message = std::move(message)};
  return openai::dump_json(openai::error_json(error));
}

bool expects_continue(const bhttp::request_parser<bhttp::string_body>& parser) {
  return beast::iequals(parser.get()[bhttp::field::expect], "100-continue");
}

// RFC 9112 3.2: an HTTP/1.1 request has exactly one Host. Checking only the
// first of two would let a request name another site in the second.
std::optional<std::string> header_problem(const bhttp::request_header<>& header) {
  const auto hosts = header.count(bhttp::field::host);
  if (hosts > 1) return "The request has more than one Host header.";
  if (hosts == 0 && header.version() >= 11) return "The request has no Host header.";
  return std::nullopt;
}

// Built outside the coroutine: GCC 12 miscompiles a conditional expression
// of temporaries there (a double free).
std::string body_too_large_message(const bhttp::request_parser<bhttp::string_body>& parser,
                                   int64_t limit) {
  // Beast stops before it counts the header as done, so content_length()
  // may not be asked (it asserts); the field is read as sent.
  const std::string_view field = parser.get()[bhttp::field::content_length];
  uint64_t length = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), length);
  if (error == std::errc{} && end == field.data() + field.size() && !field.empty()) {
    return str_cat("The request body is ", length, " bytes; the limit is ", limit, " bytes.");
  }
  return str_cat("The request body is larger than the limit of ", limit, " bytes.");
}

// Cancels the connection's reads when the request has taken too long, but
// leaves the socket open so that a 408 can still be written: basic_stream's
// own timeout would close it.
class ReadDeadline {
 public:
  ReadDeadline(Stream& stream, std::chrono::seconds timeout)
      : state_(std::make_shared<State>()), timer_(stream.get_executor(), timeout) {
    timer_.async_wait([state = state_, &stream](boost::system::error_code error) {
      if (error || state->finished) return;
      state->expired = true;
      stream.socket().cancel(error);
    });
  }
  ~ReadDeadline() { state_->finished = true; }
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

  bool expired() const { return state_->expired; }

 private:
  // Shared with the timer's handler, which may run after the deadline is gone.
  struct State {
    bool expired = false;
    bool finished = false;
  };
  std::shared_ptr<State> state_;
  asio::steady_timer timer_;
};

}  // namespace

// One client connection: its stream and whether it is between requests.
// Shared by its coroutine and, through connections_, by close_idle_connections.
struct HttpServer::Connection {
  Connection(asio::generic::stream_protocol::socket socket, bool trusted)
      : stream(std::move(socket)), trusted(trusted) {}
  Stream stream;
  const bool trusted;
  bool idle = true;  // strand only: waiting for a request's first byte
  beast::flat_buffer buffer;
};

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, RequestHandler handler)
    : io_(io), options_(options), handler_(std::move(handler)) {}

HttpServer::~HttpServer() {
  for (const std::string& path : socket_files_) ::unlink(path.c_str());
}

void HttpServer::listen_unix(const std::string& path) {
  prepare_unix_socket_path(path);
  auto acceptor = std::make_unique<asio::local::stream_protocol::acceptor>(io_);
  acceptor->open();
  acceptor->bind(asio::local::stream_protocol::endpoint(path));
  socket_files_.push_back(path);
  // Owner and group: the group is how local users are given access (DESIGN.md).
  if (::chmod(path.c_str(), 0660) != 0) {
    throw std::runtime_error(str_cat("cannot set the mode of ", path, ": ", std::strerror(errno)));
  }
  acceptor->listen();
  asio::co_spawn(io_, accept_loop(*acceptor, /*trusted=*/true), asio::detached);
  unix_acceptors_.push_back(std::move(acceptor));
}

asio::ip::tcp::endpoint HttpServer::listen_tcp(const std::string& host, uint16_t port) {
  asio::ip::tcp::resolver resolver(io_);
  boost::system::error_code error;
  auto results = resolver.resolve(host, std::to_string(port),
                                  asio::ip::tcp::resolver::passive, error);
  if (error || results.empty()) {
    throw std::runtime_error(str_cat("cannot resolve --host ", host, ": ", error.message()));
  }
  const asio::ip::tcp::endpoint endpoint = results.begin()->endpoint();
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_);
  acceptor->open(endpoint.protocol());
  acceptor->set_option(asio::socket_base::reuse_address(true));
  acceptor->bind(endpoint, error);
  if (error) {
    throw std::runtime_error(str_cat("cannot listen on ", host, ":", port, ": ", error.message()));
  }
  acceptor->listen();
  const asio::ip::tcp::endpoint bound = acceptor->local_endpoint();
  asio::co_spawn(io_, accept_loop(*acceptor, /*trusted=*/false), asio::detached);
  tcp_acceptors_.push_back(std::move(acceptor));
  return bound;
}

void HttpServer::adopt_listener(int fd, bool trusted) {
  if (trusted) {
    auto acceptor = std::make_unique<asio::local::stream_protocol::acceptor>(
        io_, asio::local::stream_protocol(), fd);
    asio::co_spawn(io_, accept_loop(*acceptor, true), asio::detached);
    unix_acceptors_.push_back(std::move(acceptor));
    return;
  }
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const auto protocol = address.ss_family == AF_INET6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4();
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_, protocol, fd);
  asio::co_spawn(io_, accept_loop(*acceptor, false), asio::detached);
  tcp_acceptors_.push_back(std::move(acceptor));
}

template <class Acceptor>
Awaitable<void> HttpServer::accept_loop(Acceptor& acceptor, bool trusted) {
  for (;;) {
    // Each connection runs on its own strand: its coroutine and anything
    // posted to it (events from the engine, a drain) never run concurrently.
    auto [error, socket] = co_await acceptor.async_accept(asio::make_strand(io_), kAsTuple);
    if (error == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (error) {
      // Out of file descriptors and the like: say so, breathe, go on.
      log_warning("accept failed: ", error.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(kAsTuple);
      continue;
    }
    if constexpr (std::is_same_v<Acceptor, asio::ip::tcp::acceptor>) {
      socket.set_option(asio::ip::tcp::no_delay(true), error);  // SSE: no Nagle delay
    }
    start_connection(asio::generic::stream_protocol::socket(std::move(socket)), trusted);
  }
}

void HttpServer::start_connection(asio::generic::stream_protocol::socket socket, bool trusted) {
  auto connection = std::make_shared<Connection>(std::move(socket), trusted);
  {
    std::lock_guard lock(mutex_);
    if (draining_) return;  // the socket closes with `connection`
    connections_.emplace(connection.get(), connection);
  }
  auto executor = connection->stream.get_executor();
  asio::co_spawn(executor, serve(connection), [this, raw = connection.get()](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& what) {
        log_error("connection failed: ", what.what());
      }
    }
    std::lock_guard lock(mutex_);
    connections_.erase(raw);
  });
}

Awaitable<void> HttpServer::serve(std::shared_ptr<Connection> connection) {
  for (;;) {
    Request request;
    if (!co_await read_request(*connection, request)) break;
    HttpExchange exchange(connection->stream, request, connection->trusted,
                          options_.write_timeout, HttpExchange::Clock::now());
    bool failed = false;
    try {
      co_await handler_(exchange);
    } catch (const std::exception& e) {
      log_error("request ", request.target(), " failed: ", e.what());
      failed = true;
    }
    if (failed) {
      if (!exchange.response_started()) {
        Response response{Status::internal_server_error, request.version()};
        response.set(bhttp::field::content_type, "application/json");
        response.body() = error_body(Status::internal_server_error, "internal error");
        exchange.close_after_response();
        co_await exchange.respond(std::move(response));
      }
      break;
    }
    {
      std::lock_guard lock(mutex_);
      if (draining_) break;
    }
    if (!exchange.keep_alive()) break;
  }
  boost::system::error_code ignored;
  connection->stream.socket().shutdown(asio::socket_base::shutdown_send, ignored);
  connection->stream.close();
}

// Waits, up to the idle timeout, for the first byte of the next request.
// False when the client left, went quiet or the server is draining.
Awaitable<bool> HttpServer::await_first_byte(Connection& connection) {
  {
    std::lock_guard lock(mutex_);
    if (draining_) co_return false;
    connection.idle = true;
  }
  bool arrived = connection.buffer.size() > 0;  // pipelined behind the last one
  if (!arrived) {
    // basic_stream's own timeout closes the socket: right here, where there
    // is nothing to answer.
    connection.stream.expires_after(options_.idle_timeout);
    auto [error, n] = co_await connection.stream.async_read_some(
        connection.buffer.prepare(kFirstReadBytes), kAsTuple);
    connection.buffer.commit(n);
    arrived = !error && n > 0;
  }
  connection.stream.expires_never();
  std::lock_guard lock(mutex_);
  connection.idle = false;
  co_return arrived;
}

// Reads one request into `request`. False when the connection is done: the
// client left, timed out, or sent something that got an error response.
Awaitable<bool> HttpServer::read_request(Connection& connection, Request& request) {
  if (!co_await await_first_byte(connection)) co_return false;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(static_cast<uint32_t>(options_.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(options_.max_body_bytes));
  // From the first byte to the last, the request has request_timeout.
  ReadDeadline deadline(connection.stream, options_.request_timeout);
  auto [error, n] = co_await bhttp::async_read_header(connection.stream, connection.buffer,
                                                      parser, kAsTuple);
  if (error) {
    co_await refuse_unreadable(connection, parser, error, deadline.expired());
    co_return false;
  }
  if (auto problem = header_problem(parser.get())) {
    co_await refuse(connection, Status::bad_request, *problem);
    co_return false;
  }
  if (expects_continue(parser) && !parser.is_done()) {
    auto [continue_error, written] =
        co_await asio::async_write(connection.stream, asio::buffer(kContinue), kAsTuple);
    if (continue_error) co_return false;
  }
  if (!parser.is_done()) {
    auto [body_error, body_n] =
        co_await bhttp::async_read(connection.stream, connection.buffer, parser, kAsTuple);
    if (body_error) {
      co_await refuse_unreadable(connection, parser, body_error, deadline.expired());
      co_return false;
    }
  }
  request = parser.release();
  co_return true;
}

// The answer to a request that could not be read, if there is one to give.
Awaitable<void> HttpServer::refuse_unreadable(
    Connection& connection, const bhttp::request_parser<bhttp::string_body>& parser,
    boost::system::error_code error, bool timed_out) {
  if (timed_out) {
    co_await refuse(connection, Status::request_timeout,
                    str_cat("The request was not received within ",
                            options_.request_timeout.count(), " s."));
  } else if (error == bhttp::error::header_limit) {
    co_await refuse(connection, Status::request_header_fields_too_large,
                    str_cat("The request headers are larger than ", options_.max_header_bytes,
                            " bytes."));
  } else if (error == bhttp::error::body_limit) {
    // Beast refuses a Content-Length over the limit before reading the body.
    co_await refuse(connection, Status::payload_too_large,
                    body_too_large_message(parser, options_.max_body_bytes));
  } else if (error != bhttp::error::end_of_stream && error != bhttp::error::partial_message &&
             error != asio::error::eof && error != asio::error::operation_aborted &&
             error != asio::error::connection_reset) {
    co_await refuse(connection, Status::bad_request,
                    str_cat("The request is not valid HTTP/1.1: ", error.message(), "."));
  }
  // Otherwise the client left mid-request: there is no one to answer.
}

// An error response written by the server itself, after which it closes.
Awaitable<void> HttpServer::refuse(Connection& connection, Status status, std::string message) {
  Response response{status, 11};
  response.set(bhttp::field::server, "strata");
  response.set(bhttp::field::content_type, "application/json");
  response.keep_alive(false);
  response.body() = error_body(status, std::move(message));
  response.prepare_payload();
  connection.stream.expires_after(options_.write_timeout);
  co_await bhttp::async_write(connection.stream, response, kAsTuple);
}

void HttpServer::stop_accepting() {
  asio::post(io_, [this] {
    boost::system::error_code ignored;
    for (auto& acceptor : unix_acceptors_) acceptor->close(ignored);
    for (auto& acceptor : tcp_acceptors_) acceptor->close(ignored);
  });
}

void HttpServer::close_idle_connections() {
  std::lock_guard lock(mutex_);
  draining_ = true;
  for (const auto& [raw, weak] : connections_) {
    if (!raw->idle) continue;
    // On the connection's strand, which it may be running on right now; by
    // then it may also have finished, hence the weak pointer.
    asio::post(raw->stream.get_executor(), [weak = weak] {
      if (auto connection = weak.lock(); connection && connection->idle) {
        connection->stream.cancel();
      }
    });
  }
}

int64_t HttpServer::n_connections() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(connections_.size());
}

}  // namespace strata::http
