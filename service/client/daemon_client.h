// DaemonClient: a blocking HTTP/1.1 client of `strata serve` over its Unix socket, for the
// commands that talk to a running server (strata chat, strata run --server).
//
// One connection, kept alive from call to call. The server closes a connection that
// stays idle too long; a request whose connection turns out to be closed before any
// answer came is sent once more on a new connection (the server never saw it).
// No timeouts: a reply may take minutes to start on a long prompt; cancel() is the way
// out, and the server stops generating when the connection closes.
//
// Threads: one thread makes the calls; cancel() may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace strata {

// A request that failed: the server's own message when it answered with an error
// (OpenAI's {"error": {"message", ...}}), else what went wrong on the way.
class DaemonError : public std::runtime_error {
 public:
  DaemonError(const std::string& message, int http_status, nlohmann::json body = nullptr)
      : std::runtime_error(message), http_status_(http_status), body_(std::move(body)) {}
  // The response's status (also 200 for an error event in a stream); 0 when no answer
  // came (cannot connect, connection lost).
  int http_status() const { return http_status_; }
  // The error response's body or event, parsed; null when it was not JSON or none came.
  const nlohmann::json& body() const { return body_; }

 private:
  int http_status_;
  nlohmann::json body_;
};

enum class StreamEnd {
  kDone,       // the server sent data: [DONE]
  kCancelled,  // cancel() stopped it
};

class DaemonClient {
 public:
  using ChunkHandler = std::function<void(const nlohmann::json& chunk)>;

  explicit DaemonClient(std::string socket_path);
  ~DaemonClient();
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  const std::string& socket_path() const;

  // GET or POST a JSON body; the response body parsed. Throw DaemonError for a non-2xx
  // status or a body that is not JSON, naming the server's message.
  nlohmann::json get_json(std::string_view path);
  nlohmann::json post_json(std::string_view path, const nlohmann::json& body);

  // POSTs `body` (which should ask for "stream": true) and calls on_chunk with each event
  // of the server-sent event stream, parsed, as it arrives, until data: [DONE]. Throws
  // DaemonError for a non-2xx status, an {"error": ...} event, or a stream that ends
  // without [DONE]; an exception from on_chunk passes through.
  StreamEnd post_stream(std::string_view path, const nlohmann::json& body,
                        const ChunkHandler& on_chunk);

  // Any thread: stops the post_stream in flight by shutting its socket down; it returns
  // kCancelled. Returns false, doing nothing, when no stream is in flight.
  bool cancel();

 private:
  struct Impl;  // the connection, behind a wall so that users need not see Beast
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata
