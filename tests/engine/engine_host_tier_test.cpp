// The Engine with a host tier (T1) below its compute tier, as on a GPU: here
// the CPU backend's pool plays the VRAM arena and a ThreadCopier the copy
// stream (the CUDA engine test runs the same moves on a GPU). Blocks evicted
// from the small compute pool are demoted to T1 and promoted back; sequences
// preempted for room resume from there; with a disk tier below, a restarted
// engine brings a prompt up from disk through T1. Greedy outputs always
// equal a cold run's.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "tests/engine/engine_test_support.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

using namespace strata::testing;

// A 300-token prompt and 12 tokens need 20 blocks of 16: room for two.
constexpr int64_t kComputeBlocks = 40;
constexpr int64_t kHostBlocks = 512;

TEST(EngineHostTierTest, EvictedPromptsComeBackFromHostMemory) {
  const GenerateRequest a = request_for(1, 300, 12);
  const std::vector<Outcome> cold = run_alone({a});
  EngineUnderTest e(EngineSetup{.n_kv_blocks = kComputeBlocks, .n_host_blocks = kHostBlocks});
  EXPECT_EQ(run_one(e, a).tokens, cold[0].tokens);
  for (int i = 2; i <= 4; ++i) run_one(e, request_for(i, 300, 12));  // push a out of the pool
  const Outcome warm = run_one(e, a);
  EXPECT_EQ(warm.tokens, cold[0].tokens);
  EXPECT_EQ(warm.text, cold[0].text);
  EXPECT_EQ(warm.usage.cached_prompt_tokens, 288);  // 18 full blocks of the prompt
  const EngineStats stats = e.shut_down();
  ASSERT_TRUE(stats.host_tier.has_value());
  EXPECT_GE(stats.host_tier->n_blocks_promoted, 17);  // at most one block stayed in the pool
  EXPECT_GE(stats.host_tier->n_blocks_demoted, 18);
  EXPECT_EQ(stats.host_tier->n_blocks_total, kHostBlocks);
  EXPECT_EQ(stats.host_tier->n_copies_in_flight, 0);
}

// More sequences than the pool holds: eight of 6 blocks each in a pool of 14,
// in steps of at most 8 tokens, all decode together and outgrow it. Some are
// preempted, their blocks go idle, are demoted under pressure and promoted
// when the sequence resumes. (The CUDA engine test runs the same case.)
TEST(EngineHostTierTest, PreemptedSequencesResumeWithTheSameOutput) {
  std::vector<GenerateRequest> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(request_for(10 + i, 16, 80));
  const SchedulerOptions small_steps{.max_batch_tokens = 8};
  const std::vector<Outcome> alone = run_alone(requests, small_steps);
  EngineUnderTest e(EngineSetup{.n_kv_blocks = 14, .scheduler = small_steps,
                                .n_host_blocks = kHostBlocks});
  const std::map<int, Outcome> together = run_together(e, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(together.at(static_cast<int>(i)).tokens, alone[i].tokens) << "request " << i;
  }
  const EngineStats stats = e.shut_down();
  EXPECT_GT(stats.n_preemptions, 0);
  ASSERT_TRUE(stats.host_tier.has_value());
  EXPECT_GT(stats.host_tier->n_blocks_demoted, 0);
  EXPECT_GT(stats.host_tier->n_blocks_promoted, 0);
}

using EngineHostAndDiskTierTest = DiskTierTest;

TEST_F(EngineHostAndDiskTierTest, ARestartedEngineBringsThePromptUpFromDiskThroughHostMemory) {
  const GenerateRequest r = request_for(31, 300, 12);
  const Outcome cold = run_alone({r})[0];
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier();
    EngineUnderTest e(EngineSetup{.n_kv_blocks = kComputeBlocks, .disk_tier = disk.get(),
                                  .n_host_blocks = kHostBlocks});
    EXPECT_EQ(run_one(e, r).tokens, cold.tokens);
    e.shut_down();  // write-through finishes: every full block reached T1, then the disk
    disk->wait_idle();
    EXPECT_EQ(disk->stats().n_blocks, 19);
  }
  std::unique_ptr<DiskWorker> disk = open_disk_tier();
  EngineUnderTest e(EngineSetup{.n_kv_blocks = kComputeBlocks, .disk_tier = disk.get(),
                                .n_host_blocks = kHostBlocks});
  const Outcome warm = run_one(e, r);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.usage.cached_prompt_tokens, 288);
  const EngineStats stats = e.shut_down();
  EXPECT_EQ(stats.n_blocks_loaded, 18);
  ASSERT_TRUE(stats.host_tier.has_value());
  EXPECT_EQ(stats.host_tier->n_blocks_promoted, 18);
}

}  // namespace
}  // namespace strata
