// `strata serve` under systemd, without systemd: the test plays the service
// manager.
//   - sd_notify: a datagram socket as NOTIFY_SOCKET receives STATUS=loading...,
//     READY=1 with STATUS, watchdog pings, and STOPPING=1 after SIGTERM, all
//     from the main process (systemd's NotifyAccess=main);
//   - socket activation: a listening Unix socket passed as fd 3 with LISTEN_FDS
//     and LISTEN_PID is served instead of a socket of the server's own; one
//     meant for another process (LISTEN_PID) is ignored; a passed fd that is not
//     a listening socket fails start-up, naming the fd.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/notify_listener.h"
#include "tests/service/serve/serve_process.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::NotifyListener;
using strata::testing::ServeProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A fresh temporary folder, removed with the object.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "strata-systemd-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

sockaddr_un unix_address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return address;
}

// ---- sd_notify ----------------------------------------------------------------

TEST(ServeSystemdTest, NotifiesLoadingReadyWatchdogAndStopping) {
  TempFolder folder;
  const std::string notify_path = folder.path() + "/notify.sock";
  NotifyListener manager(notify_path);

  // WATCHDOG_USEC without WATCHDOG_PID: meant for whoever reads it.
  ServeProcess server(strata::testing::tiny_serve_model(), {},
                      {"NOTIFY_SOCKET=" + notify_path, "WATCHDOG_USEC=1000000"});
  ASSERT_TRUE(server.running()) << server.log();
  ASSERT_TRUE(manager.wait_for("READY=1", 10s)) << manager.all() << server.log();

  const int loading = manager.index_of("STATUS=loading ");
  const int ready = manager.index_of("READY=1");
  ASSERT_GE(loading, 0) << manager.all();
  EXPECT_LT(loading, ready) << manager.all();
  EXPECT_NE(manager.messages()[loading].text.find("serve_tiny_llama2.gguf"), std::string::npos)
      << manager.messages()[loading].text;
  EXPECT_EQ(manager.messages()[ready].text, "READY=1\nSTATUS=serving serve_tiny_llama2");

  // Watchdog pings every interval / 2 (0.5 s).
  std::this_thread::sleep_for(1300ms);
  manager.drain();
  int pings = 0;
  for (const auto& m : manager.messages()) pings += m.text == "WATCHDOG=1";
  EXPECT_GE(pings, 2) << manager.all();

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  EXPECT_TRUE(manager.wait_for("STOPPING=1", 10s)) << manager.all() << server.log();
  EXPECT_EQ(server.wait_exit(10s), 0) << server.log();
  manager.drain();
  EXPECT_GT(manager.index_of("STOPPING=1"), ready);
  // All from the main process: systemd's default NotifyAccess=main drops the rest.
  for (const auto& m : manager.messages()) EXPECT_EQ(m.sender, server.pid()) << m.text;
}

// ---- Socket activation ----------------------------------------------------------

// `strata serve ARGS` started the way systemd starts a socket-activated
// service: `passed` (if >= 0) becomes fd 3, LISTEN_FDS=1 and LISTEN_PID names
// the new process (or another one, when `for_us` is false). Killed with the
// object.
class ActivatedServer {
 public:
  ActivatedServer(std::vector<std::string> args, int passed, bool for_us,
                  std::vector<std::string> env, const std::string& log_path)
      : log_path_(log_path) {
    args.insert(args.begin(), {strata::testing::strata_binary(), "serve"});
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // The child: only what exec needs.
      if (std::freopen(log_path.c_str(), "w", stderr) == nullptr) _exit(126);
      if (passed >= 0) {
        if (passed == 3) {
          ::fcntl(3, F_SETFD, 0);
        } else if (::dup2(passed, 3) != 3) {
          _exit(125);
        }
        setenv("LISTEN_FDS", "1", 1);
        setenv("LISTEN_PID", std::to_string(for_us ? getpid() : getpid() + 100000).c_str(), 1);
      }
      for (std::string& entry : env) putenv(entry.data());
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~ActivatedServer() {
    if (wait_exit(0ms) == kRunning) {
      kill(pid_, SIGKILL);
      wait_exit(10s);
    }
  }

  static constexpr int kRunning = -2;

  pid_t pid() const { return pid_; }
  std::string log() const { return strata::testing::read_file(log_path_); }

  // The exit code; -1 if killed by a signal; kRunning on timeout.
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (exited_) return exit_code_;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        continue;
      }
      if (Clock::now() >= deadline) return kRunning;
      std::this_thread::sleep_for(20ms);
    }
  }

 private:
  std::string log_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

// A listening Unix stream socket at `path`.
int listening_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_un address = unix_address(path);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 16) != 0) {
    throw std::runtime_error("cannot listen on " + path);
  }
  return fd;
}

// GET /health over `socket` until 200; false on timeout or when `server` exits.
bool wait_healthy(const std::string& socket, ActivatedServer& server,
                  std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    CommandResult r = curl("-o /dev/null -w '%{http_code}' --max-time 5 --unix-socket " + socket +
                           " http://strata/health");
    if (r.output == "200") return true;
    if (server.wait_exit(0ms) != ActivatedServer::kRunning) return false;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

TEST(ServeSystemdTest, ServesTheSocketSystemdPassed) {
  TempFolder folder;
  const std::string socket = folder.path() + "/activated.sock";
  // Made before the server starts, as systemd does: a client may connect at once.
  const int listener = listening_socket(socket);
  ActivatedServer server({"--model", strata::testing::tiny_serve_model(), "--config", "none",
                          "--host", "none"},
                         listener, /*for_us=*/true,
                         {"XDG_RUNTIME_DIR=" + folder.path() + "/runtime"},
                         folder.path() + "/serve.log");
  ::close(listener);

  ASSERT_TRUE(wait_healthy(socket, server, 60s)) << server.log();
  const std::string log = server.log();
  EXPECT_NE(log.find("listening on unix:" + socket + " (from systemd)"), std::string::npos) << log;
  // It bound nothing of its own: not the default socket, not TCP.
  EXPECT_FALSE(std::filesystem::exists(folder.path() + "/runtime/strata/strata.sock"));
  EXPECT_EQ(log.find("listening on http://"), std::string::npos) << log;

  // The whole API works through it once the model is ready.
  const auto deadline = Clock::now() + 60s;
  while (server.log().find("ready: serving") == std::string::npos && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  CommandResult r = curl("--unix-socket " + socket +
                         R"( http://strata/v1/completions -d '{"prompt": "Hi", "max_tokens": 3}')");
  EXPECT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_NE(r.output.find("\"completion_tokens\":3"), std::string::npos) << r.output;

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  EXPECT_EQ(server.wait_exit(15s), 0) << server.log();
}

TEST(ServeSystemdTest, IgnoresSocketsMeantForAnotherProcess) {
  TempFolder folder;
  const std::string socket = folder.path() + "/other.sock";
  const std::string own = folder.path() + "/own.sock";
  const int listener = listening_socket(socket);
  ActivatedServer server({"--model", strata::testing::tiny_serve_model(), "--config", "none",
                          "--host", "none", "--socket", own},
                         listener, /*for_us=*/false, {}, folder.path() + "/serve.log");
  ::close(listener);
  ASSERT_TRUE(wait_healthy(own, server, 60s)) << server.log();
  EXPECT_EQ(server.log().find("(from systemd)"), std::string::npos) << server.log();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  EXPECT_EQ(server.wait_exit(15s), 0) << server.log();
}

TEST(ServeSystemdTest, RefusesAPassedFdThatIsNotAListeningSocket) {
  TempFolder folder;
  const std::string file = folder.path() + "/not-a-socket";
  const int fd = ::open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ActivatedServer server({"--model", strata::testing::tiny_serve_model(), "--config", "none",
                          "--host", "none"},
                         fd, /*for_us=*/true, {}, folder.path() + "/serve.log");
  ::close(fd);
  const int code = server.wait_exit(30s);
  EXPECT_NE(code, 0) << server.log();
  EXPECT_NE(code, ActivatedServer::kRunning) << server.log();
  EXPECT_NE(server.log().find("LISTEN_FDS socket 3"), std::string::npos) << server.log();
}

}  // namespace
