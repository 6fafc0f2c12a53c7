// Socket activation: the listening sockets systemd passed to `strata serve` (strata.socket's
// ListenStream= lines), through sd_listen_fds(3). The HTTP server accepts on these instead
// of binding its own when there are any.
//
// Call once, in main, before any other thread starts: it unsets LISTEN_PID, LISTEN_FDS and
// LISTEN_FDNAMES, and unsetenv is unsafe while another thread reads the environment.
#pragma once

#include <string>
#include <vector>

namespace strata::systemd {

struct ActivatedSocket {
  enum class Kind { kUnix, kTcp };

  int fd = -1;  // listening, FD_CLOEXEC set; the caller owns it from now on
  Kind kind = Kind::kTcp;
  std::string unix_path{};  // kUnix: the bound path ("@name" if abstract); kTcp: empty
};

// The sockets passed to this process, in LISTEN_FDS order (fd 3, 4, ...); empty when not
// socket-activated, or when they were meant for another process (LISTEN_PID).
//
// The variables are unset so the fds are taken once: a second call returns none instead
// of handing out the same fds again, and a child process never sees them as its own.
//
// Throws std::runtime_error, naming the fd, if one is not a listening stream socket of
// AF_UNIX, AF_INET or AF_INET6 (the unit file is wrong); all passed fds are then closed.
std::vector<ActivatedSocket> take_activated_sockets();

}  // namespace strata::systemd
