// strata run -m MODEL.gguf [-p PROMPT] [--chat] [-n N] [--temp T] [--seed S] [--json]
// Generates from one prompt through an Engine with one request (the GPU when
// there is one, else the CPU), streaming text as it comes, then prints prompt
// tokens and prefill / decode speed. Ctrl-C stops cleanly.
//
// strata run --server [SOCKET] [-p PROMPT] [--chat] ... sends the same request to a
// running `strata serve` instead of loading the model: /v1/chat/completions with --chat,
// else /v1/completions, the sampling flags as their OpenAI (and vLLM) fields.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "common/log.h"
#include "engine/completion.h"
#include "engine/kv_sizing.h"
#include "engine/model_engine.h"
#include "engine/request_limits.h"
#include "model/loaded_model.h"
#include "service/cli/commands.h"
#include "service/cli/interrupt_watcher.h"
#include "service/client/cancel_on_interrupt.h"
#include "service/client/daemon_client.h"
#include "service/client/stream_chunk.h"
#include "service/client/wait_for_model.h"
#include "service/config/environment.h"
#include "service/config/serve_settings.h"
#include "service/config/setting_values.h"

namespace strata {
namespace {

struct RunOptions {
  std::string model_path;
  std::string server_socket;  // with --server
  std::string prompt;
  bool prompt_given = false;
  bool chat = false;
  std::string system;
  int64_t max_tokens = 256;  // when not given: also at most what the context has left
  bool max_tokens_given = false;
  SamplingParams sampling{.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f};
  bool seed_given = false;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool json = false;
  int threads = 0;
  std::string kv_type = "f16";
  std::string backend = "auto";
  std::string chat_template_path;  // "": the model's own chat template
};

std::vector<TokenId> encode_prompt(const LoadedModel& model, const RunOptions& o) {
  if (!o.chat) return model.tokenizer().encode(o.prompt);
  std::vector<ChatMessage> messages;
  if (!o.system.empty()) messages.push_back({"system", o.system});
  messages.push_back({"user", o.prompt});
  return model.encode_chat({.messages = chat_messages_value(messages)}).tokens;
}

double per_second(double count, double seconds) { return seconds > 0 ? count / seconds : 0.0; }

// Tokens after the first, over the time after it: decode steps only.
double decode_tok_s(const Completion& r) {
  return per_second(static_cast<double>(std::max<size_t>(r.tokens.size(), 1) - 1),
                    r.decode_seconds);
}

void print_json(const std::vector<TokenId>& prompt, const Completion& r) {
  nlohmann::ordered_json out;
  out["prompt_tokens"] = prompt;
  out["tokens"] = r.tokens;
  out["text"] = r.text;
  out["finish_reason"] = finish_reason_name(r.finish);
  out["prefill_tok_s"] = per_second(static_cast<double>(prompt.size()), r.first_token_seconds);
  out["decode_tok_s"] = decode_tok_s(r);
  std::cout << out.dump() << "\n";
}

void read_prompt_from_stdin(RunOptions& o) {
  if (!o.prompt_given) {
    o.prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
}

void run(RunOptions o, const std::atomic<bool>& interrupted) {
  read_prompt_from_stdin(o);
  if (!o.seed_given) o.sampling.seed = std::random_device{}();
  std::optional<WeightType> kv_type = parse_weight_type(o.kv_type);
  if (!kv_type || (*kv_type != WeightType::kF16 && *kv_type != WeightType::kF32)) {
    throw std::runtime_error("--kv-type must be f16 or f32");
  }

  std::optional<std::string> chat_template;
  if (!o.chat_template_path.empty()) {
    chat_template = read_chat_template_file(o.chat_template_path);
  }
  std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path, chat_template);
  GenerateRequest request{.prompt = encode_prompt(*model, o), .sampling = o.sampling,
                          .max_tokens = o.max_tokens, .stop = o.stop, .ignore_eos = o.ignore_eos};
  const int64_t n_prompt = static_cast<int64_t>(request.prompt.size());
  if (!o.max_tokens_given) {
    request.max_tokens =
        std::max<int64_t>(1, std::min(o.max_tokens, model->config().context_length - n_prompt));
  }
  // One sequence: the KV cache holds this request and nothing more.
  const KvLayout layout = kv_layout_for(model->config(), KvLayout::kDefaultBlockTokens, *kv_type);
  const RequestLimits limits{.n_vocab = model->config().n_vocab,
                             .context_length = model->config().context_length,
                             .block_tokens = layout.block_tokens,
                             .n_kv_blocks = layout.blocks_for(model->config().context_length)};
  if (std::optional<RequestError> error = check_request(request, limits, model->tokenizer())) {
    throw std::runtime_error(error->message);
  }
  ModelEngine model_engine(*model, {.max_running = 1,
                                    .n_kv_blocks = layout.blocks_for(n_prompt + request.max_tokens),
                                    .kv_type = *kv_type, .threads = o.threads,
                                    .backend = parse_backend(o.backend)});
  auto stream = [&](std::string_view text) {
    if (o.json) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  const std::vector<TokenId> prompt = request.prompt;
  const Completion result =
      run_to_completion(model_engine.engine(), std::move(request), stream, &interrupted);
  if (result.finish == FinishReason::kError) throw std::runtime_error(result.error);
  if (o.json) {
    print_json(prompt, result);
    return;
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  log_info("prompt tokens ", prompt.size(), ", prefill ",
           per_second(static_cast<double>(prompt.size()), result.first_token_seconds),
           " tok/s, generated ", result.tokens.size(), ", decode ", decode_tok_s(result),
           " tok/s, finish: ", finish_reason_name(result.finish));
}

// The OpenAI request for the same run. The sampling flags are always sent, defaults
// too, so that a run gives the same on a server as here; length and seed only when given
// (the server's default length: up to the end of the context).
nlohmann::json server_request(const RunOptions& o, const std::string& model) {
  nlohmann::json body = {{"model", model},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}},
                         {"temperature", o.sampling.temperature},
                         {"top_k", o.sampling.top_k},
                         {"top_p", o.sampling.top_p},
                         {"min_p", o.sampling.min_p},
                         {"repetition_penalty", o.sampling.repetition_penalty},
                         {"frequency_penalty", o.sampling.frequency_penalty},
                         {"presence_penalty", o.sampling.presence_penalty}};
  if (o.chat) {
    nlohmann::json messages = nlohmann::json::array();
    if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
    messages.push_back({{"role", "user"}, {"content", o.prompt}});
    body["messages"] = std::move(messages);
  } else {
    body["prompt"] = o.prompt;
  }
  if (o.max_tokens_given) body["max_tokens"] = o.max_tokens;
  if (o.seed_given) body["seed"] = o.sampling.seed;
  if (!o.stop.empty()) body["stop"] = o.stop;
  if (o.ignore_eos) body["ignore_eos"] = true;
  return body;
}

// What the server's stream said, gathered.
struct ServerReply {
  std::string text;
  std::string finish_reason = "cancelled";  // until a chunk says otherwise (Ctrl-C: none does)
  nlohmann::json usage;                     // null until the usage chunk
};

void print_server_summary(const std::string& model, const ServerReply& reply, bool json) {
  if (json) {
    nlohmann::ordered_json out;
    out["model"] = model;
    out["text"] = reply.text;
    out["finish_reason"] = reply.finish_reason;
    out["usage"] = reply.usage;
    std::cout << out.dump() << "\n";
    return;
  }
  std::fputs("\n", stdout);
  std::fflush(stdout);
  if (reply.usage.is_object()) {
    log_info("prompt tokens ", reply.usage.value("prompt_tokens", 0), ", generated ",
             reply.usage.value("completion_tokens", 0), ", finish: ", reply.finish_reason);
  } else {
    log_info("finish: ", reply.finish_reason);
  }
}

void run_on_server(RunOptions o) {
  read_prompt_from_stdin(o);
  DaemonClient client(o.server_socket);
  CancelOnInterrupt ctrl_c(client);
  const std::string model =
      wait_for_model(client, [] { log_info("waiting for the model to load..."); });
  ServerReply reply;
  auto on_chunk = [&](const nlohmann::json& json) {
    StreamChunk chunk = read_stream_chunk(json);
    if (!o.json) {
      std::fwrite(chunk.text.data(), 1, chunk.text.size(), stdout);
      std::fflush(stdout);
    }
    reply.text += chunk.text;
    if (chunk.finish_reason) reply.finish_reason = *chunk.finish_reason;
    if (chunk.usage) reply.usage = *chunk.usage;
  };
  const char* path = o.chat ? "/v1/chat/completions" : "/v1/completions";
  client.post_stream(path, server_request(o, model), on_chunk);
  print_server_summary(model, reply, o.json);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Generate text from one prompt here, or on a running `strata serve`");
  CLI::Option* model = cmd->add_option("-m,--model", o->model_path, "GGUF model file");
  o->server_socket = default_socket_path(process_environment());
  CLI::Option* server =
      cmd->add_option("--server", o->server_socket,
                      "Ask a running `strata serve` at this socket instead of loading a model; "
                      "-n is sent only when given")
          ->expected(0, 1)
          ->capture_default_str()
          ->excludes(model);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt (default: read standard input)")
      ->each([o](const std::string&) { o->prompt_given = true; });
  cmd->add_flag("--chat", o->chat, "Wrap the prompt as a user turn in the model's chat format");
  cmd->add_option("--system", o->system, "System prompt (with --chat)");
  cmd->add_option("--chat-template", o->chat_template_path,
                  "Jinja chat template file to use instead of the model's (with --chat)")
      ->excludes(server);
  cmd->add_option("-n,--max-tokens", o->max_tokens, "Tokens to generate at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->each([o](const std::string&) { o->max_tokens_given = true; });
  cmd->add_option("--temp", o->sampling.temperature, "Temperature; 0 is greedy")
      ->capture_default_str();
  cmd->add_option("--top-k", o->sampling.top_k, "Top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", o->sampling.top_p, "Top-p (nucleus)")->capture_default_str();
  cmd->add_option("--min-p", o->sampling.min_p, "Min-p")->capture_default_str();
  cmd->add_option("--repeat-penalty", o->sampling.repetition_penalty, "Repetition penalty")
      ->capture_default_str();
  cmd->add_option("--frequency-penalty", o->sampling.frequency_penalty, "Frequency penalty");
  cmd->add_option("--presence-penalty", o->sampling.presence_penalty, "Presence penalty");
  cmd->add_option("--seed", o->sampling.seed, "Random seed (default: random)")
      ->each([o](const std::string&) { o->seed_given = true; });
  cmd->add_option("--stop", o->stop, "Stop string (repeatable)");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->add_flag("--json", o->json, "Print one JSON object at the end instead of streaming");
  cmd->add_option("-t,--threads", o->threads, "Compute threads (default: all cores)")
      ->excludes(server);
  cmd->add_option("--backend", o->backend,
                  "Where the model runs: auto (CUDA when a GPU can run it), cpu, cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str()
      ->excludes(server);
  cmd->add_option("--kv-type", o->kv_type, "KV cache type: f16 or f32")
      ->capture_default_str()
      ->excludes(server);
  cmd->callback([o, server] {
    if (server->count() > 0) {
      run_on_server(*o);
      return;
    }
    if (o->model_path.empty()) {
      throw std::runtime_error(
          "give a model (-m MODEL.gguf), or --server to use a running `strata serve`");
    }
    InterruptWatcher watcher;  // first: blocks SIGINT before the compute threads start
    run(*o, watcher.interrupted());
  });
}

}  // namespace strata
