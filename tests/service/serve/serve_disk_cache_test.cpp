// The disk KV cache of a real `strata serve`, across real restarts: a long
// prompt seen before is served from the slab files after a restart (cached
// tokens in the usage, greedy output identical to a cold run); kill -9 at
// random moments of heavy write-through never leads to a wrong answer; a full
// disk turns persistence off while serving goes on; and blocks of one model,
// KV type or block size are never served to another.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/serve_process.h"

namespace {

using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::seeded_words;
using strata::testing::ServeProcess;
using strata::testing::tiny_serve_model;

constexpr int kBlockTokens = 16;

struct Completion {
  std::string text;
  int prompt_tokens = -1;
  int cached_tokens = -1;
};

// A greedy completion over the server's Unix socket.
Completion complete(const ServeProcess& server, const std::string& prompt, int max_tokens = 12) {
  const json body = {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}};
  CommandResult r = curl("--unix-socket " + server.socket_path() +
                         " http://strata/v1/completions -H 'Content-Type: application/json' -d '" +
                         body.dump() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.errors;
  const json reply = json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  if (!reply.contains("choices")) {
    ADD_FAILURE() << r.output;
    return {};
  }
  return {.text = reply["choices"][0]["text"],
          .prompt_tokens = reply["usage"]["prompt_tokens"],
          .cached_tokens = reply["usage"]["prompt_tokens_details"]["cached_tokens"]};
}

// The full blocks of a prompt that a cache can serve (one token is always run).
int cacheable(int prompt_tokens) { return (prompt_tokens - 1) / kBlockTokens * kBlockTokens; }

class ServeDiskCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = std::filesystem::temp_directory_path() /
                 ("strata_serve_disk_cache_" + std::to_string(getpid()) + "_" +
                  testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache_dir_);
  }
  void TearDown() override { std::filesystem::remove_all(cache_dir_); }

  std::vector<std::string> cache_args(std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"--cache-dir", cache_dir_.string()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  // What a server without a disk cache answers.
  static std::vector<Completion> cold_run(const std::vector<std::string>& prompts,
                                          const std::string& model = tiny_serve_model(),
                                          std::vector<std::string> args = {}) {
    args.insert(args.end(), {"--cache-dir", "none"});
    ServeProcess cold(model, args);
    std::vector<Completion> outputs;
    for (const std::string& prompt : prompts) outputs.push_back(complete(cold, prompt));
    return outputs;
  }

  std::filesystem::path cache_dir_;
};

TEST_F(ServeDiskCacheTest, LongPromptSeenBeforeIsServedFromDiskAfterARestart) {
  const std::string prompt = seeded_words(400, 1);
  const Completion cold = cold_run({prompt})[0];
  ASSERT_GT(cold.prompt_tokens, 512);
  {
    ServeProcess first(tiny_serve_model(), cache_args());
    const Completion seen = complete(first, prompt);
    EXPECT_EQ(seen.text, cold.text);
    EXPECT_EQ(seen.cached_tokens, 0);
    EXPECT_EQ(first.terminate(), 0) << first.log();  // SIGTERM: write-through finishes
  }
  ServeProcess second(tiny_serve_model(), cache_args());
  EXPECT_NE(second.log().find("disk KV cache"), std::string::npos) << second.log();
  const Completion warm = complete(second, prompt);
  EXPECT_EQ(warm.text, cold.text) << "greedy output after a restart differs from a cold run";
  EXPECT_EQ(warm.cached_tokens, cacheable(cold.prompt_tokens))
      << "only the uncached tail should be prefilled";
  // A longer prompt that starts the same: the shared blocks come from disk.
  const Completion longer = complete(second, prompt + " " + seeded_words(40, 2));
  EXPECT_GE(longer.cached_tokens, cacheable(cold.prompt_tokens));
}

// Blocks persisted for one model, KV type or block size: a folder per
// fingerprint, and never a hit for another.
TEST_F(ServeDiskCacheTest, BlocksAreNeverServedToAnotherModelOrLayout) {
  const std::string prompt = seeded_words(300, 3);
  {
    ServeProcess writer(tiny_serve_model(), cache_args());
    complete(writer, prompt);
    EXPECT_EQ(writer.terminate(), 0);
  }
  struct Variant {
    std::string name;
    std::string model;
    std::vector<std::string> args;
  };
  const std::vector<Variant> variants = {
      {"another model", tiny_serve_model(8), {}},
      {"another KV type", tiny_serve_model(), {"--kv-type", "f32"}},
      {"another block size", tiny_serve_model(), {"--block-tokens", "32"}},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    const Completion cold = cold_run({prompt}, v.model, v.args)[0];
    ServeProcess other(v.model, cache_args(v.args));
    const Completion reply = complete(other, prompt);
    EXPECT_EQ(reply.cached_tokens, 0);
    EXPECT_EQ(reply.text, cold.text);
  }
  // And the first model still finds its own blocks.
  ServeProcess again(tiny_serve_model(), cache_args());
  EXPECT_GT(complete(again, prompt).cached_tokens, 0);
}

json get_json(const ServeProcess& server, const std::string& args) {
  CommandResult r = curl("--unix-socket " + server.socket_path() + " " + args);
  EXPECT_EQ(r.exit_code, 0) << r.errors;
  return json::parse(r.output, nullptr, /*allow_exceptions=*/false);
}

// GET /v1/cache, POST /v1/cache/persist and /v1/cache/clear, and the tier
// series of /metrics, with --persist none (nothing written until asked).
// The memory tiers come first — host on the CPU; vram, then host on a GPU —
// and the disk last.
TEST_F(ServeDiskCacheTest, CacheEndpointsReportPersistAndClear) {
  ServeProcess server(tiny_serve_model(), cache_args({"--persist", "none"}));
  const std::string prompt = seeded_words(200, 4);
  const Completion first = complete(server, prompt);
  json cache = get_json(server, "http://strata/v1/cache");
  const size_t n_tiers = cache["tiers"].size();
  ASSERT_TRUE(n_tiers == 2 || n_tiers == 3) << cache.dump(2);
  const bool on_gpu = n_tiers == 3;
  EXPECT_EQ(cache["block_tokens"], kBlockTokens);
  EXPECT_EQ(cache["tiers"][0]["tier"], on_gpu ? "vram" : "host");
  if (on_gpu) {
    EXPECT_EQ(cache["tiers"][1]["tier"], "host");
  }
  EXPECT_GT(cache["tiers"][0]["blocks_cached"].get<int>(), 0);
  EXPECT_EQ(cache["tiers"].back()["tier"], "disk");
  EXPECT_EQ(cache["tiers"].back()["persist"], "none");
  EXPECT_EQ(cache["tiers"].back()["blocks"], 0) << "--persist none wrote without pressure";

  const json persisted = get_json(server, "-X POST http://strata/v1/cache/persist");
  const int n_blocks = cache["tiers"][0]["blocks_cached"];
  EXPECT_EQ(persisted["blocks_on_disk"], n_blocks) << persisted.dump();
  cache = get_json(server, "http://strata/v1/cache");
  EXPECT_EQ(cache["tiers"].back()["blocks"], n_blocks);
  EXPECT_EQ(cache["tiers"].back()["bytes_written"], n_blocks * cache["block_bytes"].get<int64_t>());
  const std::string metrics = curl("--unix-socket " + server.socket_path() +
                                   " http://strata/metrics").output;
  EXPECT_NE(metrics.find("strata_kv_bytes_moved_total{from=\"host\",to=\"disk\"} " +
                         std::to_string(n_blocks * cache["block_bytes"].get<int64_t>())),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("strata_kv_blocks_cached{tier=\"disk\"} " + std::to_string(n_blocks)),
            std::string::npos)
      << metrics;

  // strata stats: the same numbers, for people.
  CommandResult stats =
      strata::testing::run_strata("stats --server " + server.socket_path());
  EXPECT_EQ(stats.exit_code, 0) << stats.errors;
  EXPECT_NE(stats.output.find("disk: " + std::to_string(n_blocks) + " of "), std::string::npos)
      << stats.output;
  EXPECT_NE(stats.output.find("persist none"), std::string::npos) << stats.output;
  CommandResult stats_json =
      strata::testing::run_strata("stats --json --server " + server.socket_path());
  EXPECT_EQ(json::parse(stats_json.output)["tiers"].back()["blocks"], n_blocks)
      << stats_json.output;

  // Every memory tier is emptied: on a GPU the blocks are in VRAM and in host memory.
  const json cleared = get_json(server, "-X POST http://strata/v1/cache/clear");
  EXPECT_EQ(cleared["cleared"]["host_blocks"], on_gpu ? 2 * n_blocks : n_blocks) << cleared.dump();
  for (int i = 0;
       i < 100 && get_json(server, "http://strata/v1/cache")["tiers"].back()["blocks"] != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(get_json(server, "http://strata/v1/cache")["tiers"].back()["blocks"], 0);
  const Completion again = complete(server, prompt);
  EXPECT_EQ(again.cached_tokens, 0) << "served from a cache that was cleared";
  EXPECT_EQ(again.text, first.text);
  EXPECT_EQ(get_json(server, "http://strata/v1/cache/clear")["error"]["type"],
            "invalid_request_error");  // GET on a POST route: 405
}

TEST(ServeStatsTest, NoServerIsAClearError) {
  CommandResult r = strata::testing::run_strata("stats --server /nonexistent/strata.sock");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.errors.find("/nonexistent/strata.sock"), std::string::npos) << r.errors;
}

// kill -9 at 50 random moments while many requests write their blocks
// through: every restart opens the index, and every answer afterwards equals
// a cold run's (no block that failed to reach the disk whole is served).
TEST_F(ServeDiskCacheTest, KillNineDuringWriteThroughNeverServesABadBlock) {
  constexpr int kCycles = 50;
  constexpr int kPrompts = 8;
  std::vector<std::string> prompts;
  for (int i = 0; i < kPrompts; ++i) prompts.push_back(seeded_words(150 + 40 * i, 100 + i));
  const std::vector<Completion> cold = cold_run(prompts);
  std::mt19937 rng(2026);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    ServeProcess server(tiny_serve_model(), cache_args());
    ASSERT_TRUE(server.running()) << "cycle " << cycle << ": did not start\n" << server.log();
    // Fire requests without waiting for them, then kill at a random moment.
    std::string burst;
    for (int i = 0; i < kPrompts; ++i) {
      const json body = {{"prompt", prompts[static_cast<size_t>((cycle + i) % kPrompts)] + " " +
                                        seeded_words(20 + i, cycle * 100 + i)},
                         {"max_tokens", 24}, {"temperature", 0}};
      burst += "curl -sS -o /dev/null --unix-socket " + server.socket_path() +
               " http://strata/v1/completions -d '" + body.dump() + "' 2>/dev/null & ";
    }
    strata::testing::run_shell(burst + "true");
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 400));
    kill(server.pid(), SIGKILL);
    server.wait_exit(std::chrono::seconds(10));
  }
  ServeProcess survivor(tiny_serve_model(), cache_args());
  ASSERT_TRUE(survivor.running()) << survivor.log();
  int n_cached = 0;
  for (int i = 0; i < kPrompts; ++i) {
    const Completion warm = complete(survivor, prompts[static_cast<size_t>(i)]);
    EXPECT_EQ(warm.text, cold[static_cast<size_t>(i)].text) << "prompt " << i;
    n_cached += warm.cached_tokens;
  }
  EXPECT_GT(n_cached, 0) << "nothing written before the kills survived them\n" << survivor.log();
  EXPECT_EQ(survivor.log().find("fails its checksum"), std::string::npos) << survivor.log();
}

// A disk that fills up (here: a file size limit) turns persistence off with a
// warning; requests are still answered, and correctly.
TEST_F(ServeDiskCacheTest, FullDiskTurnsPersistenceOffAndServingGoesOn) {
  std::vector<std::string> prompts;
  for (int i = 0; i < 6; ++i) prompts.push_back(seeded_words(450, 200 + i));
  const std::vector<Completion> cold = cold_run(prompts);
  ServeProcess server(tiny_serve_model(), cache_args(), {}, /*wait_ready=*/true,
                      /*file_size_limit=*/int64_t{1} << 20);
  ASSERT_TRUE(server.running()) << server.log();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(complete(server, prompts[i]).text, cold[i].text) << "prompt " << i;
  }
  EXPECT_TRUE(server.wait_for_log("persistence is off", std::chrono::seconds(10))) << server.log();
  EXPECT_EQ(complete(server, prompts[0]).text, cold[0].text);
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
