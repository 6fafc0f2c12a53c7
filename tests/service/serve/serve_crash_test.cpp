// Crashes at chosen points, and kills at random moments, of a real `strata
// serve` with a disk KV cache, while concurrent chat requests with shared
// prefixes are in flight. Each run:
//   1. starts the server with STRATA_CRASH_AT=POINT@N (common/crash_point.h);
//   2. sends two prompts and asks for them to be made durable (POST
//      /v1/cache/persist): once it answers, their blocks are acknowledged;
//   3. sends eight requests at once (sixteen to demote) — new prompts sharing
//      a prefix, and prompts persisted by earlier runs, which a fresh process
//      loads from disk — and waits for the crash, sending another wave while
//      the point is not reached (or, for the random runs, kills the process
//      itself at a random moment);
//   4. audits the cache folder from outside: every index row names a slot
//      whose bytes match its checksum (tests/service/serve/disk_cache_audit.h);
//   5. restarts the server without a crash point and checks that it starts,
//      that the acknowledged prompts are served from disk in full, and that
//      every reply, before the crash and after the restart, is token for token
//      the greedy reply of a server that has no disk cache at all.
// Every server runs on the CPU backend: there a reply does not depend on the
// batch it ran in (serve_load_test.cpp), and --host-cache-size sizes the pool
// the model computes in. The disk tier is the same on either backend.
// STRATA_CRASH_RUNS (runs per point, default 2) and STRATA_RANDOM_KILLS
// (default 20) size the matrix; `make crash-matrix` runs 10 per point and 200
// random kills. The counts are printed as JSON at the end.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/crash_point.h"
#include "tests/service/serve/disk_cache_audit.h"
#include "tests/service/serve/http_connection.h"
#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::HttpConnection;
using strata::testing::seeded_words;
using strata::testing::ServeProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kBlockTokens = 16;
constexpr int kMaxTokens = 8;
constexpr int kMaxWaves = 4;  // of concurrent requests, until the point is reached

int env_count(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

// Prompts share a long first part, as conversations with one system prompt do.
std::string prompt(uint32_t seed) { return seeded_words(40, 1) + ". " + seeded_words(24, seed); }

struct Reply {
  bool ok = false;
  std::string error;  // when not ok
  std::vector<std::string> tokens;
  std::string finish_reason;
  int prompt_tokens = 0;
  int cached_tokens = 0;
};

// What a client must see from a greedy chat request: the tokens and why it stopped.
bool same_answer(const Reply& a, const Reply& b) {
  return a.tokens == b.tokens && a.finish_reason == b.finish_reason;
}

std::string post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: strata\r\nContent-Type: application/json\r\n" +
         "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// One request on a fresh connection: the status and body, nullopt when the
// connection failed or was cut (the server died).
std::optional<std::pair<int, std::string>> send_request(const std::string& socket,
                                                        const std::string& request,
                                                        std::chrono::seconds timeout = 60s) {
  HttpConnection connection(socket);
  if (!connection.connected() || !connection.send_all(request)) return std::nullopt;
  const auto deadline = Clock::now() + timeout;
  std::optional<HttpConnection::Head> head = connection.read_head(deadline);
  if (!head) return std::nullopt;
  std::optional<std::string> body = connection.read_body(*head, deadline);
  if (!body) return std::nullopt;
  return std::pair(head->status, std::move(*body));
}

Reply chat(const std::string& socket, const std::string& text) {
  const json body = {{"messages", {{{"role", "user"}, {"content", text}}}},
                     {"max_tokens", kMaxTokens},
                     {"temperature", 0},
                     {"logprobs", true}};
  auto response = send_request(socket, post("/v1/chat/completions", body.dump()));
  Reply reply;
  if (!response) {
    reply.error = "no complete response";
    return reply;
  }
  const json parsed = json::parse(response->second, nullptr, /*allow_exceptions=*/false);
  if (response->first != 200 || !parsed.contains("choices")) {
    reply.error = "status " + std::to_string(response->first) + ": " + response->second;
    return reply;
  }
  const json& choice = parsed["choices"][0];
  for (const json& token : choice["logprobs"]["content"]) reply.tokens.push_back(token["token"]);
  reply.finish_reason = choice["finish_reason"];
  reply.prompt_tokens = parsed["usage"]["prompt_tokens"];
  reply.cached_tokens = parsed["usage"]["prompt_tokens_details"]["cached_tokens"];
  reply.ok = true;
  return reply;
}

// The full blocks of a prompt that a cache can serve (one token is always run).
int cacheable(int prompt_tokens) { return (prompt_tokens - 1) / kBlockTokens * kBlockTokens; }

// Greedy replies of a server with no disk cache: what every reply must equal.
class ReferenceReplies {
 public:
  ReferenceReplies()
      : server_(strata::testing::tiny_serve_model(), {"--cache-dir", "none", "--backend", "cpu"}) {}
  bool running() { return server_.running(); }
  // The bytes of one KV block (the same for every server of this model and KV type).
  int64_t block_bytes() {
    auto response =
        send_request(server_.socket_path(),
                     "GET /v1/cache HTTP/1.1\r\nHost: strata\r\nConnection: close\r\n\r\n");
    if (!response || response->first != 200) return 0;
    return json::parse(response->second).value("block_bytes", int64_t{0});
  }
  Reply get(const std::string& text) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = replies_.find(text); it != replies_.end()) return it->second;
    }
    Reply reply = chat(server_.socket_path(), text);
    std::lock_guard lock(mutex_);
    if (reply.ok) replies_.emplace(text, reply);
    return reply;
  }

 private:
  ServeProcess server_;
  std::mutex mutex_;
  std::map<std::string, Reply> replies_;
};

// How a point is driven: how often it is passed before the crash, and what
// the workload needs for the point to be reached at all.
struct PointPlan {
  std::string point;                  // "" for a kill at a random moment
  int max_pass = 3;                   // run r crashes at pass 1 + r % max_pass
  bool fresh_cache_each_run = false;  // a new slab file is made only in an empty folder
  bool small_disk = false;            // writes must reclaim old blocks
  bool sigterm = false;               // the point is on the clean shutdown path
  bool persist_none = false;  // only demotion writes (--persist none: nothing survives a restart)
  std::string host_cache = "256K";  // the host tier: small, so that cold blocks are evicted
  int n_in_flight = 8;              // concurrent requests of step 3
};

PointPlan plan_for(std::string_view point) {
  PointPlan plan{.point = std::string(point)};
  if (point == "disk.opened") {
    plan.max_pass = 1;  // once per start
  } else if (point == "disk.slab_created") {
    plan.max_pass = 1;
    plan.fresh_cache_each_run = true;
  } else if (point == "disk.reclaim_chosen" || point == "index.erase_in_transaction") {
    plan.small_disk = true;
  } else if (point == "tier.demotion_queued" || point == "tier.demotion_done") {
    plan.persist_none = true;  // with --persist all every block is on disk before it is cold
    plan.host_cache = "96K";   // a few requests' blocks: the pool runs short of free blocks
    plan.n_in_flight = 16;     // and stays short long enough for a step to demote
    plan.max_pass = 1;
  } else if (point == "index.closing") {
    plan.max_pass = 1;
    plan.sigterm = true;
  } else if (point == "engine.step") {
    plan.max_pass = 40;
  } else if (point == "index.insert_row") {
    plan.max_pass = 8;
  }
  return plan;
}

struct Counts {
  int runs = 0;
  int crashed_at_point = 0;    // the server said the point was reached, and died
  int killed_in_flight = 0;    // random kills with a request still unanswered
  int restarts = 0;            // restarts that came up ready
  int replies_checked = 0;     // replies compared token for token
  int acknowledged_found = 0;  // acknowledged prompts served from disk after the restart
  int rows_audited = 0;
};

class ServeCrashTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("strata_serve_crash_" + std::to_string(getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::vector<std::string> server_args(const std::filesystem::path& cache,
                                       const PointPlan& plan) const {
    std::vector<std::string> args = {"--backend",         "cpu",
                                     "--cache-dir",       cache.string(),
                                     "--persist",         plan.persist_none ? "none" : "all",
                                     "--max-running",     "4",
                                     "--host-cache-size", plan.host_cache};
    if (plan.small_disk) args.insert(args.end(), {"--disk-cache-size", "96K"});
    return args;
  }

  void check_reply(const std::string& text, const Reply& reply, const std::string& when) {
    const Reply expected = reference_.get(text);
    ASSERT_TRUE(expected.ok) << expected.error;
    EXPECT_TRUE(same_answer(reply, expected)) << when << ": a reply differs from the greedy one";
    ++counts_.replies_checked;
  }

  // Writes prompts through a clean server, so that a later run has blocks to load.
  void seed(const std::filesystem::path& cache, const PointPlan& plan,
            std::vector<std::string>& on_disk) {
    ServeProcess server(strata::testing::tiny_serve_model(), server_args(cache, plan));
    ASSERT_TRUE(server.running()) << server.log();
    for (uint32_t s = 0; s < 3; ++s) {
      const std::string text = prompt(900000 + next_seed_++);
      check_reply(text, chat(server.socket_path(), text), "seeding");
      on_disk.push_back(text);
    }
    ASSERT_EQ(server.terminate(), 0) << server.log();
  }

  void run_once(const std::filesystem::path& cache, const PointPlan& plan, int run,
                std::vector<std::string>& on_disk);

  std::filesystem::path root_;
  ReferenceReplies reference_;
  uint32_t next_seed_ = 1000;
  Counts counts_;
  std::mt19937 rng_{20261206};
};

void ServeCrashTest::run_once(const std::filesystem::path& cache, const PointPlan& plan, int run,
                              std::vector<std::string>& on_disk) {
  ++counts_.runs;
  const std::string where = (plan.point.empty() ? std::string("random kill") : plan.point) +
                            " run " + std::to_string(run);
  std::vector<std::string> env;
  if (!plan.point.empty()) {
    env.push_back("STRATA_CRASH_AT=" + plan.point + "@" + std::to_string(1 + run % plan.max_pass));
  }
  std::optional<ServeProcess> server;
  server.emplace(strata::testing::tiny_serve_model(), server_args(cache, plan), env);
  const std::string socket = server->socket_path();

  // 2. Two prompts made durable and acknowledged.
  std::vector<std::string> acknowledged;
  if (server->running()) {
    std::vector<std::string> asked = {prompt(next_seed_++), prompt(next_seed_++)};
    bool answered = true;
    for (const std::string& text : asked) {
      const Reply reply = chat(socket, text);
      if (!reply.ok) {
        answered = false;
        break;
      }
      check_reply(text, reply, where + ", before the crash");
    }
    // With --persist none a restart keeps nothing, so nothing is acknowledged;
    // writing every cached block now would also leave none to demote.
    if (answered && !plan.persist_none) {
      auto persisted = send_request(socket, post("/v1/cache/persist", ""));
      if (persisted && persisted->first == 200) acknowledged = asked;
    }
  }

  // 3. Requests in flight: new prompts, and prompts an earlier run persisted.
  // A point not reached yet gets another wave of them, so that a busy machine,
  // whose requests arrive more spread out, still builds the pressure that
  // demotion needs.
  std::vector<std::string> texts;
  std::vector<Reply> replies;
  const std::string reached = "crash point " + plan.point + " reached";
  for (int wave = 0; wave < kMaxWaves; ++wave) {
    const size_t first = texts.size();
    for (int i = 0; i < plan.n_in_flight; ++i) {
      const bool old = i % 3 == 2 && !on_disk.empty();
      texts.push_back(
          old ? on_disk[(on_disk.size() - 1 - static_cast<size_t>(i / 3)) % on_disk.size()]
              : prompt(next_seed_++));
    }
    replies.resize(texts.size());
    std::atomic<int> n_answered{0};
    std::vector<std::thread> clients;
    for (size_t i = first; i < texts.size(); ++i) {
      clients.emplace_back([&, i] {
        replies[i] = chat(socket, texts[i]);
        ++n_answered;
      });
    }
    if (plan.point.empty()) {
      // Within the time the requests take, mostly (they take 30-100 ms).
      std::this_thread::sleep_for(std::chrono::milliseconds(rng_() % 60));
      if (n_answered.load() < plan.n_in_flight) ++counts_.killed_in_flight;
      kill(server->pid(), SIGKILL);
    } else if (plan.sigterm) {
      std::this_thread::sleep_for(20ms);
      kill(server->pid(), SIGTERM);
    }
    for (std::thread& client : clients) client.join();
    if (plan.point.empty() || plan.sigterm || !server->running() ||
        server->log().find(reached) != std::string::npos) {
      break;
    }
  }
  if (!plan.point.empty()) {
    // The disk thread may still reach the point after the last reply.
    const bool crashed = server->wait_for_log(reached, 2s);
    server->wait_exit(10s);
    if (crashed) ++counts_.crashed_at_point;
    EXPECT_FALSE(server->running() && crashed) << where << ": alive after its crash point";
    if (server->running()) server->terminate();
  }
  server->wait_exit(30s);
  for (size_t i = 0; i < texts.size(); ++i) {
    if (replies[i].ok) check_reply(texts[i], replies[i], where + ", in flight");
  }
  server.reset();

  // 4. The index and the slab files agree.
  const strata::testing::DiskCacheAudit audit =
      strata::testing::audit_disk_cache(cache, reference_.block_bytes());
  counts_.rows_audited += static_cast<int>(audit.n_rows);
  for (const std::string& problem : audit.problems) ADD_FAILURE() << where << ": " << problem;

  // 5. A restart serves the acknowledged prompts from disk, and nothing wrong.
  ServeProcess restarted(strata::testing::tiny_serve_model(), server_args(cache, plan));
  ASSERT_TRUE(restarted.running()) << where << ": no restart\n" << restarted.log();
  ++counts_.restarts;
  for (const std::string& text : acknowledged) {
    const Reply reply = chat(restarted.socket_path(), text);
    ASSERT_TRUE(reply.ok) << where << ": " << reply.error;
    check_reply(text, reply, where + ", after the restart");
    // On a full disk, reclaiming acknowledged blocks is allowed; with
    // --persist none, nothing is kept across a restart.
    if (!plan.small_disk && !plan.persist_none) {
      EXPECT_EQ(reply.cached_tokens, cacheable(reply.prompt_tokens))
          << where << ": an acknowledged prompt is not on disk any more";
      if (reply.cached_tokens == cacheable(reply.prompt_tokens)) ++counts_.acknowledged_found;
    }
    on_disk.push_back(text);
  }
  for (size_t i = 0; i < texts.size(); i += 3) {
    check_reply(texts[i], chat(restarted.socket_path(), texts[i]), where + ", after the restart");
  }
  const std::string log = restarted.log();
  EXPECT_EQ(log.find("fails its checksum"), std::string::npos) << where << "\n" << log;
  EXPECT_EQ(log.find("whose slot is invalid"), std::string::npos) << where << "\n" << log;
  EXPECT_EQ(restarted.terminate(), 0) << where << "\n" << restarted.log();
}

TEST_F(ServeCrashTest, EveryCrashPointAndRandomKillsLoseNothingAndServeNothingWrong) {
  ASSERT_TRUE(reference_.running());
  const int runs_per_point = env_count("STRATA_CRASH_RUNS", 2);
  const int random_kills = env_count("STRATA_RANDOM_KILLS", 20);
  std::map<std::string, int> crashed_by_point;

  const char* only = std::getenv("STRATA_CRASH_ONLY");  // a part of the point names, to debug
  for (std::string_view point : strata::kCrashPoints) {
    if (only != nullptr && point.find(only) == std::string_view::npos) continue;
    const PointPlan plan = plan_for(point);
    const std::filesystem::path cache = root_ / std::string(point);
    std::vector<std::string> on_disk;
    for (int run = 0; run < runs_per_point; ++run) {
      if (run == 0 || plan.fresh_cache_each_run) {
        std::filesystem::remove_all(cache);
        on_disk.clear();
        // A new slab file is made only in an empty folder: no seeding there.
        if (!plan.fresh_cache_each_run) seed(cache, plan, on_disk);
        if (HasFatalFailure()) return;
      }
      const int crashed_before = counts_.crashed_at_point;
      run_once(cache, plan, run, on_disk);
      if (HasFatalFailure()) return;
      crashed_by_point[std::string(point)] += counts_.crashed_at_point - crashed_before;
    }
    std::filesystem::remove_all(cache);
  }

  const std::filesystem::path cache = root_ / "random";
  std::vector<std::string> on_disk;
  if (random_kills > 0) seed(cache, PointPlan{}, on_disk);
  for (int run = 0; run < random_kills && !HasFatalFailure(); ++run) {
    run_once(cache, PointPlan{}, run, on_disk);
  }

  json report = {{"runs_per_point", runs_per_point},
                 {"points", strata::kCrashPoints.size()},
                 {"random_kills", random_kills},
                 {"runs", counts_.runs},
                 {"crashed_at_point", counts_.crashed_at_point},
                 {"killed_in_flight", counts_.killed_in_flight},
                 {"restarts", counts_.restarts},
                 {"replies_checked", counts_.replies_checked},
                 {"acknowledged_found_after_restart", counts_.acknowledged_found},
                 {"index_rows_audited", counts_.rows_audited},
                 {"crashes_by_point", crashed_by_point}};
  std::printf("%s\n", report.dump(2).c_str());
  // Every point must be reached: a point never reached tests nothing.
  for (std::string_view point : strata::kCrashPoints) {
    if (only != nullptr && point.find(only) == std::string_view::npos) continue;
    EXPECT_GE(crashed_by_point[std::string(point)], (runs_per_point + 1) / 2)
        << point << " was reached in too few runs";
  }
}

}  // namespace
