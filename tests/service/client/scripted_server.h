// ScriptedServer: an HTTP/1.1 server on a Unix socket whose answers a test writes byte by
// byte, for the client tests: keep-alive or not, chunked streams cut anywhere, error
// bodies, replies that never end. One connection at a time, on its own thread.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace strata::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Socket = asio::local::stream_protocol::socket;
using Request = http::request<http::string_body>;

// Writes `bytes` as they are; errors are ignored (the client may be gone).
void write_raw(Socket& socket, const std::string& bytes);
// A whole response with a JSON body and Content-Length.
std::string json_response(int status, const std::string& reason, const std::string& body);
// The header of a chunked text/event-stream response.
extern const std::string kStreamHeader;
// One chunk of a chunked body.
std::string http_chunk(const std::string& data);

class ScriptedServer {
 public:
  // Answers one request by writing to the socket; returns false to close the connection.
  using Handler = std::function<bool(const Request&, Socket&)>;

  explicit ScriptedServer(Handler handler);
  ~ScriptedServer();  // the client must have closed its connection before

  const std::string& path() const { return path_; }
  int n_connections() const { return n_connections_.load(); }
  // The requests so far; read once the answers have come.
  std::vector<Request> requests() const { return requests_; }

 private:
  void serve();

  std::string path_;
  Handler handler_;
  asio::io_context io_;
  asio::local::stream_protocol::acceptor acceptor_{io_};
  std::atomic<bool> stopping_{false};
  std::atomic<int> n_connections_{0};
  std::vector<Request> requests_;
  std::thread thread_;
};

}  // namespace strata::testing
