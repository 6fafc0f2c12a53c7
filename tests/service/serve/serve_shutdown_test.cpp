// `strata serve` when clients leave and when it is told to stop:
//   - a client that disconnects cancels its generation (streamed or whole), and
//     its KV blocks are freed at once;
//   - SIGTERM drains: no new connections, running streams finish normally, exit 0;
//   - past --shutdown-grace-seconds the rest are cancelled with an SSE error event;
//   - idle keep-alive connections do not hold the exit up.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
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

// The events of an SSE response, one at a time ("data: ..." without the blank line).
class SseReader {
 public:
  explicit SseReader(HttpConnection& connection) : connection_(connection) {}

  // The next event; nullopt once the response ended (ended() is then true) or
  // the connection failed or the deadline passed.
  std::optional<std::string> next(Clock::time_point deadline) {
    for (;;) {
      if (const size_t end = text_.find("\n\n"); end != std::string::npos) {
        std::string event = text_.substr(0, end);
        text_.erase(0, end + 2);
        return event;
      }
      if (ended_) return std::nullopt;
      std::optional<std::string> chunk = connection_.read_chunk(deadline);
      if (!chunk) return std::nullopt;
      if (chunk->empty()) ended_ = true;
      text_ += *chunk;
    }
  }
  // The terminating chunk arrived: the response is complete.
  bool ended() const { return ended_; }

 private:
  HttpConnection& connection_;
  std::string text_;
  bool ended_ = false;
};

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

std::map<std::string, double> metrics(const std::string& socket) {
  HttpConnection connection(socket);
  const auto deadline = Clock::now() + 30s;
  if (!connection.connected() ||
      !connection.send_all("GET /metrics HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n\r\n")) {
    return {};
  }
  auto head = connection.read_head(deadline);
  if (!head || head->status != 200) return {};
  return parse_metrics(connection.read_body(*head, deadline).value_or(""));
}

double kv_blocks_used(const std::map<std::string, double>& samples) {
  double used = 0;
  for (const auto& [name, value] : samples) {
    if (name.rfind("strata_kv_blocks_used{", 0) == 0) used += value;
  }
  return used;
}

double generated_tokens(const std::string& socket) {
  auto samples = metrics(socket);
  return samples.contains("strata_generation_tokens_total")
             ? samples.at("strata_generation_tokens_total") : -1;
}

// Polls /metrics until nothing runs or waits and no KV block is in use; the
// seconds that took, or -1 when it did not happen within `timeout`.
double seconds_until_idle(const std::string& socket, std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  while (Clock::now() - start < timeout) {
    auto samples = metrics(socket);
    if (samples.contains("strata_sequences_running") &&
        samples.at("strata_sequences_running") == 0 &&
        samples.at("strata_sequences_waiting") == 0 && kv_blocks_used(samples) == 0) {
      return std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

// Polls /metrics until a sequence runs; false on timeout.
bool wait_until_running(const std::string& socket, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto samples = metrics(socket);
    if (samples["strata_sequences_running"] >= 1) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::string post(const std::string& path, const json& body) {
  const std::string text = body.dump();
  return "POST " + path + " HTTP/1.1\r\nHost: strata\r\nContent-Type: application/json\r\n" +
         "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
}

// A completion that runs to max_tokens: the tiny model has 1024 tokens of context.
json long_completion(int max_tokens, bool stream) {
  return {{"prompt", "Tell me a very long story."}, {"max_tokens", max_tokens},
          {"ignore_eos", true}, {"stream", stream},
          {"stream_options", {{"include_usage", stream}}}};
}

// A streamed request, open and with its first `n_events` events read.
struct OpenStream {
  std::unique_ptr<HttpConnection> connection;
  std::unique_ptr<SseReader> reader;
  std::vector<std::string> events;
};

OpenStream start_stream(const std::string& socket, const json& body, int n_events) {
  OpenStream s{std::make_unique<HttpConnection>(socket), nullptr, {}};
  EXPECT_TRUE(s.connection->connected());
  EXPECT_TRUE(s.connection->send_all(post("/v1/completions", body)));
  const auto deadline = Clock::now() + 60s;
  auto head = s.connection->read_head(deadline);
  EXPECT_TRUE(head && head->status == 200);
  EXPECT_TRUE(head && head->chunked);
  s.reader = std::make_unique<SseReader>(*s.connection);
  while (static_cast<int>(s.events.size()) < n_events) {
    std::optional<std::string> event = s.reader->next(deadline);
    if (!event) break;
    s.events.push_back(*event);
  }
  EXPECT_EQ(static_cast<int>(s.events.size()), n_events);
  return s;
}

// Reads the rest of a stream into s.events; true when it ended cleanly.
bool read_to_end(OpenStream& s, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (std::optional<std::string> event = s.reader->next(deadline)) s.events.push_back(*event);
  return s.reader->ended();
}

// An event's JSON payload; null for [DONE] or anything not `data: `.
json event_json(const std::string& event) {
  if (event.rfind("data: ", 0) != 0 || event == "data: [DONE]") return json();
  return json::parse(event.substr(6), nullptr, /*allow_exceptions=*/false);
}

bool connect_refused_unix(const std::string& socket) {
  HttpConnection probe(socket);
  if (!probe.connected()) return true;
  // Accepted just before the listener closed: the server must drop it unanswered.
  probe.send_all("GET /health HTTP/1.1\r\nHost: strata\r\n\r\n");
  return probe.closed_by_peer(Clock::now() + 2s);
}

// ---- (a) a client that leaves cancels its generation ----------------------

class ServeShutdownTest : public testing::Test {
 protected:
  static std::string model() { return strata::testing::tiny_serve_model(); }
};

TEST_F(ServeShutdownTest, DisconnectedStreamIsCancelledAndItsBlocksFreed) {
  ServeProcess server(model());
  const std::string socket = server.socket_path();
  const double tokens_before = generated_tokens(socket);

  OpenStream s = start_stream(socket, long_completion(900, true), 4);
  auto samples = metrics(socket);
  EXPECT_EQ(samples["strata_sequences_running"], 1) << "the stream already finished";
  EXPECT_GT(kv_blocks_used(samples), 0);
  s.connection->close();

  const double seconds = seconds_until_idle(socket, 5s);
  std::printf("stream: idle %.3f s after the client left\n", seconds);
  EXPECT_GE(seconds, 0) << "still running 5 s after the client left\n" << server.log();
  EXPECT_LT(seconds, 1.5);
  EXPECT_LT(generated_tokens(socket) - tokens_before, 900) << "it ran to max_tokens";
  EXPECT_EQ(metrics(socket)["strata_client_cancels_total"], 1);
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

TEST_F(ServeShutdownTest, DisconnectedWholeRequestIsCancelledAndItsBlocksFreed) {
  ServeProcess server(model());
  const std::string socket = server.socket_path();
  const double tokens_before = generated_tokens(socket);

  HttpConnection client(socket);
  ASSERT_TRUE(client.send_all(post("/v1/completions", long_completion(900, false))));
  ASSERT_TRUE(wait_until_running(socket, 10s)) << server.log();
  client.close();

  const double seconds = seconds_until_idle(socket, 5s);
  std::printf("whole: idle %.3f s after the client left\n", seconds);
  EXPECT_GE(seconds, 0) << "still running 5 s after the client left\n" << server.log();
  EXPECT_LT(seconds, 1.5);
  EXPECT_LT(generated_tokens(socket) - tokens_before, 900) << "it ran to max_tokens";
  EXPECT_EQ(metrics(socket)["strata_client_cancels_total"], 1);

  // The server still answers, over the same socket.
  OpenStream after = start_stream(socket, long_completion(4, true), 1);
  EXPECT_TRUE(read_to_end(after, 30s));
  EXPECT_EQ(after.events.back(), "data: [DONE]");
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

// ---- (b) SIGTERM drains -----------------------------------------------------

TEST_F(ServeShutdownTest, SigtermRefusesNewConnectionsAndLetsTheRunningStreamFinish) {
  // Grace to spare: the stream must finish on its own, even under a sanitizer.
  ServeProcess server(model(), {"--shutdown-grace-seconds", "60"});
  const std::string socket = server.socket_path();
  const int port = server.port();
  constexpr int kTokens = 300;

  OpenStream s = start_stream(socket, long_completion(kTokens, true), 3);
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  ASSERT_TRUE(server.wait_for_log("stopping: finishing 1 running request", 5s)) << server.log();

  // Refused from now on, on both listeners (the socket file may stay until exit).
  const auto until = Clock::now() + 2s;
  bool unix_refused = false;
  while (!(unix_refused = connect_refused_unix(socket)) && Clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(unix_refused) << "the Unix socket still accepts after SIGTERM";
  EXPECT_FALSE(HttpConnection(port).connected()) << "TCP still accepts after SIGTERM";

  const size_t before = s.events.size();
  ASSERT_TRUE(read_to_end(s, 60s)) << "the stream was cut short\n" << server.log();
  EXPECT_GT(s.events.size(), before + 1) << "nothing was left to stream after SIGTERM";
  ASSERT_GE(s.events.size(), 3u);
  EXPECT_EQ(s.events.back(), "data: [DONE]");
  int finishes = 0;
  for (const std::string& event : s.events) {
    json chunk = event_json(event);
    EXPECT_FALSE(chunk.contains("error")) << event;
    if (!chunk.is_object()) continue;
    for (json& choice : chunk["choices"]) {
      if (!choice["finish_reason"].is_null()) {
        ++finishes;
        EXPECT_EQ(choice["finish_reason"], "length");
      }
    }
  }
  EXPECT_EQ(finishes, 1);
  json usage = event_json(s.events[s.events.size() - 2]);
  EXPECT_EQ(usage["usage"]["completion_tokens"], kTokens);

  EXPECT_EQ(server.wait_exit(15s), 0) << server.log();
}

// ---- (c) past the grace period, the rest are cancelled ----------------------

TEST_F(ServeShutdownTest, GraceExceededEndsTheStreamsWithAnErrorEvent) {
  // Three long streams on one compute thread: well over 0.5 s of work left at SIGTERM
  // even on a fast machine (one alone is about 1000 tokens at ~1 ms each).
  ServeProcess server(model(), {"--shutdown-grace-seconds", "0.5", "--threads", "1"});
  ASSERT_TRUE(server.running()) << server.log();
  const std::string socket = server.socket_path();

  std::vector<OpenStream> streams;
  for (int i = 0; i < 3; ++i)
    streams.push_back(start_stream(socket, long_completion(1000, true), 2));
  const auto signalled = Clock::now();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);

  for (OpenStream& s : streams) {
    ASSERT_TRUE(read_to_end(s, 30s)) << "a stream was not ended cleanly\n" << server.log();
  }
  const double stream_seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  const int code = server.wait_exit(10s);
  const double exit_seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  std::printf("grace 0.5 s: streams ended %.3f s and the process exited %.3f s after SIGTERM\n",
              stream_seconds, exit_seconds);
  EXPECT_EQ(code, 0) << server.log();
  EXPECT_LT(exit_seconds, 4.0);

  for (OpenStream& s : streams) {
    ASSERT_GE(s.events.size(), 2u);
    EXPECT_EQ(s.events.back(), "data: [DONE]");
    json last = event_json(s.events[s.events.size() - 2]);
    ASSERT_TRUE(last.contains("error")) << "no error event before [DONE]: "
                                        << s.events[s.events.size() - 2];
    EXPECT_EQ(last["error"]["type"], "server_error");
    EXPECT_NE(last["error"].value("message", "").find("shutting down"), std::string::npos)
        << last.dump();
    for (size_t k = 0; k + 2 < s.events.size(); ++k) {
      json chunk = event_json(s.events[k]);
      EXPECT_FALSE(chunk.contains("error")) << s.events[k];
      for (json& choice : chunk["choices"]) {
        EXPECT_TRUE(choice["finish_reason"].is_null()) << "it finished before the grace ran out";
      }
    }
  }
  EXPECT_NE(server.log().find("cancelling 3 request"), std::string::npos) << server.log();
}

TEST_F(ServeShutdownTest, GraceSecondsAcceptsZeroAndFractionsButNotNegatives) {
  for (const char* value : {"-1", "x", "nan"}) {
    auto r = strata::testing::run_strata(std::string("serve --model ") + model() +
                                         " --config none --socket none --port 0"
                                         " --shutdown-grace-seconds " + value);
    EXPECT_NE(r.exit_code, 0) << value;
    EXPECT_NE(r.errors.find("shutdown-grace-seconds"), std::string::npos) << r.errors;
  }
  // 0: cancel at once; still a clean exit.
  ServeProcess server(model(), {"--shutdown-grace-seconds", "0"});
  OpenStream s = start_stream(server.socket_path(), long_completion(1000, true), 2);
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  ASSERT_TRUE(read_to_end(s, 30s)) << server.log();
  ASSERT_GE(s.events.size(), 2u);
  EXPECT_TRUE(event_json(s.events[s.events.size() - 2]).contains("error"));
  EXPECT_EQ(server.wait_exit(10s), 0) << server.log();
}

// ---- (d) idle keep-alive connections do not hold the exit up -----------------

TEST_F(ServeShutdownTest, SigtermWithIdleKeepAliveConnectionsExitsPromptly) {
  ServeProcess server(model());
  std::vector<std::unique_ptr<HttpConnection>> idle;
  for (int i = 0; i < 6; ++i) {
    auto connection = i < 4 ? std::make_unique<HttpConnection>(server.socket_path())
                            : std::make_unique<HttpConnection>(server.port());
    ASSERT_TRUE(connection->connected());
    // Two requests each, so the connection is known to be kept alive.
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(connection->send_all("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
      auto head = connection->read_head(Clock::now() + 10s);
      ASSERT_TRUE(head && head->status == 200);
      ASSERT_TRUE(connection->read_body(*head, Clock::now() + 10s));
    }
    idle.push_back(std::move(connection));
  }
  // And one that connected but has not sent a byte yet.
  idle.push_back(std::make_unique<HttpConnection>(server.socket_path()));
  std::this_thread::sleep_for(100ms);

  const auto signalled = Clock::now();
  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  const int code = server.wait_exit(10s);
  const double seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  std::printf("exited %.3f s after SIGTERM with %zu idle connections\n", seconds, idle.size());
  EXPECT_EQ(code, 0) << server.log();
  EXPECT_LT(seconds, 2.0) << server.log();
  for (auto& connection : idle) EXPECT_TRUE(connection->closed_by_peer(Clock::now() + 1s));
}

}  // namespace
