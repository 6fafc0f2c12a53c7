#include "tests/service/serve/http_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace strata::testing {

HttpConnection::HttpConnection(const std::string& unix_socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, unix_socket_path.c_str(), sizeof address.sun_path - 1);
  open(AF_UNIX, reinterpret_cast<sockaddr*>(&address), sizeof address);
}

HttpConnection::HttpConnection(int loopback_tcp_port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(loopback_tcp_port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  open(AF_INET, reinterpret_cast<sockaddr*>(&address), sizeof address);
}

HttpConnection::~HttpConnection() { close(); }

void HttpConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void HttpConnection::open(int family, const sockaddr* address, socklen_t size) {
  fd_ = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ >= 0 && ::connect(fd_, address, size) != 0) close();
}

bool HttpConnection::send_all(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::optional<HttpConnection::Head> HttpConnection::read_head(Clock::time_point deadline) {
  size_t end = 0;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill(deadline)) return std::nullopt;
  }
  const std::string text = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);
  Head head;
  if (std::sscanf(text.c_str(), "HTTP/1.1 %d", &head.status) != 1) return std::nullopt;
  size_t line = text.find("\r\n");
  while (line != std::string::npos) {
    const size_t next = text.find("\r\n", line + 2);
    const std::string field = text.substr(line + 2, next - line - 2);
    const size_t colon = field.find(':');
    if (colon != std::string::npos) {
      std::string name = field.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      std::string value = field.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      head.headers[name] = value;
    }
    line = next;
  }
  head.chunked = head.headers["transfer-encoding"] == "chunked";
  if (auto it = head.headers.find("content-length"); it != head.headers.end()) {
    head.content_length = std::stoul(it->second);
  }
  return head;
}

std::optional<std::string> HttpConnection::read_chunk(Clock::time_point deadline) {
  size_t end = 0;
  while ((end = buffer_.find("\r\n")) == std::string::npos) {
    if (!fill(deadline)) return std::nullopt;
  }
  const size_t size = std::stoul(buffer_.substr(0, end), nullptr, 16);
  while (buffer_.size() < end + 2 + size + 2) {
    if (!fill(deadline)) return std::nullopt;
  }
  std::string data = buffer_.substr(end + 2, size);
  if (buffer_.compare(end + 2 + size, 2, "\r\n") != 0) return std::nullopt;
  buffer_.erase(0, end + 2 + size + 2);
  return data;
}

std::optional<std::string> HttpConnection::read_body(const Head& head,
                                                     Clock::time_point deadline) {
  if (head.chunked) {
    std::string body;
    for (;;) {
      std::optional<std::string> chunk = read_chunk(deadline);
      if (!chunk) return std::nullopt;
      if (chunk->empty()) return body;
      body += *chunk;
    }
  }
  const size_t length = head.content_length.value_or(0);
  while (buffer_.size() < length) {
    if (!fill(deadline)) return std::nullopt;
  }
  std::string body = buffer_.substr(0, length);
  buffer_.erase(0, length);
  return body;
}

bool HttpConnection::closed_by_peer(Clock::time_point deadline) {
  while (fill(deadline)) buffer_.clear();
  return eof_;
}

bool HttpConnection::fill(Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                            Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char data[16384];
    const ssize_t n = ::recv(fd_, data, sizeof data, 0);
    if (n < 0 && errno == EINTR) continue;
    eof_ = n == 0;
    if (n <= 0) return false;
    buffer_.append(data, static_cast<size_t>(n));
    return true;
  }
}

}  // namespace strata::testing
