#include "service/systemd/listen_fds.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "common/str_cat.h"

namespace strata::systemd {
namespace {

// The address a unix socket is bound to: a path, "@name" for an abstract socket, or empty
// for an unbound one.
std::string unix_path_of(int fd) {
  sockaddr_un address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error(
        str_cat("LISTEN_FDS socket ", fd, ": getsockname failed: ", std::strerror(errno)));
  }
  const size_t path_length = length - offsetof(sockaddr_un, sun_path);
  if (path_length == 0) return {};
  if (address.sun_path[0] == '\0') return "@" + std::string(address.sun_path + 1, path_length - 1);
  return std::string(address.sun_path, strnlen(address.sun_path, path_length));
}

ActivatedSocket classify(int fd) {
  if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) > 0) {
    return {.fd = fd, .kind = ActivatedSocket::Kind::kUnix, .unix_path = unix_path_of(fd)};
  }
  if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, /*listening=*/1, /*port=*/0) > 0) {
    return {.fd = fd, .kind = ActivatedSocket::Kind::kTcp};
  }
  throw std::runtime_error(
      str_cat("LISTEN_FDS socket ", fd, " is not a listening stream socket (check strata.socket)"));
}

}  // namespace

std::vector<ActivatedSocket> take_activated_sockets() {
  // sd_listen_fds also sets FD_CLOEXEC on every passed fd: a child does not inherit them.
  const int n_fds = sd_listen_fds(/*unset_environment=*/1);
  if (n_fds < 0) {
    throw std::runtime_error(str_cat("LISTEN_FDS or LISTEN_PID is malformed (",
                                     std::strerror(-n_fds), "); check how strata was started"));
  }
  std::vector<ActivatedSocket> sockets;
  try {
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n_fds; ++fd) {
      sockets.push_back(classify(fd));
    }
  } catch (const std::runtime_error&) {
    // The process is about to fail start-up; close what systemd passed rather than leak it.
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n_fds; ++fd) close(fd);
    throw;
  }
  return sockets;
}

}  // namespace strata::systemd
