// strata chat [--server SOCKET] [--system TEXT] [-n N] [--temp T] [--top-p P] [--seed S]
// A conversation with a running `strata serve`: each line of standard input is a user
// turn; the whole conversation goes to /v1/chat/completions and the reply prints as it
// streams. /reset forgets the conversation; /exit or the end of input quits.
// Ctrl-C during a reply stops it (the server stops generating when the connection
// closes) and the session goes on, the reply kept as far as it got; at the prompt,
// Ctrl-C quits. A turn the server refuses prints its error and is forgotten, so it can
// be typed again.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/log.h"
#include "service/cli/commands.h"
#include "service/client/cancel_on_interrupt.h"
#include "service/client/daemon_client.h"
#include "service/client/stream_chunk.h"
#include "service/client/wait_for_model.h"
#include "service/config/environment.h"
#include "service/config/serve_settings.h"

namespace strata {
namespace {

struct ChatOptions {
  std::string socket_path;
  std::string system;
  // Unset: the server's default.
  std::optional<int64_t> max_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> seed;
};

nlohmann::json message(const char* role, const std::string& content) {
  return {{"role", role}, {"content", content}};
}

nlohmann::json request_body(const ChatOptions& o, const std::string& model,
                            const nlohmann::json& history) {
  nlohmann::json messages = nlohmann::json::array();
  if (!o.system.empty()) messages.push_back(message("system", o.system));
  for (const nlohmann::json& turn : history) messages.push_back(turn);
  nlohmann::json body = {{"model", model}, {"messages", std::move(messages)}, {"stream", true}};
  if (o.max_tokens) body["max_tokens"] = *o.max_tokens;
  if (o.temperature) body["temperature"] = *o.temperature;
  if (o.top_p) body["top_p"] = *o.top_p;
  if (o.seed) body["seed"] = *o.seed;
  return body;
}

// Prints the reply as it streams and returns its text: all of it, or what came before
// Ctrl-C stopped it. Ends the reply's line, also when the request fails.
std::string stream_reply(DaemonClient& client, const nlohmann::json& body) {
  std::string reply;
  auto print = [&](const nlohmann::json& chunk) {
    std::string text = read_stream_chunk(chunk).text;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    reply += text;
  };
  try {
    client.post_stream("/v1/chat/completions", body, print);
  } catch (const DaemonError&) {
    if (!reply.empty()) std::fputs("\n", stdout);
    std::fflush(stdout);
    throw;
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  return reply;
}

// The next line of input without its line end; nullopt at the end of input.
std::optional<std::string> read_line(bool interactive) {
  if (interactive) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
  }
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  if (line.ends_with('\r')) line.pop_back();
  return line;
}

void chat(const ChatOptions& o) {
  DaemonClient client(o.socket_path);
  CancelOnInterrupt ctrl_c(client);
  const std::string model =
      wait_for_model(client, [] { log_info("waiting for the model to load..."); });
  const bool interactive = isatty(STDIN_FILENO) != 0;
  nlohmann::json history = nlohmann::json::array();  // the user's and assistant's turns
  while (std::optional<std::string> line = read_line(interactive)) {
    if (*line == "/exit") return;
    if (*line == "/reset") {
      history.clear();
      if (interactive) log_info("conversation cleared");
      continue;
    }
    if (line->empty()) continue;
    history.push_back(message("user", *line));
    try {
      std::string reply = stream_reply(client, request_body(o, model, history));
      history.push_back(message("assistant", reply));
    } catch (const DaemonError& e) {
      history.erase(history.size() - 1);
      log_error(e.what());
    }
  }
  if (interactive) std::fputs("\n", stdout);  // the end of input came at the prompt
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto o = std::make_shared<ChatOptions>();
  o->socket_path = default_socket_path(process_environment());
  CLI::App* cmd = app.add_subcommand("chat", "Chat with a running `strata serve`");
  cmd->add_option("--server", o->socket_path, "The server's Unix socket")->capture_default_str();
  cmd->add_option("--system", o->system, "System prompt");
  cmd->add_option_function<int64_t>(
         "-n,--max-tokens", [o](const int64_t& n) { o->max_tokens = n; },
         "Tokens per reply at most (default: the server's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option_function<double>(
      "--temp", [o](const double& t) { o->temperature = t; }, "Temperature; 0 is greedy");
  cmd->add_option_function<double>(
      "--top-p", [o](const double& p) { o->top_p = p; }, "Top-p (nucleus)");
  cmd->add_option_function<int64_t>(
      "--seed", [o](const int64_t& s) { o->seed = s; }, "Random seed (default: random)");
  cmd->callback([o] { chat(*o); });
}

}  // namespace strata
