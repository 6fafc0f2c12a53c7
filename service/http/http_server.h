// HttpServer: accepts HTTP/1.1 connections on Unix and TCP listeners and runs
// each connection as a coroutine on its own strand: read a request (limits
// and timeouts applied), hand it to the RequestHandler, repeat while the
// connection is kept alive. Stopping is in two moves, for a graceful drain:
// stop_accepting(), then close_idle_connections() — busy connections close
// after their current response.
//
// Threads: construct, listen and adopt before running the io_context;
// stop_accepting, close_idle_connections and n_connections from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "service/http/http_exchange.h"
#include "service/http/http_types.h"

namespace strata::http {

struct HttpServerOptions {
  int64_t max_body_bytes = 8 << 20;
  int64_t max_header_bytes = 16 << 10;
  // From a request's first byte to its last: stalled or very slow clients.
  std::chrono::seconds request_timeout{60};
  // Between requests on a kept-alive connection.
  std::chrono::seconds idle_timeout{75};
  // One write to a client that does not read (its buffers full).
  std::chrono::seconds write_timeout{30};
};

// Answers one request. Must not throw (an exception is logged and answered
// with a 500 when nothing was sent yet).
using RequestHandler = std::function<Awaitable<void>(HttpExchange&)>;

class HttpServer {
 public:
  HttpServer(asio::io_context& io, HttpServerOptions options, RequestHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on a new Unix socket at `path` (mode 0660, its folder created);
  // a stale socket file left by a dead server is replaced. Throws
  // std::runtime_error when another server answers there or the path is taken.
  void listen_unix(const std::string& path);
  // Listens on TCP; port 0 picks a free one. Returns the bound endpoint.
  asio::ip::tcp::endpoint listen_tcp(const std::string& host, uint16_t port);
  // Serves on a listening socket handed over by systemd (socket activation).
  // `trusted`: a Unix socket (requests skip the Host and key checks).
  void adopt_listener(int fd, bool trusted);

  void stop_accepting();
  void close_idle_connections();
  int64_t n_connections() const;

 private:
  struct Connection;
  template <class Acceptor>
  Awaitable<void> accept_loop(Acceptor& acceptor, bool trusted);
  void start_connection(asio::generic::stream_protocol::socket socket, bool trusted);
  Awaitable<void> serve(std::shared_ptr<Connection> connection);
  Awaitable<bool> await_first_byte(Connection& connection);
  Awaitable<bool> read_request(Connection& connection, Request& request);
  Awaitable<void> refuse_unreadable(Connection& connection,
                                    const bhttp::request_parser<bhttp::string_body>& parser,
                                    boost::system::error_code error, bool timed_out);
  Awaitable<void> refuse(Connection& connection, Status status, std::string message);

  asio::io_context& io_;
  const HttpServerOptions options_;
  const RequestHandler handler_;
  std::vector<std::unique_ptr<asio::local::stream_protocol::acceptor>> unix_acceptors_;
  std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> tcp_acceptors_;
  std::vector<std::string> socket_files_;  // created here: removed on destruction

  mutable std::mutex mutex_;
  std::map<Connection*, std::weak_ptr<Connection>> connections_;  // under mutex_
  bool draining_ = false;              // under mutex_
};

}  // namespace strata::http
