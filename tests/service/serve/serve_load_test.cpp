// `strata serve` under load, where replies must never cross: 64 client threads
// send 512 chat and completion requests over the Unix socket (raw sockets,
// keep-alive and not; most streamed, some whole), each with a prompt of its own
// (a third share a long prefix), greedy, 8-24 new tokens, logprobs on. Every
// request's reply was first recorded alone, one request at a time, on a server
// of its own; under load each reply must be the same tokens (token text and
// logprob), text and finish_reason as its solo reply, and each stream well
// formed. Four configurations of the server under load: with and without the
// disk tier (--cache-dir), each with a KV cache that holds every running
// sequence and with one so small that sequences are preempted (checked with
// strata_preemptions_total). Afterwards the engine is idle and every KV block
// is free again.
//
// Every server runs the CPU backend, where a sequence's logits have the same
// bits alone and in any batch (each row is dotted alone, attention runs per
// sequence), and where --host-cache-size sizes the KV cache the model computes
// in. The CUDA backend's batched steps take other kernels than a lone sequence
// (tensor cores, cuBLAS beyond 64 rows), whose sums round differently: there
// logprobs move by ~1e-3 and a greedy near-tie can flip.
//
// Under AddressSanitizer (the sanitizer build of `make test`) each phase sends
// 128 requests, not 512: the same mix, a quarter of the time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/http_connection.h"
#include "tests/service/serve/serve_process.h"

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_LOAD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_LOAD_TEST_SANITIZED 1
#endif
#endif

namespace {

using nlohmann::json;
using strata::testing::HttpConnection;
using strata::testing::ServeProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kClients = 64;
#ifdef STRATA_LOAD_TEST_SANITIZED
constexpr int kRequests = 128;
#else
constexpr int kRequests = 512;
#endif
// The small KV cache: 64 blocks of 16 tokens, while 64 running sequences of up
// to ~90 tokens want up to 6 blocks each. (The tiny model's block is 4 KiB.)
constexpr const char* kSmallKvCache = "256K";

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string post(const std::string& path, const std::string& body, bool keep_alive) {
  return "POST " + path + " HTTP/1.1\r\nHost: strata\r\nContent-Type: application/json\r\n" +
         (keep_alive ? "" : "Connection: close\r\n") +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// GET PATH on a fresh connection; the body ("" on failure).
std::string get(const std::string& socket, const std::string& path) {
  HttpConnection connection(socket);
  const auto deadline = Clock::now() + 30s;
  if (!connection.connected() ||
      !connection.send_all("GET " + path +
                           " HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n\r\n")) {
    return "";
  }
  auto head = connection.read_head(deadline);
  if (!head || head->status != 200) return "";
  return connection.read_body(*head, deadline).value_or("");
}

// The samples of a Prometheus text page: "name{labels}" -> value.
std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> samples;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

// ---- The requests ---------------------------------------------------------

struct Spec {
  bool chat = false;
  bool stream = true;
  bool include_usage = false;
  int max_tokens = 8;
  std::string body;
};

const std::string kSharedPrefix =
    "You are a careful assistant for a small library. The catalogue lists books by "
    "author, title and year; answer questions about it in one short sentence. ";

Spec make_spec(int i) {
  static const char* kTopics[] = {"rivers", "clocks", "bread",    "comets",   "violins",
                                  "salt",   "maps",   "lanterns", "glaciers", "bees"};
  Spec spec;
  spec.chat = i % 2 == 0;
  spec.stream = i % 8 != 7;
  spec.include_usage = spec.stream && i % 4 != 1;
  spec.max_tokens = 8 + i % 17;  // 8..24
  const std::string prompt = (i % 3 == 0 ? kSharedPrefix : std::string()) + "Request " +
                             std::to_string(i) + ": tell me about " + kTopics[i % 10] + ".";
  // Greedy: the reply depends on the prompt alone, so alone and under load agree.
  json body = {{"max_tokens", spec.max_tokens}, {"stream", spec.stream}, {"temperature", 0}};
  if (spec.include_usage) body["stream_options"] = {{"include_usage", true}};
  if (spec.chat) {
    body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
    body["logprobs"] = true;
  } else {
    body["prompt"] = prompt;
    body["logprobs"] = 0;  // the chosen token's logprob, no alternatives
  }
  spec.body = body.dump();
  return spec;
}

// What identifies a reply: its tokens (as the API names them: the token's text,
// with its bytes for chat) and their logprobs, its text and why it stopped.
struct Reply {
  std::vector<std::string> tokens;
  std::vector<double> logprobs;
  std::string text;
  std::string finish_reason;
};

// Adds one choice's text and logprobs (a chunk's or a whole reply's) to `reply`.
void add_choice(const Spec& spec, const json& choice, Reply& reply) {
  const json text =
      spec.chat
          ? choice.value(spec.stream ? "delta" : "message", json::object()).value("content", json())
          : choice.value("text", json());
  if (text.is_string()) reply.text += text.get<std::string>();
  const json logprobs = choice.value("logprobs", json());
  if (logprobs.is_null()) return;
  if (spec.chat) {
    for (const json& entry : logprobs.value("content", json::array())) {
      reply.tokens.push_back(entry.value("token", "") + entry.value("bytes", json()).dump());
      reply.logprobs.push_back(entry.value("logprob", 0.0));
    }
  } else {
    for (const json& token : logprobs.value("tokens", json::array())) {
      reply.tokens.push_back(token.get<std::string>());
    }
    for (const json& logprob : logprobs.value("token_logprobs", json::array())) {
      reply.logprobs.push_back(logprob.get<double>());
    }
  }
  const json reason = choice.value("finish_reason", json());
  if (reason.is_string()) reply.finish_reason = reason.get<std::string>();
}

// Reads a whole (non-streamed) reply; what is wrong with it, "" when it is well formed.
std::string read_whole(const Spec& spec, const std::string& body, Reply& reply) {
  const json response = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (response.is_discarded() || !response.is_object()) return "not JSON: " + body;
  const std::string want_object = spec.chat ? "chat.completion" : "text_completion";
  if (response.value("object", "") != want_object) return "wrong object: " + body;
  if (!response["choices"].is_array() || response["choices"].size() != 1) {
    return "not one choice: " + body;
  }
  add_choice(spec, response["choices"][0], reply);
  const int completion = response["usage"].value("completion_tokens", -1);
  if (completion < 1 || completion > spec.max_tokens) return "completion_tokens out of range";
  if (static_cast<int>(reply.tokens.size()) != completion) return "logprobs for other tokens";
  return "";
}

// Reads an SSE stream; what is wrong with it, "" when it is well formed.
std::string read_stream(const Spec& spec, const std::string& body, Reply& reply) {
  std::vector<std::string> events;
  size_t start = 0;
  while (start < body.size()) {
    const size_t end = body.find("\n\n", start);
    if (end == std::string::npos) return "unterminated event: " + body.substr(start);
    events.push_back(body.substr(start, end - start));
    start = end + 2;
  }
  if (events.empty() || events.back() != "data: [DONE]") return "does not end with [DONE]";
  int finishes = 0;
  int usages = 0;
  int content_chunks = 0;
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    const std::string& event = events[k];
    if (event.rfind("data: ", 0) != 0) return "event without `data: `: " + event;
    if (event == "data: [DONE]") return "[DONE] before the end";
    const json chunk = json::parse(event.substr(6), nullptr, /*allow_exceptions=*/false);
    if (chunk.is_discarded() || !chunk.is_object()) return "not JSON: " + event;
    if (chunk.contains("error")) return "error event: " + event;
    const std::string want_object = spec.chat ? "chat.completion.chunk" : "text_completion";
    if (chunk.value("object", "") != want_object) return "wrong object: " + event;
    if (!chunk["choices"].is_array()) return "no choices: " + event;
    if (chunk.contains("usage") && !chunk["usage"].is_null()) {
      ++usages;
      if (!chunk["choices"].empty()) return "usage chunk with choices: " + event;
      const json& usage = chunk["usage"];
      const int completion = usage.value("completion_tokens", -1);
      if (completion < 1 || completion > spec.max_tokens) {
        return "completion_tokens out of range: " + event;
      }
      if (usage.value("total_tokens", -1) != usage.value("prompt_tokens", -1) + completion) {
        return "total_tokens != prompt + completion: " + event;
      }
      if (k + 2 != events.size()) return "usage chunk is not the last: " + event;
    }
    for (const json& choice : chunk["choices"]) {
      if (!choice.value("finish_reason", json()).is_null()) ++finishes;
      const size_t before = reply.text.size();
      add_choice(spec, choice, reply);
      if (reply.text.size() > before) ++content_chunks;
    }
  }
  if (finishes != 1) return std::to_string(finishes) + " chunks with a finish_reason";
  if (usages != (spec.include_usage ? 1 : 0)) return std::to_string(usages) + " usage chunks";
  if (content_chunks > spec.max_tokens) return "more content chunks than max_tokens";
  if (reply.tokens.empty() || static_cast<int>(reply.tokens.size()) > spec.max_tokens) {
    return std::to_string(reply.tokens.size()) + " tokens in the logprobs";
  }
  return "";
}

// One request's outcome: its reply, or what went wrong.
struct Outcome {
  std::string error;  // "" when the reply is well formed
  Reply reply;
  int64_t events = 0;
};

// Sends every spec over `n_clients` threads, each taking the next spec in
// turn; half the clients keep their connection alive between requests.
std::vector<Outcome> run_requests(const std::string& socket, const std::vector<Spec>& specs,
                                  int n_clients) {
  std::vector<Outcome> outcomes(specs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < n_clients; ++c) {
    clients.emplace_back([&, c] {
      const bool keep_alive = c % 2 == 0;
      std::optional<HttpConnection> connection;
      for (size_t i = next++; i < specs.size(); i = next++) {
        const Spec& spec = specs[i];
        Outcome& outcome = outcomes[i];
        if (!connection || !connection->connected()) connection.emplace(socket);
        if (!connection->connected()) {
          outcome.error = "cannot connect";
          connection.reset();
          continue;
        }
        const auto deadline = Clock::now() + 120s;
        const std::string path = spec.chat ? "/v1/chat/completions" : "/v1/completions";
        if (!connection->send_all(post(path, spec.body, keep_alive))) {
          outcome.error = "send failed";
          connection.reset();
          continue;
        }
        std::optional<HttpConnection::Head> head = connection->read_head(deadline);
        std::optional<std::string> body;
        if (head) body = connection->read_body(*head, deadline);
        if (!head || !body) {
          outcome.error = head ? "body cut short" : "no response head";
          connection.reset();
          continue;
        }
        const std::string type = head->headers["content-type"];
        if (head->status != 200) {
          outcome.error = "status " + std::to_string(head->status) + ": " + *body;
        } else if (spec.stream && type.rfind("text/event-stream", 0) != 0) {
          outcome.error = "content-type " + type;
        } else {
          outcome.error = spec.stream ? read_stream(spec, *body, outcome.reply)
                                      : read_whole(spec, *body, outcome.reply);
          outcome.events = static_cast<int64_t>(std::count(body->begin(), body->end(), '\n')) / 2;
        }
        if (!keep_alive || head->headers["connection"] == "close") connection.reset();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  return outcomes;
}

// How `got` differs from `want`; "" when they are the same reply.
std::string compare(const Reply& want, const Reply& got, double& max_logprob_difference) {
  if (got.tokens != want.tokens) {
    size_t k = 0;
    while (k < want.tokens.size() && k < got.tokens.size() && want.tokens[k] == got.tokens[k]) ++k;
    return "token " + std::to_string(k) + " differs from the solo reply: " +
           (k < got.tokens.size() ? json(got.tokens[k]).dump() : "(none)") + " instead of " +
           (k < want.tokens.size() ? json(want.tokens[k]).dump() : "(none)");
  }
  if (got.text != want.text) {
    return "text " + json(got.text).dump() + ", solo " + json(want.text).dump();
  }
  if (got.finish_reason != want.finish_reason) {
    return "finish_reason " + got.finish_reason + ", solo " + want.finish_reason;
  }
  if (got.logprobs.size() != want.logprobs.size()) return "a logprob is missing";
  for (size_t k = 0; k < got.logprobs.size(); ++k) {
    const double difference = std::abs(got.logprobs[k] - want.logprobs[k]);
    max_logprob_difference = std::max(max_logprob_difference, difference);
    // The same token from another computation would be a bug even when it
    // wins the argmax; allow only rounding.
    if (difference > 1e-3) {
      return "token " + std::to_string(k) + " logprob " + std::to_string(got.logprobs[k]) +
             ", solo " + std::to_string(want.logprobs[k]);
    }
  }
  return "";
}

// ---- The test -------------------------------------------------------------------

struct LoadConfig {
  const char* name;
  bool disk_tier = true;        // --cache-dir in the server's folder, else none
  bool small_kv_cache = false;  // kSmallKvCache: sequences are preempted
};

// The solo replies, recorded once for the whole program.
class ServeLoadTest : public ::testing::TestWithParam<LoadConfig> {
 protected:
  static void SetUpTestSuite() {
    for (int i = 0; i < kRequests; ++i) specs_.push_back(make_spec(i));
    ServeProcess server(strata::testing::tiny_serve_model(),
                        {"--backend", "cpu", "--cache-dir", "none"});
    ASSERT_TRUE(server.running()) << server.log();
    const auto started = Clock::now();
    std::vector<Outcome> outcomes = run_requests(server.socket_path(), specs_, 1);
    std::printf("solo: %d requests one at a time in %.2f s\n", kRequests, seconds_since(started));
    for (size_t i = 0; i < outcomes.size(); ++i) {
      ASSERT_EQ(outcomes[i].error, "") << "solo request " << i;
    }
    for (Outcome& outcome : outcomes) solo_.push_back(std::move(outcome.reply));
    // Replies that crossed are caught only where the replies differ.
    std::set<std::vector<std::string>> distinct;
    for (const Reply& reply : solo_) distinct.insert(reply.tokens);
    std::printf("solo: %zu distinct replies\n", distinct.size());
    EXPECT_GE(distinct.size(), specs_.size() * 9 / 10) << "too few distinct replies to tell apart";
    EXPECT_EQ(server.terminate(), 0) << server.log();
  }

  static inline std::vector<Spec> specs_;
  static inline std::vector<Reply> solo_;  // specs_[i]'s reply alone; empty if one failed
};

TEST_P(ServeLoadTest, EveryReplyUnderLoadIsItsSoloReply) {
  const LoadConfig& config = GetParam();
  const std::vector<Reply>& solo = solo_;
  ASSERT_EQ(solo.size(), specs_.size()) << "no solo replies to compare with";

  std::vector<std::string> args = {"--backend", "cpu",           "--max-running",
                                   "64",        "--max-waiting", "512"};
  if (!config.disk_tier) args.insert(args.end(), {"--cache-dir", "none"});
  if (config.small_kv_cache) args.insert(args.end(), {"--host-cache-size", kSmallKvCache});
  ServeProcess server(strata::testing::tiny_serve_model(), args);
  ASSERT_TRUE(server.running()) << server.log();
  const std::string socket = server.socket_path();

  const auto started = Clock::now();
  const std::vector<Outcome> outcomes = run_requests(socket, specs_, kClients);
  const double seconds = seconds_since(started);
  int64_t events = 0;
  int ok = 0;
  double max_logprob_difference = 0;
  std::vector<std::string> errors;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    std::string problem = outcomes[i].error;
    if (problem.empty()) problem = compare(solo[i], outcomes[i].reply, max_logprob_difference);
    if (!problem.empty()) {
      errors.push_back("request " + std::to_string(i) + ": " + problem);
      continue;
    }
    ++ok;
    events += outcomes[i].events;
  }
  std::printf(
      "%s: %d requests from %d clients in %.2f s: %.1f requests/s, %lld events; "
      "largest logprob difference from solo %.3g\n",
      config.name, kRequests, kClients, seconds, kRequests / seconds,
      static_cast<long long>(events), max_logprob_difference);
  EXPECT_EQ(errors.size(), 0u) << "requests failed or differ from their solo reply; the first ten:";
  for (size_t k = 0; k < std::min<size_t>(errors.size(), 10); ++k) ADD_FAILURE() << errors[k];
  EXPECT_EQ(ok, kRequests);

  // The engine is idle and every block is back in the pool (cached ones may stay),
  // and every request was counted. Both are recorded a moment after the client
  // has its last byte: the gauges after the engine step that sent the final
  // event (engine/engine.cpp: finish() emits before publish_stats()), the
  // request counter once the handler returns (api_router.cpp). Allow a second.
  const std::string answered = "strata_http_requests_total{endpoint=\"";
  const std::string chat_200 = answered + "/v1/chat/completions\",status=\"200\"}";
  const std::string text_200 = answered + "/v1/completions\",status=\"200\"}";
  std::map<std::string, double> samples;
  const auto done = Clock::now();
  for (;;) {
    samples = parse_metrics(get(socket, "/metrics"));
    double used = 0;
    for (const auto& [name, value] : samples) {
      if (name.rfind("strata_kv_blocks_used{", 0) == 0) used += value;
    }
    const bool settled = samples.contains("strata_sequences_running") &&
                         samples.at("strata_sequences_running") == 0 &&
                         samples.at("strata_sequences_waiting") == 0 && used == 0 &&
                         samples[chat_200] + samples[text_200] == kRequests;
    if (settled || Clock::now() - done > 1s) break;
    std::this_thread::sleep_for(10ms);
  }
  std::printf(
      "%s: metrics settled %.0f ms after the last reply; %.0f preemptions, "
      "%.0f blocks of prompts from the disk tier\n",
      config.name, seconds_since(done) * 1000, samples["strata_preemptions_total"],
      samples["strata_kv_block_hits_total{tier=\"disk\"}"]);
  ASSERT_TRUE(samples.contains("strata_sequences_running")) << server.log();
  EXPECT_EQ(samples.at("strata_sequences_running"), 0);
  EXPECT_EQ(samples.at("strata_sequences_waiting"), 0);
  int tiers = 0;
  for (const auto& [name, value] : samples) {
    if (name.rfind("strata_kv_blocks_used{", 0) != 0) continue;
    ++tiers;
    EXPECT_EQ(value, 0) << name;
  }
  EXPECT_GE(tiers, 1);
  EXPECT_EQ(samples[chat_200] + samples[text_200], kRequests);
  EXPECT_GT(samples.at("strata_cached_prompt_tokens_total"), 0)
      << "the shared prefix was never served from the prefix cache";
  if (config.small_kv_cache) {
    EXPECT_GT(samples["strata_preemptions_total"], 0) << "the small KV cache preempted nothing";
  } else {
    EXPECT_EQ(samples["strata_preemptions_total"], 0) << "preempted with room for every sequence";
  }
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

INSTANTIATE_TEST_SUITE_P(
    Configurations, ServeLoadTest,
    ::testing::Values(
        LoadConfig{.name = "DiskTier", .disk_tier = true},
        LoadConfig{.name = "NoDiskTier", .disk_tier = false},
        LoadConfig{.name = "DiskTierSmallKvCache", .disk_tier = true, .small_kv_cache = true},
        LoadConfig{.name = "NoDiskTierSmallKvCache", .disk_tier = false, .small_kv_cache = true}),
    [](const ::testing::TestParamInfo<LoadConfig>& info) { return std::string(info.param.name); });

}  // namespace
