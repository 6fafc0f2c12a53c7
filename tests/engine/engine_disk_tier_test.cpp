// The Engine with a disk tier (T2): full blocks are written through to real
// slab files and a SQLite index in a temporary folder; a new engine (a fresh,
// empty host pool, as after a restart) loads a prompt's blocks back instead of
// computing them, and its greedy output equals a cold run's. Loads that fail
// (a corrupted slab) fall back to recomputing, with the same output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include "tests/engine/engine_test_support.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

using namespace strata::testing;

using EngineDiskTierTest = DiskTierTest;

TEST_F(EngineDiskTierTest, RestartedEngineLoadsThePromptInsteadOfComputingIt) {
  const GenerateRequest r = request_for(11, 300, 12);
  const Outcome cold = run_alone({r})[0];
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier();
    EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
    const Outcome first = run_one(e, r);
    EXPECT_EQ(first.tokens, cold.tokens);
    e.shut_down();
    disk->wait_idle();
    // Every full block of prompt + output is on disk: (300 + 12 - 1) / 16.
    EXPECT_EQ(disk->stats().n_blocks, 19);
  }
  std::unique_ptr<DiskWorker> disk = open_disk_tier();  // a restart: index and slabs reopened
  EXPECT_EQ(disk->stats().n_blocks, 19);
  EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
  const Outcome warm = run_one(e, r);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.text, cold.text);
  EXPECT_EQ(warm.usage.cached_prompt_tokens, 288);  // 18 full blocks of the 300-token prompt
  const EngineStats stats = e.shut_down();
  EXPECT_EQ(stats.n_computed_prompt_tokens, 300 - 288);
  EXPECT_EQ(disk->stats().n_loads, 18);
}

// The cost model: while no prefill has been measured a prompt found on disk
// is loaded; once one has, and loading is made to look slow (a 10 s latency
// per round), such a prompt is computed instead, with the same output.
TEST_F(EngineDiskTierTest, PromptsAreComputedWhereLoadingIsSlower) {
  const GenerateRequest on_disk = request_for(21, 200, 4);
  const GenerateRequest fresh = request_for(22, 100, 4);
  const Outcome cold = run_alone({on_disk})[0];
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier();
    EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
    run_one(e, on_disk);
    e.shut_down();
    disk->wait_idle();
  }
  const LoadCostOptions slow_loads{.load_latency_s = 10.0};
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier();
    EngineUnderTest e(EngineSetup{.disk_tier = disk.get(), .load_cost = slow_loads});
    EXPECT_EQ(run_one(e, on_disk).usage.cached_prompt_tokens, 192);  // nothing measured yet
    EXPECT_EQ(e.shut_down().n_loads_declined, 0);
  }
  std::unique_ptr<DiskWorker> disk = open_disk_tier();
  EngineUnderTest e(EngineSetup{.disk_tier = disk.get(), .load_cost = slow_loads});
  run_one(e, fresh);  // a 100-token prefill: the rate is measured
  const Outcome computed = run_one(e, on_disk);
  EXPECT_EQ(computed.usage.cached_prompt_tokens, 0);
  EXPECT_EQ(computed.tokens, cold.tokens);
  const EngineStats stats = e.shut_down();
  EXPECT_EQ(stats.n_loads_declined, 1);
  EXPECT_EQ(stats.n_blocks_loaded, 0);
}

TEST_F(EngineDiskTierTest, PersistNoneWritesNothingWithoutPressure) {
  std::unique_ptr<DiskWorker> disk = open_disk_tier(/*persist=*/false);
  EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
  run_one(e, request_for(12, 100, 4));
  e.shut_down();
  disk->wait_idle();
  EXPECT_EQ(disk->stats().n_blocks, 0);
  EXPECT_EQ(disk->stats().bytes_written, 0);
}

// --persist none and a host pool too small for three prompts: the first
// prompt's blocks are demoted to disk before eviction and loaded back for its
// second turn. After a restart the disk starts empty.
TEST_F(EngineDiskTierTest, DemotionUnderPressureKeepsEvictedBlocksOnDisk) {
  const GenerateRequest a = request_for(14, 300, 8);
  const Outcome cold = run_alone({a})[0];
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier(/*persist=*/false);
    EngineUnderTest e(EngineSetup{.n_kv_blocks = 40, .disk_tier = disk.get()});
    // Between requests, the demotion writes the engine queued after the last
    // step are let finish, so that the next request evicts demoted blocks
    // (still pinned by their writes, they could not be evicted yet).
    auto settle = [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      disk->wait_idle();
    };
    run_one(e, a);
    settle();
    run_one(e, request_for(15, 300, 8));
    settle();
    run_one(e, request_for(16, 300, 8));
    settle();
    const Outcome again = run_one(e, a);
    EXPECT_EQ(again.tokens, cold.tokens);
    EXPECT_GT(again.usage.cached_prompt_tokens, 0) << "a's blocks were lost, not demoted";
    e.shut_down();
    disk->wait_idle();
    EXPECT_GT(disk->stats().n_loads, 0);
    EXPECT_GT(disk->stats().n_blocks, 0);
  }
  std::unique_ptr<DiskWorker> disk = open_disk_tier(/*persist=*/false);
  EXPECT_EQ(disk->stats().n_blocks, 0) << "--persist none keeps nothing across restarts";
}

TEST_F(EngineDiskTierTest, ClearEmptiesBothTiersAndPersistWritesTheCache) {
  std::unique_ptr<DiskWorker> disk = open_disk_tier(/*persist=*/false);
  EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
  const GenerateRequest r = request_for(17, 200, 4);
  run_one(e, r);
  std::promise<int64_t> persisted;
  e.engine().persist_cache([&](int64_t n) { persisted.set_value(n); });
  EXPECT_EQ(persisted.get_future().get(), (200 + 4 - 1) / 16);  // every full block, durable
  EXPECT_EQ(disk->stats().n_blocks, (200 + 4 - 1) / 16);
  std::promise<int64_t> cleared;
  e.engine().clear_cache([&](int64_t n) { cleared.set_value(n); });
  EXPECT_EQ(cleared.get_future().get(), (200 + 4 - 1) / 16);
  disk->wait_idle();
  EXPECT_EQ(disk->stats().n_blocks, 0);
  EXPECT_EQ(run_one(e, r).usage.cached_prompt_tokens, 0);
}

// Flipped bytes in every slab file: each load fails its checksum, the block is
// dropped and recomputed, and the output is still the cold run's.
TEST_F(EngineDiskTierTest, CorruptBlocksAreRecomputedNotServed) {
  const GenerateRequest r = request_for(13, 200, 8);
  const Outcome cold = run_alone({r})[0];
  {
    std::unique_ptr<DiskWorker> disk = open_disk_tier();
    EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
    run_one(e, r);
  }
  int n_slabs = 0;
  std::mt19937 rng(5);
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    if (entry.path().extension() != ".bin") continue;
    ++n_slabs;
    const auto size = static_cast<int64_t>(entry.file_size());
    std::fstream file(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    // Past the header page, one byte in every 4 KiB: every block is hit.
    for (int64_t at = 4096 + static_cast<int64_t>(rng() % 4096); at < size; at += 4096) {
      file.seekg(at);
      char byte = 0;
      file.read(&byte, 1);
      byte = static_cast<char>(byte ^ 0x5a);
      file.seekp(at);
      file.write(&byte, 1);
    }
  }
  ASSERT_GT(n_slabs, 0) << "no slab file in " << dir_;
  std::unique_ptr<DiskWorker> disk = open_disk_tier();
  const int64_t before = disk->stats().n_blocks;
  ASSERT_GT(before, 0);
  EngineUnderTest e(EngineSetup{.disk_tier = disk.get()});
  const Outcome warm = run_one(e, r);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.usage.cached_prompt_tokens, 0);
  e.shut_down();
  disk->wait_idle();
  EXPECT_GT(disk->stats().n_load_failures, 0);
  EXPECT_EQ(disk->stats().n_loads, 0);
}

}  // namespace
}  // namespace strata
