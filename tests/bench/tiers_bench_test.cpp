// `strata bench tiers` on a small generated model and a few blocks: the move
// figures and the TTFT runs by tier come out whole and sane (every block
// moved, the prefix found in T1 and again in T2, the same greedy token), the
// JSON has its keys, prompts are clipped to the context with a note, and the
// scratch folder is gone afterwards. Never asserts a speed.
#include "bench/tiers_bench.h"
#include "engine/kv_sizing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/kv_layout.h"
#include "tests/support/strata_command.h"

namespace {

using strata::testing::CommandResult;
using strata::testing::run_shell;

const std::string kStrata = strata::testing::strata_binary();

class TiersBenchTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_path_ = strata::testing::test_model_path("tiers_bench_llama.gguf");
    CommandResult made = run_shell(strata::testing::strata_dev_binary() +
                                   " make-model --hidden 64 --layers 2 --heads 4"
                                   " --kv-heads 2 --ffn 128 --ctx 1024 --type q8_0 --seed 5 -o " +
                                   model_path_);
    ASSERT_EQ(made.exit_code, 0) << made.errors;
    model_ = strata::LoadedModel::open(model_path_);
  }
  static void TearDownTestSuite() { model_.reset(); }

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata_tiers_bench_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int64_t block_bytes() const {
    return strata::kv_layout_for(model_->config()).block_bytes();
  }

  static std::string model_path_;
  static std::unique_ptr<strata::LoadedModel> model_;
  std::filesystem::path dir_;
};

std::string TiersBenchTest::model_path_;
std::unique_ptr<strata::LoadedModel> TiersBenchTest::model_;

TEST_F(TiersBenchTest, MovesEveryBlockBothWaysAndMeasuresTheCeiling) {
  // 2 layers x K,V x 2 kv heads x 16 tokens x 16 dims x f16: exactly one page.
  ASSERT_EQ(block_bytes(), 4096);
  const strata::TierMoveResult r =
      strata::measure_tier_moves({.dir = dir_, .block_bytes = block_bytes(), .n_blocks = 48});
  EXPECT_EQ(r.slot_bytes, 4096);
  EXPECT_EQ(r.n_blocks, 48);
  EXPECT_EQ(r.bytes, 48 * 4096);
  for (double s : {r.tier_write_s, r.tier_read_s, r.store_write_s, r.store_read_s, r.plain_write_s,
                   r.plain_read_s, r.plain_large_write_s, r.plain_large_read_s}) {
    EXPECT_GT(s, 0.0);
  }
  EXPECT_EQ(r.large_chunk_bytes, 1 << 20);
  // Its files are gone; the folder itself is the caller's.
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(TiersBenchTest, BlocksSmallerThanASlotMoveWholeSlots) {
  const strata::TierMoveResult r = strata::measure_tier_moves(
      {.dir = dir_, .block_bytes = 5000, .block_tokens = 4, .n_blocks = 10});
  EXPECT_EQ(r.slot_bytes, 8192);
  EXPECT_EQ(r.bytes, 10 * 8192);
  EXPECT_GT(r.tier_read_s, 0.0);
}

TEST_F(TiersBenchTest, FindsThePrefixInT1AndAgainInT2) {
  const std::vector<strata::TierTtftResult> results =
      strata::measure_tier_ttft(*model_, {.dir = dir_, .prompt_tokens = {200, 64}, .n_threads = 2});
  ASSERT_EQ(results.size(), 2u);
  for (const strata::TierTtftResult& r : results) {
    SCOPED_TRACE(r.prompt_tokens);
    EXPECT_EQ(r.n_threads, 2);
    EXPECT_GT(r.cold_s, 0.0);
    EXPECT_GT(r.t1_s, 0.0);
    EXPECT_GT(r.t2_s, 0.0);
    EXPECT_EQ(r.cached_tokens_cold, 0);
    // Whole blocks of 16, short of the prompt's last token (it must be computed).
    EXPECT_GT(r.cached_tokens_t1, 0);
    EXPECT_LT(r.cached_tokens_t1, r.prompt_tokens);
    EXPECT_EQ(r.cached_tokens_t1 % 16, 0);
    EXPECT_EQ(r.cached_tokens_t2, r.cached_tokens_t1);
    EXPECT_EQ(r.t2_blocks_loaded, r.cached_tokens_t2 / 16);
    EXPECT_GE(r.first_token_cold, 0);
    EXPECT_EQ(r.first_token_t1, r.first_token_cold);
    EXPECT_EQ(r.first_token_t2, r.first_token_cold);
  }
  EXPECT_EQ(results[0].prompt_tokens, 200);
  EXPECT_EQ(results[1].prompt_tokens, 64);
}

void expect_keys(const nlohmann::json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) EXPECT_TRUE(object.contains(key)) << key;
}

TEST_F(TiersBenchTest, ReportsOneJsonObjectAndCleansUp) {
  const nlohmann::ordered_json out = strata::run_tiers_bench(
      {.model_path = model_path_, .cache_dir = dir_, .n_blocks = 32,
       .prompt_tokens = {100, 4096, 8192}, .n_threads = 2});
  EXPECT_EQ(out["bench"], "tiers");
  expect_keys(out, {"model", "arch", "context_length", "threads", "kv_type", "cache_dir",
                    "filesystem", "direct_io", "block_tokens", "block_bytes", "slot_bytes", "move",
                    "ttft", "t0", "notes", "ceiling"});
  EXPECT_EQ(out["block_bytes"], 4096);
  EXPECT_EQ(out["threads"], 2);
  const nlohmann::ordered_json& move = out["move"];
  EXPECT_EQ(move["blocks"], 32);
  for (const char* key : {"t1_to_t2_gb_per_s", "t2_to_t1_gb_per_s", "store_write_gb_per_s",
                          "store_read_gb_per_s", "plain_odirect_write_gb_per_s",
                          "plain_odirect_read_gb_per_s", "write_ratio", "read_ratio",
                          "plain_odirect_large_write_gb_per_s", "plain_odirect_large_read_gb_per_s",
                          "write_ratio_to_large", "read_ratio_to_large"}) {
    ASSERT_TRUE(move.contains(key)) << key;
    EXPECT_GT(move[key].get<double>(), 0.0) << key;
  }
  // 4096 and 8192 do not fit a 1024-token context: both become 1023, once.
  const nlohmann::ordered_json& ttft = out["ttft"];
  ASSERT_EQ(ttft.size(), 2u);
  EXPECT_EQ(ttft[0]["prompt_tokens"], 100);
  EXPECT_EQ(ttft[1]["prompt_tokens"], 1023);
  for (const auto& entry : ttft) {
    expect_keys(entry, {"cold_s", "t1_s", "t2_s", "t1_speedup", "t2_speedup", "cold_prefill_tok_s",
                        "cached_tokens_t1", "cached_tokens_t2", "t2_blocks_loaded"});
    EXPECT_GT(entry["cached_tokens_t1"].get<int64_t>(), 0);
    EXPECT_EQ(entry["cached_tokens_t2"], entry["cached_tokens_t1"]);
    EXPECT_EQ(entry["same_first_token"], true);
    EXPECT_GT(entry["cold_prefill_tok_s"].get<double>(), 0.0);
  }
  ASSERT_GE(out["notes"].size(), 3u);
  EXPECT_NE(out["notes"][0].get<std::string>().find("4096 clipped to 1023"), std::string::npos)
      << out["notes"];
  EXPECT_NE(out["notes"][1].get<std::string>().find("8192 clipped to 1023"), std::string::npos)
      << out["notes"];
  EXPECT_FALSE(out["ceiling"].get<std::string>().empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir_));  // the scratch subfolder is gone
}

TEST_F(TiersBenchTest, CommandLine) {
  CommandResult r =
      run_shell(kStrata + " bench tiers -m " + model_path_ +
                " -t 2 --blocks 16 --prompt-tokens 40,48 --cache-dir " + dir_.string());
  ASSERT_EQ(r.exit_code, 0) << r.errors;
  const nlohmann::json out = nlohmann::json::parse(r.output);
  EXPECT_EQ(out["bench"], "tiers");
  EXPECT_EQ(out["move"]["blocks"], 16);
  ASSERT_EQ(out["ttft"].size(), 2u);
  EXPECT_EQ(out["ttft"][1]["prompt_tokens"], 48);
  EXPECT_NE(r.errors.find("bench tiers"), std::string::npos) << "progress lines on stderr";

  CommandResult bad = run_shell(kStrata + " bench tiers --blocks 16");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.errors.find("--model"), std::string::npos) << bad.errors;
}

}  // namespace
