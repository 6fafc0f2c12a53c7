#include "service/systemd/systemd_notifier.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

namespace strata::systemd {
namespace {

using std::chrono::microseconds;

// Sets an environment variable for one test, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The service manager's end: an AF_UNIX datagram socket bound in a temporary directory.
class FakeNotifySocket {
 public:
  FakeNotifySocket() {
    char dir_template[] = "/tmp/strata-notify-XXXXXX";
    dir_ = mkdtemp(dir_template);
    path_ = dir_ + "/notify";
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{.sun_family = AF_UNIX, .sun_path = {}};
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0)
        << std::strerror(errno);
    timeval timeout{.tv_sec = 5, .tv_usec = 0};  // a missing datagram fails, not hangs
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~FakeNotifySocket() {
    close(fd_);
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  FakeNotifySocket(const FakeNotifySocket&) = delete;
  FakeNotifySocket& operator=(const FakeNotifySocket&) = delete;

  const std::string& path() const { return path_; }

  // The next datagram, waiting up to 5 s.
  std::string receive() {
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0) return std::string("<no datagram: ") + std::strerror(errno) + ">";
    return std::string(buffer, static_cast<size_t>(n));
  }

  // True when no datagram is queued (sd_notify sends synchronously: none is in flight).
  bool empty() {
    char byte;
    return recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN;
  }

 private:
  std::string dir_;
  std::string path_;
  int fd_ = -1;
};

TEST(SystemdNotifierTest, SendsEachMessage) {
  FakeNotifySocket manager;
  ScopedEnv notify_socket("NOTIFY_SOCKET", manager.path());
  SystemdNotifier notifier;
  ASSERT_TRUE(notifier.active());

  notifier.extend_timeout(microseconds(30'000'000));
  EXPECT_EQ(manager.receive(), "EXTEND_TIMEOUT_USEC=30000000");
  notifier.status("loading model.gguf (40%)");
  EXPECT_EQ(manager.receive(), "STATUS=loading model.gguf (40%)");
  notifier.ready("serving on /run/strata/strata.sock");
  EXPECT_EQ(manager.receive(), "READY=1\nSTATUS=serving on /run/strata/strata.sock");
  notifier.watchdog();
  EXPECT_EQ(manager.receive(), "WATCHDOG=1");
  notifier.stopping();
  EXPECT_EQ(manager.receive(), "STOPPING=1");
  EXPECT_TRUE(manager.empty());
}

TEST(SystemdNotifierTest, StatusStaysOnOneLine) {
  FakeNotifySocket manager;
  ScopedEnv notify_socket("NOTIFY_SOCKET", manager.path());
  SystemdNotifier notifier;
  notifier.status("fine\nREADY=1");
  EXPECT_EQ(manager.receive(), "STATUS=fine READY=1");
}

TEST(SystemdNotifierTest, WithoutNotifySocketEveryCallIsANoOp) {
  FakeNotifySocket manager;
  std::optional<SystemdNotifier> notifier;
  {
    ScopedEnv notify_socket("NOTIFY_SOCKET", std::nullopt);
    notifier.emplace();
  }
  EXPECT_FALSE(notifier->active());
  // Set now, so a call that reached sd_notify would be received.
  ScopedEnv notify_socket("NOTIFY_SOCKET", manager.path());
  notifier->ready("ready");
  notifier->status("status");
  notifier->extend_timeout(microseconds(1));
  notifier->watchdog();
  notifier->stopping();
  EXPECT_TRUE(manager.empty());
}

TEST(SystemdNotifierTest, SendFailureWarnsOnceAndDoesNotThrow) {
  ScopedEnv notify_socket("NOTIFY_SOCKET", "/nonexistent-strata-dir/notify");
  SystemdNotifier notifier;
  testing::internal::CaptureStderr();
  notifier.status("a");
  notifier.watchdog();
  notifier.stopping();
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string warning = "could not notify the service manager";
  const size_t first = err.find(warning);
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find(warning, first + 1), std::string::npos) << err;
}

TEST(SystemdNotifierTest, WatchdogInterval) {
  SystemdNotifier notifier;
  {
    ScopedEnv usec("WATCHDOG_USEC", "2000000");
    ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid()));
    EXPECT_EQ(notifier.watchdog_interval(), microseconds(2'000'000));
  }
  {
    ScopedEnv usec("WATCHDOG_USEC", "2000000");
    ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid() + 1));  // another process's
    EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
  }
  {
    ScopedEnv usec("WATCHDOG_USEC", std::nullopt);
    ScopedEnv pid("WATCHDOG_PID", std::nullopt);
    EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
  }
}

}  // namespace
}  // namespace strata::systemd
