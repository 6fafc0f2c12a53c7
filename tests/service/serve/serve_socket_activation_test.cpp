// `strata serve` socket-activated by systemd's own tool, with the listeners
// the shipped packaging/systemd/strata.socket declares: its ListenStream=
// lines (the Unix socket moved into a temporary folder, the loopback port
// replaced by a free one), its SocketMode= and its FileDescriptorName= (the
// unit's name by default). /usr/bin/systemd-socket-activate binds them, waits
// for the first connection and then execs `strata serve` in its own process
// with LISTEN_FDS, LISTEN_PID and LISTEN_FDNAMES, as systemd starts
// strata.service. The test plays the rest of the service manager: it owns
// NOTIFY_SOCKET and reads what strata tells it.
//
// systemd-socket-activate binds every Unix socket with mode 0644 and has no
// SocketMode= option; the test applies the unit's mode itself between the
// bind and the first connection, where systemd does, and checks that the
// server keeps the socket it was given (same inode, same mode).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/http_connection.h"
#include "tests/service/serve/notify_listener.h"
#include "tests/service/serve/serve_process.h"
#include "tests/support/temp_folder.h"

namespace {

using nlohmann::json;
using strata::testing::HttpConnection;
using strata::testing::NotifyListener;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

const std::string kSocketActivate = "/usr/bin/systemd-socket-activate";

// ---- The shipped unit ----------------------------------------------------------

// What strata.socket's [Socket] section declares.
struct SocketUnit {
  std::vector<std::string> listen_streams;  // in file order: systemd passes fds in this order
  std::string socket_mode = "0666";         // systemd's default
  std::string fd_name;                      // FileDescriptorName=; default: the unit's name
};

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

SocketUnit read_socket_unit(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  SocketUnit unit;
  unit.fd_name = fs::path(path).filename().string();
  std::string section;
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    const size_t equals = line.find('=');
    if (section != "[Socket]" || equals == std::string::npos) continue;
    const std::string key = trim(line.substr(0, equals));
    const std::string value = trim(line.substr(equals + 1));
    if (key == "ListenStream") unit.listen_streams.push_back(value);
    if (key == "SocketMode") unit.socket_mode = value;
    if (key == "FileDescriptorName") unit.fd_name = value;
  }
  return unit;
}

// A loopback port nothing listens on now.
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// ---- The service manager's side ---------------------------------------------------

// strata.socket and strata.service as systemd-socket-activate runs them:
// listening at once, `strata serve` from the first connection on, in the same
// process (so pid() is strata's, as LISTEN_PID says). Killed with the object.
class ActivatedService {
 public:
  static constexpr int kRunning = -2;

  ActivatedService(const SocketUnit& unit, const std::string& folder, const std::string& notify) {
    unix_socket_ = folder + "/strata.sock";
    log_path_ = folder + "/service.log";
    // The Unix ListenStream= moves into the folder; the TCP one keeps its host
    // on a free port. A port taken meanwhile by someone else: try another.
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = free_loopback_port();
      std::vector<std::string> args = {kSocketActivate};
      for (const std::string& stream : unit.listen_streams) {
        if (stream.starts_with("/")) {
          args.push_back("--listen=" + unix_socket_);
        } else {
          args.push_back("--listen=" + stream.substr(0, stream.rfind(':') + 1) +
                         std::to_string(port_));
        }
      }
      std::string names;
      for (size_t i = 0; i < unit.listen_streams.size(); ++i) {
        names += (i == 0 ? "" : ":") + unit.fd_name;
      }
      args.push_back("--fdname=" + names);
      // The child's environment is only what -E names (and TERM, PATH, USER, HOME).
      args.push_back("--setenv=NOTIFY_SOCKET=" + notify);
      for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
        if (std::getenv(name) != nullptr) args.push_back(std::string("--setenv=") + name);
      }
      args.insert(args.end(), {strata::testing::strata_binary(), "serve", "--model",
                               strata::testing::tiny_serve_model(), "--config", "none",
                               "--cache-dir", folder + "/cache", "--shutdown-grace-seconds", "60"});
      start(args);
      if (wait_for_log("as " + std::to_string(2 + unit.listen_streams.size()) + ".", 10s)) return;
      if (log().find("Address already in use") == std::string::npos) return;
      wait_exit(10s);
    }
  }
  ~ActivatedService() {
    if (wait_exit(0ms) == kRunning) {
      ::kill(pid_, SIGKILL);
      wait_exit(10s);
    }
  }
  ActivatedService(const ActivatedService&) = delete;
  ActivatedService& operator=(const ActivatedService&) = delete;

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  const std::string& unix_socket() const { return unix_socket_; }
  std::string log() const { return strata::testing::read_file(log_path_); }

  // The program the process runs now, by /proc/PID/exe.
  std::string program() const {
    std::error_code error;
    return fs::read_symlink("/proc/" + std::to_string(pid_) + "/exe", error).string();
  }

  bool wait_for_log(const std::string& text, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (log().find(text) == std::string::npos) {
      if (Clock::now() >= deadline || wait_exit(0ms) != kRunning) {
        return log().find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  // The exit code; -1 if killed by a signal; kRunning on timeout.
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (exited_) return exit_code_;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        continue;
      }
      if (Clock::now() >= deadline) return kRunning;
      std::this_thread::sleep_for(20ms);
    }
  }

 private:
  void start(std::vector<std::string> args) {
    exited_ = false;
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (std::freopen(log_path_.c_str(), "w", stderr) == nullptr) _exit(126);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      _exit(127);
    }
  }

  std::string unix_socket_;
  std::string log_path_;
  int port_ = 0;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = -1;
};

// ---- Requests -----------------------------------------------------------------------

struct Reply {
  int status = 0;
  std::string body;
};

std::string request_text(const std::string& method, const std::string& path,
                         const std::string& host, const std::string& body) {
  return method + " " + path + " HTTP/1.1\r\nHost: " + host +
         "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One request on a fresh connection; status 0 when it failed.
Reply exchange(HttpConnection&& connection, const std::string& text) {
  const auto deadline = Clock::now() + 60s;
  if (!connection.connected() || !connection.send_all(text)) return {};
  std::optional<HttpConnection::Head> head = connection.read_head(deadline);
  if (!head) return {};
  std::optional<std::string> body = connection.read_body(*head, deadline);
  return {.status = head->status, .body = body.value_or("")};
}

Reply over_unix(const ActivatedService& service, const std::string& method, const std::string& path,
                const std::string& body = "") {
  return exchange(HttpConnection(service.unix_socket()),
                  request_text(method, path, "strata", body));
}

Reply over_tcp(const ActivatedService& service, const std::string& method, const std::string& path,
               const std::string& body = "") {
  return exchange(HttpConnection(service.port()),
                  request_text(method, path, "127.0.0.1:" + std::to_string(service.port()), body));
}

class ServeSocketActivationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kSocketActivate.c_str(), X_OK) != 0) {
      GTEST_SKIP() << kSocketActivate << " is missing: install Debian's systemd package "
                   << "(scripts/install-deps)";
    }
    unit_ = read_socket_unit(std::string(STRATA_SOURCE_DIR) + "/packaging/systemd/strata.socket");
    ASSERT_EQ(unit_.listen_streams.size(), 2u) << "strata.socket: a Unix socket and loopback TCP";
    ASSERT_TRUE(unit_.listen_streams[0].starts_with("/")) << unit_.listen_streams[0];
    ASSERT_TRUE(unit_.listen_streams[1].starts_with("127.0.0.1:")) << unit_.listen_streams[1];
    notify_path_ = folder_.path() + "/notify.sock";
    manager_.emplace(notify_path_);
  }

  // The service started, the unit's SocketMode= applied to its Unix socket,
  // and its first connection made: /health over the Unix socket until 200.
  std::unique_ptr<ActivatedService> start_service() {
    auto service = std::make_unique<ActivatedService>(unit_, folder_.path(), notify_path_);
    EXPECT_TRUE(service->wait_for_log("Listening on " + service->unix_socket(), 10s))
        << service->log();
    const mode_t mode = static_cast<mode_t>(std::stoul(unit_.socket_mode, nullptr, 8));
    EXPECT_EQ(::chmod(service->unix_socket().c_str(), mode), 0);
    return service;
  }

  static bool wait_healthy(ActivatedService& service, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (over_unix(service, "GET", "/health").status == 200) return true;
      if (service.wait_exit(0ms) != ActivatedService::kRunning) return false;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  strata::testing::TempFolder folder_{"strata-activation"};
  SocketUnit unit_;
  std::string notify_path_;
  std::optional<NotifyListener> manager_;
};

TEST_F(ServeSocketActivationTest, ServesBothListenersOfTheShippedUnit) {
  std::unique_ptr<ActivatedService> service = start_service();
  struct stat bound {};
  ASSERT_EQ(::stat(service->unix_socket().c_str(), &bound), 0);
  // Lazy, as strata.socket: nothing but the listeners until someone connects.
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(service->program(), kSocketActivate) << "started before the first connection";

  const auto started = Clock::now();
  ASSERT_TRUE(wait_healthy(*service, 60s)) << service->log();
  std::printf("first connection to /health 200: %.0f ms\n",
              std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  EXPECT_EQ(fs::canonical(service->program()), fs::canonical(strata::testing::strata_binary()));
  const std::string log = service->log();
  EXPECT_NE(log.find("listening on unix:" + service->unix_socket() + " (from systemd)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("listening on a TCP socket (from systemd)"), std::string::npos) << log;

  // READY=1 once the model is loaded, from the main process (NotifyAccess=main).
  ASSERT_TRUE(manager_->wait_for("READY=1", 60s)) << manager_->all() << service->log();
  for (const auto& m : manager_->messages()) EXPECT_EQ(m.sender, service->pid()) << m.text;

  // A real request on each listener.
  Reply completion = over_unix(*service, "POST", "/v1/completions",
                               R"({"prompt": "Hello", "max_tokens": 4, "temperature": 0})");
  EXPECT_EQ(completion.status, 200) << completion.body;
  EXPECT_NE(completion.body.find("\"completion_tokens\":4"), std::string::npos) << completion.body;
  Reply health = over_tcp(*service, "GET", "/health");
  EXPECT_EQ(health.status, 200) << health.body;
  Reply chat = over_tcp(*service, "POST", "/v1/chat/completions",
                        R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4})");
  EXPECT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(json::parse(chat.body, nullptr, false).value("object", ""), "chat.completion")
      << chat.body;

  // The socket is the one systemd bound, with the unit's mode.
  struct stat now {};
  ASSERT_EQ(::stat(service->unix_socket().c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, bound.st_ino) << "the server replaced the socket it was given";
  EXPECT_TRUE(S_ISSOCK(now.st_mode));
  EXPECT_EQ(now.st_mode & 07777, std::stoul(unit_.socket_mode, nullptr, 8));
  EXPECT_EQ(now.st_mode & 07777, 0660u) << "strata.socket's SocketMode= changed";

  ASSERT_EQ(::kill(service->pid(), SIGTERM), 0);
  EXPECT_EQ(service->wait_exit(30s), 0) << service->log();
}

TEST_F(ServeSocketActivationTest, SigtermLetsTheRequestInFlightFinish) {
  std::unique_ptr<ActivatedService> service = start_service();
  ASSERT_TRUE(wait_healthy(*service, 60s)) << service->log();
  ASSERT_TRUE(manager_->wait_for("READY=1", 60s)) << manager_->all() << service->log();

  // A long stream over TCP, three events read: it is running when SIGTERM comes.
  constexpr int kTokens = 600;
  HttpConnection stream(service->port());
  const json body = {{"prompt", "Once"},
                     {"max_tokens", kTokens},
                     {"temperature", 0},
                     {"stream", true},
                     {"stream_options", {{"include_usage", true}}}};
  ASSERT_TRUE(stream.send_all(request_text(
      "POST", "/v1/completions", "127.0.0.1:" + std::to_string(service->port()), body.dump())));
  const auto deadline = Clock::now() + 120s;
  std::optional<HttpConnection::Head> head = stream.read_head(deadline);
  ASSERT_TRUE(head.has_value());
  ASSERT_EQ(head->status, 200);
  std::string text;
  std::vector<std::string> events;
  bool ended = false;
  // Splits `text` into events; false when the stream failed or the deadline passed.
  auto read_events = [&](size_t wanted) {
    while (events.size() < wanted) {
      if (const size_t end = text.find("\n\n"); end != std::string::npos) {
        events.push_back(text.substr(0, end));
        text.erase(0, end + 2);
        continue;
      }
      if (ended) return true;
      std::optional<std::string> chunk = stream.read_chunk(deadline);
      if (!chunk) return false;
      ended = chunk->empty();
      text += *chunk;
    }
    return true;
  };
  ASSERT_TRUE(read_events(3));

  const auto signalled = Clock::now();
  ASSERT_EQ(::kill(service->pid(), SIGTERM), 0);
  EXPECT_TRUE(manager_->wait_for("STOPPING=1", 10s)) << manager_->all();
  EXPECT_TRUE(service->wait_for_log("stopping: finishing 1 running request", 10s))
      << "the request was not in flight at SIGTERM\n"
      << service->log();

  ASSERT_TRUE(read_events(kTokens + 10)) << "the stream was cut short\n" << service->log();
  ASSERT_TRUE(ended);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "data: [DONE]");
  const json usage = json::parse(events[events.size() - 2].substr(6), nullptr, false);
  EXPECT_EQ(usage["usage"]["completion_tokens"], kTokens) << events[events.size() - 2];
  int finishes = 0;
  for (const std::string& event : events) {
    EXPECT_EQ(event.find("\"error\""), std::string::npos) << event;
    const json chunk = json::parse(event.substr(6), nullptr, false);
    if (!chunk.is_object()) continue;
    for (const json& choice : chunk["choices"]) {
      if (!choice["finish_reason"].is_null()) {
        ++finishes;
        EXPECT_EQ(choice["finish_reason"], "length");
      }
    }
  }
  EXPECT_EQ(finishes, 1);
  EXPECT_EQ(service->wait_exit(30s), 0) << service->log();
  std::printf("%d-token stream finished and the process exited 0 %.0f ms after SIGTERM\n", kTokens,
              std::chrono::duration<double, std::milli>(Clock::now() - signalled).count());
}

}  // namespace
