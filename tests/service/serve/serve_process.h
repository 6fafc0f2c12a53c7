// ServeProcess: a real `strata serve` child process for the service tests,
// listening on a Unix socket in a fresh temporary folder and on a free
// loopback TCP port, with its log captured. Killed when the object goes, so a
// failing assertion never leaves a server behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/strata_command.h"

namespace strata::testing {

class ServeProcess {
 public:
  // Starts `strata serve --model MODEL --socket DIR/strata.sock --port 0
  // --config none --cache-dir DIR/cache EXTRA...` (no --cache-dir of its own
  // when EXTRA has one) with `env` added ("NAME=value"), and waits until
  // the log says it is ready (or the process exits) when `wait_ready`.
  // A `file_size_limit` > 0 caps the size of every file the server writes
  // (RLIMIT_FSIZE): a full disk, without needing root to make one.
  explicit ServeProcess(const std::string& model, std::vector<std::string> extra_args = {},
                        std::vector<std::string> env = {}, bool wait_ready = true,
                        int64_t file_size_limit = 0);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& socket_path() const { return socket_path_; }
  const std::string& folder() const { return folder_; }
  // The TCP port from the log's "listening on http://127.0.0.1:PORT/"; 0 if none.
  int port() const;
  std::string base_url() const;  // http://127.0.0.1:PORT
  std::string log() const;       // standard error so far

  // Waits for `text` to appear in the log; false on timeout or exit.
  bool wait_for_log(const std::string& text, std::chrono::milliseconds timeout);
  // SIGTERM, then waits; the exit code, or -1 when it did not exit in time
  // (then it is killed) or died of a signal.
  int terminate(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  int wait_exit(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
  bool exited_ = false;
  std::string folder_;
  std::string socket_path_;
  std::string log_path_;
};

// `curl -sS ARGS` through the shell (add --unix-socket PATH yourself).
CommandResult curl(const std::string& args);

// A tiny llama-architecture model with the Mistral (llama2) tokenizer, made
// once per build tree: fast enough for hundreds of requests under ASan.
// Another seed gives another model of the same shape.
std::string tiny_serve_model(int seed = 7);

// A tiny model with the tokenizer and chat template of `tokenizer` ("qwen3": tools and
// <think> reasoning in its template), made once per build tree.
std::string tiny_chat_model(const std::string& tokenizer);

// `n_words` pseudo-words drawn with `seed`: a prompt of known length whose
// blocks differ from those of another seed.
std::string seeded_words(int n_words, int seed);

}  // namespace strata::testing
