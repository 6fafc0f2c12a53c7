#include "tests/service/serve/serve_process.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>
#include <stdexcept>
#include <thread>

namespace strata::testing {
namespace {

std::string make_temp_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-serve-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

}  // namespace

ServeProcess::ServeProcess(const std::string& model, std::vector<std::string> extra_args,
                           std::vector<std::string> env, bool wait_ready,
                           int64_t file_size_limit)
    : folder_(make_temp_folder()),
      socket_path_(folder_ + "/strata.sock"),
      log_path_(folder_ + "/serve.log") {
  std::vector<std::string> args = {strata_binary(), "serve",  "--model", model,   "--socket",
                                   socket_path_,    "--port", "0",       "--config", "none"};
  // The disk KV cache in the test's own folder, never the user's, unless the
  // test names one (to share it between two servers).
  if (std::find(extra_args.begin(), extra_args.end(), "--cache-dir") == extra_args.end()) {
    args.insert(args.end(), {"--cache-dir", folder_ + "/cache"});
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    FILE* log = std::freopen(log_path_.c_str(), "w", stderr);
    if (log == nullptr) _exit(126);
    for (std::string& entry : env) putenv(entry.data());
    if (file_size_limit > 0) {
      // Writes past the limit fail with EFBIG, as on a full disk; ignored,
      // SIGXFSZ would kill the process instead.
      const rlimit limit{.rlim_cur = static_cast<rlim_t>(file_size_limit),
                         .rlim_max = static_cast<rlim_t>(file_size_limit)};
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(125);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (wait_ready) wait_for_log("ready: serving", std::chrono::seconds(60));
}

ServeProcess::~ServeProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    wait_exit(std::chrono::seconds(10));
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

std::string ServeProcess::log() const { return read_file(log_path_); }

int ServeProcess::port() const {
  static const std::regex kListening(R"(listening on http://127\.0\.0\.1:(\d+)/)");
  const std::string text = log();
  std::smatch match;
  return std::regex_search(text, match, kListening) ? std::stoi(match[1]) : 0;
}

std::string ServeProcess::base_url() const { return "http://127.0.0.1:" + std::to_string(port()); }

bool ServeProcess::running() {
  if (exited_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exited_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return false;
}

bool ServeProcess::wait_for_log(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (log().find(text) != std::string::npos) return true;
    if (!running()) return log().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int ServeProcess::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return exit_code_;
}

int ServeProcess::terminate(std::chrono::milliseconds timeout) {
  if (running()) kill(pid_, SIGTERM);
  const int code = wait_exit(timeout);
  if (code == -1 && running()) {
    kill(pid_, SIGKILL);
    wait_exit(std::chrono::seconds(10));
    return -1;
  }
  return code;
}

CommandResult curl(const std::string& args) { return run_shell("curl -sS " + args); }

std::string tiny_serve_model(int seed) {
  const std::string path =
      test_model_path(seed == 7 ? "serve_tiny_llama2.gguf"
                                : "serve_tiny_llama2_seed" + std::to_string(seed) + ".gguf");
  if (!std::filesystem::exists(path)) {
    // Written under a temporary name, then renamed: test programs run in parallel.
    const std::string temp = path + "." + std::to_string(getpid());
    CommandResult made = run_strata_dev(
        "make-model --tokenizer llama2 --hidden 64 --layers 2 --heads 4 --kv-heads 2 "
        "--ffn 128 --ctx 1024 --type q8_0 --seed " + std::to_string(seed) + " -o " + temp);
    if (made.exit_code != 0) throw std::runtime_error("make-model failed: " + made.errors);
    std::filesystem::rename(temp, path);
  }
  return path;
}

std::string tiny_chat_model(const std::string& tokenizer) {
  const std::string path = test_model_path("serve_tiny_" + tokenizer + ".gguf");
  if (!std::filesystem::exists(path)) {
    const std::string temp = path + "." + std::to_string(getpid());
    CommandResult made = run_strata_dev(
        "make-model --tokenizer " + tokenizer +
        " --hidden 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --ctx 2048 --type q8_0 "
        "--seed 7 -o " + temp);
    if (made.exit_code != 0) throw std::runtime_error("make-model failed: " + made.errors);
    std::filesystem::rename(temp, path);
  }
  return path;
}

std::string seeded_words(int n_words, int seed) {
  static const std::vector<std::string> kWords = {
      "river",  "stone", "lantern", "orbit",   "meadow", "copper", "whisper", "harbor",
      "signal", "amber", "thistle", "granite", "echo",   "falcon", "velvet",  "prism"};
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::string text;
  for (int i = 0; i < n_words; ++i) text += (i ? " " : "") + kWords[rng() % kWords.size()];
  return text;
}

}  // namespace strata::testing
