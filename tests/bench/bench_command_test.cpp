// `strata bench` end to end on a small generated model: the concurrency mode's
// JSON (counts, ordered percentiles, prefix hits) and the single-sequence
// mode's keys; plus the nearest-rank percentiles it reports.
#include "bench/concurrency_bench.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/strata_command.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::run_shell;

const std::string kStrata = strata::testing::strata_binary();

TEST(NearestRankPercentiles, PicksMeasuredSamples) {
  strata::LatencyPercentiles none = strata::nearest_rank_percentiles({});
  EXPECT_EQ(none.max, 0.0);
  strata::LatencyPercentiles one = strata::nearest_rank_percentiles({7.0});
  EXPECT_EQ(one.p50, 7.0);
  EXPECT_EQ(one.p99, 7.0);
  // 1..10 shuffled: p50 = 5th, p90 = 9th, p99 = 10th.
  strata::LatencyPercentiles ten =
      strata::nearest_rank_percentiles({4, 9, 1, 10, 2, 8, 3, 7, 5, 6});
  EXPECT_EQ(ten.p50, 5.0);
  EXPECT_EQ(ten.p90, 9.0);
  EXPECT_EQ(ten.p99, 10.0);
  EXPECT_EQ(ten.max, 10.0);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  strata::LatencyPercentiles p = strata::nearest_rank_percentiles(hundred);
  EXPECT_EQ(p.p50, 50.0);
  EXPECT_EQ(p.p90, 90.0);
  EXPECT_EQ(p.p99, 99.0);
  EXPECT_EQ(p.max, 100.0);
}

// The steady window: from the last first token of the first wave to its
// first last token; tokens strictly after the start, up to the end, count.
TEST(SteadyDecode, CountsTheWindowWhereTheWholeFirstWaveDecodes) {
  const std::vector<std::vector<double>> times = {
      {1.0, 2.0, 3.0, 4.0, 5.0},  // first token at 1, last at 5
      {2.0, 2.5, 3.0, 3.5, 4.0},  // first at 2 (the window's start), last at 4 (its end)
      {6.0, 7.0},                 // a second wave's request: only its tokens <= 4 would count
  };
  const strata::SteadyDecode steady = strata::steady_decode(times, 2);
  EXPECT_DOUBLE_EQ(steady.seconds, 2.0);
  EXPECT_EQ(steady.n_tokens, 2 + 4);  // 3, 4 of the first; 2.5, 3, 3.5, 4 of the second
  EXPECT_DOUBLE_EQ(steady.tok_s(), 3.0);
  // One token each: no window.
  const std::vector<std::vector<double>> single = {{1.0}, {1.5}};
  EXPECT_EQ(strata::steady_decode(single, 2).seconds, 0.0);
  EXPECT_EQ(strata::steady_decode(single, 2).tok_s(), 0.0);
}

class BenchCommandTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = strata::testing::test_model_path("bench_command_qwen3.gguf");
    CommandResult made =
        run_shell(strata::testing::strata_dev_binary() +
                  " make-model --arch qwen3 --tokenizer qwen3 --hidden 64"
                  " --layers 2 --heads 4 --kv-heads 2 --ffn 128 --ctx 1024 --type q8_0"
                  " --seed 3 -o " +
                  model_);
    ASSERT_EQ(made.exit_code, 0) << made.errors;
  }

  static nlohmann::json bench_json(const std::string& args) {
    CommandResult r = run_shell(kStrata + " bench -m " + model_ + " -t 2 " + args);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    return nlohmann::json::parse(r.output);
  }

  static std::string model_;
};

std::string BenchCommandTest::model_;

void expect_ordered_percentiles(const nlohmann::json& p) {
  const double p50 = p["p50"], p90 = p["p90"], p99 = p["p99"], max = p["max"];
  EXPECT_GE(p50, 0.0);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p99);
  EXPECT_LE(p99, max);
}

TEST_F(BenchCommandTest, ConcurrencyModeReportsLatenciesAndPrefixHits) {
  nlohmann::json out = bench_json("--concurrency 4 --requests 8 --prompt-tokens 64 --gen-tokens 8"
                                  " --shared-prefix 32");
  EXPECT_EQ(out["bench"], "cpu_concurrency");
  EXPECT_EQ(out["requests"], 8);
  EXPECT_EQ(out["concurrency"], 4);
  EXPECT_EQ(out["prompt_tokens"], 64);
  EXPECT_EQ(out["gen_tokens"], 8);
  EXPECT_EQ(out["shared_prefix"], 32);
  EXPECT_EQ(out["generated_tokens"], 64);
  EXPECT_GT(out["wall_seconds"].get<double>(), 0.0);
  EXPECT_GT(out["decode_tok_s"].get<double>(), 0.0);
  EXPECT_GT(out["total_tok_s"].get<double>(), out["decode_tok_s"].get<double>());
  EXPECT_GT(out["steady_window_seconds"].get<double>(), 0.0);
  EXPECT_GT(out["decode_steady_tok_s"].get<double>(), 0.0);
  expect_ordered_percentiles(out["ttft_ms"]);
  expect_ordered_percentiles(out["itl_ms"]);
  // Requests 5-8 are submitted only after one of the first four finished and
  // published its blocks, so each finds the 32-token prefix (2 full blocks of
  // 16) cached: at least 4 * 32 of 8 * 64 prompt tokens. The first request can
  // hit nothing and the random tails share no block: at most 7 * 32.
  const int64_t cached = out["cached_prompt_tokens"];
  EXPECT_EQ(cached % 32, 0);
  EXPECT_GE(cached, 4 * 32);
  EXPECT_LE(cached, 7 * 32);
  EXPECT_DOUBLE_EQ(out["prefix_hit_ratio"].get<double>(), static_cast<double>(cached) / (8 * 64));
  EXPECT_GE(out["prefix_hit_ratio"].get<double>(), 0.25);
  // At least one step per generated token of the longest request, prefill included.
  EXPECT_GE(out["engine"]["steps"].get<int64_t>(), 8);
  EXPECT_EQ(out["engine"]["preemptions"], 0);
  EXPECT_GT(out["read_gb_per_s"].get<double>(), 0.0);
  EXPECT_GT(out["decode_weight_bytes"].get<int64_t>(), 0);
  EXPECT_GT(out["decode_ceiling_tok_s"].get<double>(), 0.0);
}

TEST_F(BenchCommandTest, ConcurrencyDefaultsRequestsToConcurrency) {
  nlohmann::json out = bench_json("--concurrency 2 --prompt-tokens 16 --gen-tokens 1");
  EXPECT_EQ(out["requests"], 2);
  EXPECT_EQ(out["generated_tokens"], 2);
  EXPECT_EQ(out["shared_prefix"], 0);
  EXPECT_EQ(out["max_batch_tokens"], 512);  // the engine step's budget, as serve's default
  EXPECT_EQ(out["itl_ms"]["max"], 0.0);  // one token each: no inter-token gaps
  expect_ordered_percentiles(out["ttft_ms"]);
}

TEST_F(BenchCommandTest, SingleSequenceModeKeepsItsKeys) {
  nlohmann::json out = bench_json("--prompt-tokens 32 --gen-tokens 4");
  EXPECT_EQ(out["bench"], "cpu");
  for (const char* key : {"model", "arch", "backend", "threads", "simd", "kv_type", "prompt_tokens",
                          "prefill_tok_s", "gen_tokens", "decode_tok_s", "decode_weight_bytes",
                          "read_gb_per_s", "decode_ceiling_tok_s", "decode_ratio_to_ceiling"}) {
    EXPECT_TRUE(out.contains(key)) << key;
  }
  EXPECT_FALSE(out.contains("ttft_ms"));
  EXPECT_EQ(out["gen_tokens"], 4);
}

TEST_F(BenchCommandTest, PrefillsInPassesOfMaxBatchTokens) {
  nlohmann::json out = bench_json("--prompt-tokens 40 --gen-tokens 2 --max-batch-tokens 16");
  EXPECT_EQ(out["max_batch_tokens"], 16);
  EXPECT_EQ(out["gen_tokens"], 2);
  EXPECT_GT(out["prefill_tok_s"].get<double>(), 0.0);
  EXPECT_EQ(bench_json("--prompt-tokens 8 --gen-tokens 1")["max_batch_tokens"], 512);

  CommandResult r = run_shell(kStrata + " bench -m " + model_ + " --max-batch-tokens 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.errors.find("--max-batch-tokens"), std::string::npos) << r.errors;
}

TEST_F(BenchCommandTest, RejectsAPrefixLongerThanThePrompt) {
  CommandResult r = run_shell(kStrata + " bench -m " + model_ +
                              " --concurrency 2 --prompt-tokens 16 --shared-prefix 32");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.errors.find("--shared-prefix"), std::string::npos) << r.errors;
}

}  // namespace
