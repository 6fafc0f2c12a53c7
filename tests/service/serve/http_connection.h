// HttpConnection: a blocking HTTP/1.1 client on one raw connection (a Unix
// socket or loopback TCP), for the tests that need what curl hides: exact
// bytes, half-read responses, a client that leaves mid-stream, and whether
// the server closed the connection.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace strata::testing {

class HttpConnection {
 public:
  using Clock = std::chrono::steady_clock;

  struct Head {
    int status = 0;
    std::map<std::string, std::string> headers;  // names in lower case
    bool chunked = false;
    std::optional<size_t> content_length;
  };

  explicit HttpConnection(const std::string& unix_socket_path);
  explicit HttpConnection(int loopback_tcp_port);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close();
  bool send_all(std::string_view data);

  // The status line and headers; nullopt when the connection failed or the
  // deadline passed first.
  std::optional<Head> read_head(Clock::time_point deadline);
  // One chunk's data; "" for the last chunk; nullopt as for read_head.
  std::optional<std::string> read_chunk(Clock::time_point deadline);
  // The whole body, by Content-Length or chunks.
  std::optional<std::string> read_body(const Head& head, Clock::time_point deadline);
  // Whether the server closed the connection (end of file) before `deadline`,
  // reading and dropping anything it sends first.
  bool closed_by_peer(Clock::time_point deadline);

 private:
  void open(int family, const sockaddr* address, socklen_t size);
  bool fill(Clock::time_point deadline);  // more bytes into buffer_

  int fd_ = -1;
  bool eof_ = false;
  std::string buffer_;
};

}  // namespace strata::testing
