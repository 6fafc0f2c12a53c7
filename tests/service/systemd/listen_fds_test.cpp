#include "service/systemd/listen_fds.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::systemd {
namespace {

// Socket activation changes fds 3, 4, ... and the environment, so each case runs in a
// forked child: it returns 0 when every check held, and CHILD_CHECK reports the first that
// did not on stderr.
#define CHILD_CHECK(cond)                                                           \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

// The exit code of `body` run in a forked child; 128 + signal if it died.
int exit_code_in_child(const std::function<int()>& body) {
  std::fflush(nullptr);  // or the child would write the parent's buffered output again
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 2;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    }
    std::fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Moves `fds` to 3, 4, ... as systemd passes them (inheritable: no FD_CLOEXEC), and sets
// LISTEN_FDS and LISTEN_PID (this process unless `pid` says otherwise).
void pass_as_systemd_does(const std::vector<int>& fds, pid_t pid = getpid()) {
  // Out of the way first, so that placing one cannot close another already at 3 or 4.
  std::vector<int> high;
  for (int fd : fds) {
    high.push_back(fcntl(fd, F_DUPFD, 100));
    close(fd);
  }
  for (size_t i = 0; i < high.size(); ++i) {
    dup2(high[i], 3 + static_cast<int>(i));
    close(high[i]);
  }
  setenv("LISTEN_FDS", std::to_string(fds.size()).c_str(), 1);
  setenv("LISTEN_PID", std::to_string(pid).c_str(), 1);
}

// A unix stream socket bound to `path` ("@name": abstract), listening if asked.
int unix_socket(const std::string& path, bool listening) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{.sun_family = AF_UNIX, .sun_path = {}};
  std::memcpy(address.sun_path, path.data(), path.size());
  if (path[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0) return -1;
  if (listening && listen(fd, 8) != 0) return -1;
  return fd;
}

// An IPv4 loopback socket of `type` on an ephemeral port; a stream socket listens.
int loopback_socket(int type) {
  const int fd = socket(AF_INET, type, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return -1;
  if (type == SOCK_STREAM && listen(fd, 8) != 0) return -1;
  return fd;
}

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(ListenFdsTest, TakesUnixAndTcpSockets) {
  EXPECT_EQ(exit_code_in_child([] {
              char dir[] = "/tmp/strata-listen-XXXXXX";
              CHILD_CHECK(mkdtemp(dir) != nullptr);
              const std::string path = std::string(dir) + "/strata.sock";
              const int unix_fd = unix_socket(path, /*listening=*/true);
              const int tcp_fd = loopback_socket(SOCK_STREAM);
              CHILD_CHECK(unix_fd >= 0 && tcp_fd >= 0);
              pass_as_systemd_does({unix_fd, tcp_fd});

              const std::vector<ActivatedSocket> sockets = take_activated_sockets();
              unlink(path.c_str());
              rmdir(dir);
              CHILD_CHECK(sockets.size() == 2);
              CHILD_CHECK(sockets[0].fd == 3);
              CHILD_CHECK(sockets[0].kind == ActivatedSocket::Kind::kUnix);
              CHILD_CHECK(sockets[0].unix_path == path);
              CHILD_CHECK(sockets[1].fd == 4);
              CHILD_CHECK(sockets[1].kind == ActivatedSocket::Kind::kTcp);
              CHILD_CHECK(sockets[1].unix_path.empty());
              CHILD_CHECK((fcntl(3, F_GETFD) & FD_CLOEXEC) != 0);
              CHILD_CHECK((fcntl(4, F_GETFD) & FD_CLOEXEC) != 0);
              CHILD_CHECK(std::getenv("LISTEN_FDS") == nullptr);
              CHILD_CHECK(std::getenv("LISTEN_PID") == nullptr);
              // Taken once: the fds are not handed out again.
              CHILD_CHECK(take_activated_sockets().empty());
              return 0;
            }),
            0);
}

TEST(ListenFdsTest, NamesAnAbstractUnixSocketWithAnAt) {
  EXPECT_EQ(exit_code_in_child([] {
              const std::string name = "@strata-listen-test-" + std::to_string(getpid());
              const int fd = unix_socket(name, /*listening=*/true);
              CHILD_CHECK(fd >= 0);
              pass_as_systemd_does({fd});
              const std::vector<ActivatedSocket> sockets = take_activated_sockets();
              CHILD_CHECK(sockets.size() == 1);
              CHILD_CHECK(sockets[0].unix_path == name);
              return 0;
            }),
            0);
}

TEST(ListenFdsTest, NothingWhenNotActivated) {
  EXPECT_EQ(exit_code_in_child([] {
              unsetenv("LISTEN_FDS");
              unsetenv("LISTEN_PID");
              CHILD_CHECK(take_activated_sockets().empty());
              return 0;
            }),
            0);
}

TEST(ListenFdsTest, NothingWhenMeantForAnotherProcess) {
  EXPECT_EQ(exit_code_in_child([] {
              const int fd = loopback_socket(SOCK_STREAM);
              CHILD_CHECK(fd >= 0);
              pass_as_systemd_does({fd}, /*pid=*/getpid() + 1);
              CHILD_CHECK(take_activated_sockets().empty());
              CHILD_CHECK(is_open(3));  // not ours to close
              return 0;
            }),
            0);
}

// `fd` passed at 3 must be refused with the message a user acts on, and closed.
int expect_refused(int fd) {
  CHILD_CHECK(fd >= 0);
  pass_as_systemd_does({fd});
  try {
    take_activated_sockets();
  } catch (const std::runtime_error& e) {
    const std::string expected =
        "LISTEN_FDS socket 3 is not a listening stream socket (check strata.socket)";
    if (e.what() != expected) std::fprintf(stderr, "message: %s\n", e.what());
    CHILD_CHECK(e.what() == expected);
    CHILD_CHECK(!is_open(3));
    return 0;
  }
  std::fprintf(stderr, "take_activated_sockets did not throw\n");
  return 1;
}

TEST(ListenFdsTest, RefusesADatagramSocket) {
  EXPECT_EQ(exit_code_in_child([] { return expect_refused(loopback_socket(SOCK_DGRAM)); }), 0);
}

TEST(ListenFdsTest, RefusesAStreamSocketThatDoesNotListen) {
  EXPECT_EQ(exit_code_in_child([] {
              const std::string name = "@strata-unlistened-" + std::to_string(getpid());
              return expect_refused(unix_socket(name, /*listening=*/false));
            }),
            0);
}

}  // namespace
}  // namespace strata::systemd
