// `strata serve` under load: 64 client threads send 512 streaming chat and
// completion requests over the Unix socket (raw sockets, keep-alive and not),
// with varied prompts, a shared prefix for some, 8-24 new tokens each, some
// asking for usage. Every request must get 200 and a well-formed SSE stream;
// afterwards the engine is idle and every KV block is free again.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/service/serve/http_connection.h"
#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::HttpConnection;
using strata::testing::ServeProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kClients = 64;
constexpr int kRequests = 512;

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
  bool include_usage = false;
  int max_tokens = 8;
  std::string body;
};

const std::string kSharedPrefix =
    "You are a careful assistant for a small library. The catalogue lists books by "
    "author, title and year; answer questions about it in one short sentence. ";

Spec make_spec(int i) {
  static const char* kTopics[] = {"rivers", "clocks", "bread",  "comets",   "violins",
                                  "salt",   "maps",   "lanterns", "glaciers", "bees"};
  Spec spec;
  spec.chat = i % 2 == 0;
  spec.include_usage = i % 4 != 1;
  spec.max_tokens = 8 + i % 17;  // 8..24
  std::string prompt = (i % 3 == 0 ? kSharedPrefix : std::string()) + "Request " +
                       std::to_string(i) + ": tell me about " + kTopics[i % 10] + ".";
  json body = {{"max_tokens", spec.max_tokens}, {"stream", true}, {"seed", i}};
  // Greedy, or sampled from the top 40: on a 32000-token vocabulary, sampling
  // from all of it would cost as much as the model under a sanitizer.
  switch (i % 4) {
    case 0: body["temperature"] = 0; break;
    case 1: body.update({{"temperature", 1.0}, {"top_k", 40}}); break;
    case 2: body.update({{"temperature", 0.7}, {"top_k", 40}, {"top_p", 0.9}}); break;
    default: body.update({{"temperature", 1.2}, {"top_k", 20}, {"min_p", 0.05}}); break;
  }
  if (spec.include_usage) body["stream_options"] = {{"include_usage", true}};
  if (spec.chat) {
    body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
  } else {
    body["prompt"] = prompt;
  }
  spec.body = body.dump();
  return spec;
}

// What is wrong with a stream's body; "" when it is well formed.
std::string check_stream(const Spec& spec, const std::string& body) {
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
      const json reason = choice.value("finish_reason", json());
      if (!reason.is_null()) {
        ++finishes;
        if (reason != "stop" && reason != "length") return "finish_reason " + reason.dump();
      }
      const json text = spec.chat ? choice.value("delta", json::object()).value("content", json())
                                  : choice.value("text", json());
      if (text.is_string() && !text.get<std::string>().empty()) ++content_chunks;
    }
  }
  if (finishes != 1) return std::to_string(finishes) + " chunks with a finish_reason";
  if (usages != (spec.include_usage ? 1 : 0)) return std::to_string(usages) + " usage chunks";
  if (content_chunks > spec.max_tokens) return "more content chunks than max_tokens";
  return "";
}

TEST(ServeLoadTest, ManyConcurrentStreamsAllCompleteAndFreeTheirBlocks) {
  ServeProcess server(strata::testing::tiny_serve_model(),
                      {"--max-running", "64", "--max-waiting", "512"});
  ASSERT_TRUE(server.running()) << server.log();
  const std::string socket = server.socket_path();

  std::vector<Spec> specs;
  for (int i = 0; i < kRequests; ++i) specs.push_back(make_spec(i));

  std::atomic<int> next{0};
  std::atomic<int> ok{0};
  std::atomic<int64_t> chunks_seen{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto fail = [&](int i, const std::string& what) {
    std::lock_guard lock(errors_mutex);
    errors.push_back("request " + std::to_string(i) + ": " + what);
  };

  const auto started = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      // Half the clients keep their connection alive between requests.
      const bool keep_alive = c % 2 == 0;
      std::optional<HttpConnection> connection;
      for (int i = next++; i < kRequests; i = next++) {
        const Spec& spec = specs[i];
        if (!connection || !connection->connected()) connection.emplace(socket);
        if (!connection->connected()) {
          fail(i, "cannot connect");
          connection.reset();
          continue;
        }
        const auto deadline = Clock::now() + 120s;
        const std::string path = spec.chat ? "/v1/chat/completions" : "/v1/completions";
        if (!connection->send_all(post(path, spec.body, keep_alive))) {
          fail(i, "send failed");
          connection.reset();
          continue;
        }
        std::optional<HttpConnection::Head> head = connection->read_head(deadline);
        if (!head) {
          fail(i, "no response head");
          connection.reset();
          continue;
        }
        std::optional<std::string> body = connection->read_body(*head, deadline);
        if (!body) {
          fail(i, "body cut short");
          connection.reset();
          continue;
        }
        if (head->status != 200) {
          fail(i, "status " + std::to_string(head->status) + ": " + *body);
        } else if (head->headers["content-type"].rfind("text/event-stream", 0) != 0) {
          fail(i, "content-type " + head->headers["content-type"]);
        } else if (std::string problem = check_stream(spec, *body); !problem.empty()) {
          fail(i, problem);
        } else {
          ++ok;
          chunks_seen += static_cast<int64_t>(std::count(body->begin(), body->end(), '\n')) / 2;
        }
        if (!keep_alive || head->headers["connection"] == "close") connection.reset();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("%d streaming requests from %d clients in %.2f s: %.1f requests/s, %lld events\n",
              kRequests, kClients, seconds, kRequests / seconds,
              static_cast<long long>(chunks_seen.load()));

  {
    std::lock_guard lock(errors_mutex);
    EXPECT_EQ(errors.size(), 0u) << "requests failed; the first ten:";
    for (size_t k = 0; k < std::min<size_t>(errors.size(), 10); ++k) ADD_FAILURE() << errors[k];
  }
  EXPECT_EQ(ok.load(), kRequests);

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
  std::printf("metrics settled %.0f ms after the last stream ended\n",
              std::chrono::duration<double, std::milli>(Clock::now() - done).count());
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
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
