// strata chat and strata run --server end to end: a real `strata serve` on a tiny
// generated model, talked to over its Unix socket as a user would.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "service/client/daemon_client.h"
#include "tests/support/strata_command.h"

namespace {

using strata::DaemonClient;
using strata::DaemonError;
using strata::testing::CommandResult;
using strata::testing::read_file;
using strata::testing::run_shell;

const std::string kStrata = strata::testing::strata_binary();

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("strata_chat_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

// `strata serve` in a child process, stopped with SIGTERM when this goes out of scope
// (also when an assertion fails), and killed with the test if the test dies first.
class ServerProcess {
 public:
  ServerProcess(const std::string& model, const std::string& socket, const std::string& log,
                const std::string& extra_flags = "")
      : log_(log) {
    pid_ = fork();
    if (pid_ != 0) return;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (freopen(log.c_str(), "w", stderr) == nullptr) _exit(126);
    const std::string command = "exec " + kStrata + " serve --config none --model " + model +
                                " --socket " + socket + " --host none " + extra_flags;
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }

  ~ServerProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 200; ++i) {  // 10 s for a graceful stop
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }
  std::string log() const { return read_file(log_); }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// Waits for /health to answer 200, as a client of the socket.
testing::AssertionResult wait_until_healthy(const ServerProcess& server,
                                            const std::string& socket) {
  DaemonClient client(socket);
  for (int i = 0; i < 600; ++i) {  // 60 s
    if (!server.running())
      return testing::AssertionFailure() << "strata serve exited:\n" << server.log();
    try {
      client.get_json("/health");
      return testing::AssertionSuccess();
    } catch (const DaemonError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return testing::AssertionFailure() << "no /health 200 in 60 s:\n" << server.log();
}

// A gauge's value from GET /metrics (Prometheus text), asked with a plain socket.
double metric(const std::string& socket_path, const std::string& name) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  std::string response;
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return -1;
  }
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, n);
  close(fd);
  size_t at = response.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(response.substr(at + name.size() + 2));
}

// A command with pipes for standard input and output, its standard error in a file.
class Interactive {
 public:
  explicit Interactive(const std::string& args) : errors_(temp_path("interactive.err")) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
      if (freopen(errors_.c_str(), "w", stderr) == nullptr) _exit(126);
      execl("/bin/sh", "sh", "-c", ("exec " + kStrata + " " + args).c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Interactive() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    if (pid_ > 0 && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove(errors_);
  }

  void type(const std::string& text) {
    ASSERT_EQ(write(to_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void end_input() {
    close(to_);
    to_ = -1;
  }
  // Blocks until some output comes; "" at its end.
  std::string read_some() {
    char buffer[4096];
    ssize_t n = read(from_, buffer, sizeof buffer);
    return n > 0 ? std::string(buffer, n) : "";
  }
  // What has come after `ms` milliseconds more, without blocking.
  std::string drain_after(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    fcntl(from_, F_SETFL, fcntl(from_, F_GETFL) | O_NONBLOCK);
    std::string text;
    for (std::string piece; !(piece = read_some()).empty();) text += piece;
    fcntl(from_, F_SETFL, fcntl(from_, F_GETFL) & ~O_NONBLOCK);
    return text;
  }
  void interrupt() { kill(pid_, SIGINT); }
  // The exit status, or -1 when it ended by a signal.
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string errors() const { return read_file(errors_); }

 private:
  pid_t pid_ = -1;
  bool waited_ = false;
  int to_ = -1;
  int from_ = -1;
  std::string errors_;
};

class ChatCommandTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = strata::testing::test_model_path("chat_command_llama2.gguf");
    CommandResult made =
        run_shell(strata::testing::strata_dev_binary() +
                  " make-model --tokenizer llama2 --hidden 64 --layers 2"
                  " --heads 4 --kv-heads 2 --ffn 128 --ctx 4096 --type q8_0 --seed 3 -o " +
                  model_);
    ASSERT_EQ(made.exit_code, 0) << made.errors;
    socket_ = temp_path("serve.sock");
    server_ = std::make_unique<ServerProcess>(model_, socket_, temp_path("serve.log"));
    ASSERT_TRUE(wait_until_healthy(*server_, socket_));
  }
  static void TearDownTestSuite() {
    server_.reset();
    std::filesystem::remove(temp_path("serve.log"));
  }

  static CommandResult chat(const std::string& input, const std::string& flags) {
    return run_shell("printf '" + input + "' | " + kStrata + " chat --server " + socket_ + " " +
                     flags);
  }

  static nlohmann::json run_json(const std::string& args) {
    CommandResult r = run_shell(kStrata + " run --server " + socket_ + " --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return nlohmann::json::parse(r.output);
  }

  static std::string model_;
  static std::string socket_;
  static std::unique_ptr<ServerProcess> server_;
};

std::string ChatCommandTest::model_;
std::string ChatCommandTest::socket_;
std::unique_ptr<ServerProcess> ChatCommandTest::server_;

TEST_F(ChatCommandTest, RepliesToEachLine) {
  CommandResult one = chat("Hello\\n", "-n 8 --seed 1");
  ASSERT_EQ(one.exit_code, 0) << one.errors;
  EXPECT_EQ(one.errors, "");
  ASSERT_GT(one.output.size(), 1u);
  EXPECT_EQ(one.output.back(), '\n');

  // The first reply is the same (same conversation, same seed); a second one follows.
  CommandResult two = chat("Hello\\nHow are you?\\n", "-n 8 --seed 1");
  ASSERT_EQ(two.exit_code, 0) << two.errors;
  EXPECT_EQ(two.errors, "");
  ASSERT_EQ(two.output.substr(0, one.output.size()), one.output);
  EXPECT_GT(two.output.size(), one.output.size() + 1) << "no second reply";
  EXPECT_EQ(two.output.back(), '\n');
}

TEST_F(ChatCommandTest, ResetForgetsTheConversationAndExitQuits) {
  CommandResult one = chat("Hello\\n", "-n 8 --seed 1 --system 'Be brief.'");
  ASSERT_EQ(one.exit_code, 0) << one.errors;
  CommandResult reset =
      chat("Hello\\n/reset\\nHello\\n/exit\\nnever sent\\n", "-n 8 --seed 1 --system 'Be brief.'");
  ASSERT_EQ(reset.exit_code, 0) << reset.errors;
  EXPECT_EQ(reset.output, one.output + one.output);
}

TEST_F(ChatCommandTest, ServerErrorsArePrintedAndTheSessionGoesOn) {
  // A temperature the server refuses: each turn fails with the server's message.
  CommandResult r = chat("Hello\\nHello\\n", "-n 4 --temp -1");
  EXPECT_EQ(r.exit_code, 0) << r.errors;
  EXPECT_EQ(r.output, "");
  size_t first = r.errors.find("error: ");
  ASSERT_NE(first, std::string::npos) << r.errors;
  EXPECT_NE(r.errors.find("temperature", first), std::string::npos) << r.errors;
  EXPECT_NE(r.errors.find("error: ", first + 1), std::string::npos)
      << "one error per turn: " << r.errors;
}

TEST_F(ChatCommandTest, RunOnServerGivesTheRequestedTokens) {
  nlohmann::json out = run_json("-p hi -n 5 --ignore-eos");
  EXPECT_EQ(out["usage"]["completion_tokens"], 5) << out;
  EXPECT_EQ(out["finish_reason"], "length");
  EXPECT_EQ(out["model"], "chat_command_llama2");
  EXPECT_TRUE(out["text"].is_string());

  nlohmann::json chat = run_json("-p hi --chat --system 'Be brief.' -n 3 --ignore-eos");
  EXPECT_EQ(chat["usage"]["completion_tokens"], 3) << chat;
  EXPECT_GT(chat["usage"]["prompt_tokens"].get<int>(), out["usage"]["prompt_tokens"].get<int>());
}

TEST_F(ChatCommandTest, RunOnServerStreamsWhatJsonReports) {
  const std::string args = " -p 'Once upon a time' -n 12 --temp 0 --ignore-eos";
  nlohmann::json out = run_json(args);
  CommandResult streamed = run_shell(kStrata + " run --server " + socket_ + args);
  ASSERT_EQ(streamed.exit_code, 0) << streamed.errors;
  EXPECT_EQ(streamed.output, out["text"].get<std::string>() + "\n");
  EXPECT_NE(streamed.errors.find("generated 12, finish: length"), std::string::npos)
      << streamed.errors;
  // The same greedy run as without the server.
  CommandResult local = run_shell(kStrata + " run -m " + model_ + " --json" + args);
  ASSERT_EQ(local.exit_code, 0) << local.errors;
  EXPECT_EQ(nlohmann::json::parse(local.output)["text"], out["text"]);
}

TEST_F(ChatCommandTest, CtrlCStopsTheReplyAndTheSessionGoesOn) {
  // Greedy, 4,000 tokens: still streaming when Ctrl-C comes after its first text.
  Interactive chat("chat --server " + socket_ + " -n 4000 --temp 0");
  chat.type("Hello\n");
  ASSERT_NE(chat.read_some(), "");
  chat.interrupt();
  const std::string rest = chat.drain_after(500);
  EXPECT_TRUE(rest.ends_with("\n")) << "the stopped reply ends its line";
  // The server stopped generating when the connection closed.
  for (int i = 0; i < 100 && metric(socket_, "strata_sequences_running") != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(metric(socket_, "strata_sequences_running"), 0);
  const double generated = metric(socket_, "strata_generation_tokens_total");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(metric(socket_, "strata_generation_tokens_total"), generated);

  // The session goes on: the next line gets a reply, which Ctrl-C stops too. (After
  // /reset the prompt is fixed, and so is the greedy reply: it does not end early.)
  chat.type("/reset\nHi\n");
  ASSERT_NE(chat.read_some(), "");
  chat.interrupt();
  chat.drain_after(300);
  chat.type("/exit\n");
  EXPECT_EQ(chat.wait(), 0) << chat.errors();
  EXPECT_EQ(chat.errors(), "");
}

TEST_F(ChatCommandTest, CtrlCStopsRunOnServerCleanly) {
  Interactive run("run --server " + socket_ + " -p Hello -n 4000 --ignore-eos");
  run.end_input();
  ASSERT_NE(run.read_some(), "");
  run.interrupt();
  while (!run.read_some().empty()) {
  }
  ASSERT_EQ(run.wait(), 0) << run.errors();
  EXPECT_NE(run.errors().find("finish: cancelled"), std::string::npos) << run.errors();
}

TEST_F(ChatCommandTest, ClientReconnectsAfterTheServerClosedAnIdleConnection) {
  const std::string socket = temp_path("idle.sock");
  ServerProcess server(model_, socket, temp_path("idle.log"), "--idle-timeout-seconds 0.2");
  ASSERT_TRUE(wait_until_healthy(server, socket));
  DaemonClient client(socket);
  EXPECT_EQ(client.get_json("/health")["status"], "ok");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the server closes it
  EXPECT_EQ(client.get_json("/health")["status"], "ok");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int n_chunks = 0;
  EXPECT_EQ(
      client.post_stream("/v1/completions", {{"prompt", "hi"}, {"max_tokens", 2}, {"stream", true}},
                         [&](const nlohmann::json&) { ++n_chunks; }),
      strata::StreamEnd::kDone);
  EXPECT_GT(n_chunks, 0);
  std::filesystem::remove(temp_path("idle.log"));
}

TEST_F(ChatCommandTest, NoServerSaysHowToStartOne) {
  const std::string missing = temp_path("missing.sock");
  for (const std::string& command :
       {" chat --server " + missing + " </dev/null", " run --server " + missing + " -p hi"}) {
    CommandResult r = run_shell(kStrata + command);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.errors.find("cannot connect to strata at " + missing +
                            ": No such file or directory"
                            " (is `strata serve` running?)"),
              std::string::npos)
        << r.errors;
  }
  CommandResult both = run_shell(kStrata + " run --server " + socket_ + " -m " + model_ + " -p hi");
  EXPECT_NE(both.exit_code, 0);
  CommandResult neither = run_shell(kStrata + " run -p hi");
  EXPECT_EQ(neither.exit_code, 1);
  EXPECT_NE(neither.errors.find("--server"), std::string::npos) << neither.errors;
}

}  // namespace
