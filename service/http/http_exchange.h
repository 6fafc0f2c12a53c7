// HttpExchange: one request and its response on a connection, as the request
// handler sees it. The handler answers either with one whole response or with
// a chunked stream (server-sent events), and can wait for the client to go
// away, which is how a disconnect cancels a generation.
//
// Threads: created by the connection's session and used only from coroutines
// on that connection's strand.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http/http_types.h"

namespace strata::http {

class HttpExchange {
 public:
  using Clock = std::chrono::steady_clock;

  // `trusted`: the request came through the Unix socket (no Host / key checks).
  HttpExchange(Stream& stream, const Request& request, bool trusted,
               std::chrono::seconds write_timeout, Clock::time_point received);

  const Request& request() const { return request_; }
  bool trusted() const { return trusted_; }
  Clock::time_point received() const { return received_; }
  // The path without its query string.
  std::string_view path() const;

  // A header added to every response of this exchange (e.g. CORS).
  void add_header(bhttp::field field, std::string value);
  // Ask the session to close the connection after this response.
  void close_after_response() { close_ = true; }
  bool keep_alive() const { return !close_ && request_.keep_alive(); }

  // One whole response; Content-Length and keep-alive are set here.
  // False when the client could not be written to (gone or too slow).
  Awaitable<bool> respond(Response response);

  // A chunked response: the head, then any number of chunks, then the end.
  // Each returns false once the client cannot be written to; later calls then
  // do nothing and return false.
  Awaitable<bool> start_stream(Status status, std::string_view content_type);
  Awaitable<bool> write_chunk(std::string_view data);
  Awaitable<bool> end_stream();

  // Completes when the client closes its end of the connection (or the
  // connection fails). Bytes the client sends meanwhile (a pipelined request)
  // are left unread and do not count as leaving. Cancellable: meant to be
  // raced against the response with asio's `||`.
  Awaitable<void> client_gone();

  // The status sent, for metrics; 0 before the response started.
  int status_sent() const { return status_sent_; }
  bool response_started() const { return status_sent_ != 0; }

 private:
  template <class Body>
  void prepare(bhttp::response<Body>& response);
  Awaitable<bool> write_buffers(auto&& buffers);

  Stream& stream_;
  const Request& request_;
  const bool trusted_;
  const std::chrono::seconds write_timeout_;
  const Clock::time_point received_;
  std::vector<std::pair<bhttp::field, std::string>> headers_;
  bool close_ = false;
  bool broken_ = false;  // a write failed: the connection is done
  int status_sent_ = 0;
};

}  // namespace strata::http
