// DeviceHostMover over a "device" that is host memory (ThreadCopier, a thread for
// a copy stream), a real host pool and, where named, a real disk tier in a
// temporary folder: blocks go down T0 -> T1 -> T2 and come back up with their
// bytes, moves in flight keep their blocks, and every reference is returned.
#include "tiering/device_host_mover.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/tiering/thread_copier.h"

namespace strata {
namespace {

using testing::ThreadCopier;

constexpr int64_t kBlockTokens = 4;
constexpr int64_t kBlockBytes = 3000;  // not a multiple of the slot alignment

ModelFingerprint test_model() {
  constexpr std::string_view kName = "device-tier-test-model";
  return sha256({reinterpret_cast<const uint8_t*>(kName.data()), kName.size()});
}

struct Prompt {
  std::vector<int32_t> tokens;
  std::vector<BlockHash> chain;
};

Prompt prompt_of(int32_t first, int n_blocks) {
  Prompt p;
  BlockHash parent{};
  for (int i = 0; i < n_blocks * kBlockTokens; ++i) p.tokens.push_back(first + i);
  for (int b = 0; b < n_blocks; ++b) {
    parent = hash_block(parent, test_model(),
                        std::span<const int32_t>(p.tokens).subspan(b * kBlockTokens, kBlockTokens));
    p.chain.push_back(parent);
  }
  return p;
}

std::span<const int32_t> tokens_of(const Prompt& p, size_t block) {
  return std::span<const int32_t>(p.tokens).subspan(block * kBlockTokens, kBlockTokens);
}

class DeviceHostMoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata_device_host_mover_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A fresh "GPU": T0 pool and cache, T1 pool, copier; and the tier over them.
  void start(int64_t n_device, int64_t n_host, bool with_disk, bool persist = true) {
    tier_.reset();
    copier_.reset();
    disk_.reset();
    device_cache_.reset();
    device_pool_ = std::make_unique<BlockPool>(kBlockBytes, n_device);
    device_cache_ = std::make_unique<PrefixCache>(*device_pool_, kBlockTokens);
    host_pool_ = std::make_unique<BlockPool>(kBlockBytes, n_host);
    copier_ = std::make_unique<ThreadCopier>(device_pool_->memory(), device_pool_->slot_bytes(),
                                             kBlockBytes);
    if (with_disk) {
      disk_ = std::make_unique<DiskWorker>(DiskTierOptions{
          .dir = dir_, .block_bytes = kBlockBytes, .capacity_bytes = int64_t{4} << 20,
          .model = test_model(), .persist = persist});
    }
    tier_ = std::make_unique<DeviceHostMover>(*device_cache_, *host_pool_, *copier_, disk_.get(),
                                         LoadCostOptions{.min_prefill_tokens = INT64_MAX});
  }

  // "Computes" the prompt's blocks in T0 (bytes derived from the hash),
  // publishes them and lets them go idle, as a finished request does.
  void compute(const Prompt& p) {
    std::vector<BlockId> table;
    for (size_t b = 0; b < p.chain.size(); ++b) {
      const std::optional<BlockId> block = device_cache_->allocate();
      ASSERT_TRUE(block.has_value());
      fill(device_pool_->data(*block), p.chain[b]);
      const BlockHash parent = b == 0 ? BlockHash{} : p.chain[b - 1];
      table.push_back(device_cache_->publish(p.chain[b], *block, tokens_of(p, b), parent));
      tier_->on_published(table.back());
    }
    device_cache_->release_table(table);
  }

  static void fill(std::byte* bytes, const BlockHash& hash) {
    std::mt19937 random(hash.bytes[0] | (hash.bytes[1] << 8) | (hash.bytes[2] << 16));
    for (int64_t i = 0; i < kBlockBytes; ++i) bytes[i] = static_cast<std::byte>(random());
  }

  // Whether T0 holds every block of the prompt with the bytes compute() wrote.
  bool device_holds(const Prompt& p) {
    const std::vector<BlockId> blocks = device_cache_->lookup(p.chain, p.tokens);
    if (blocks.size() != p.chain.size()) return false;
    std::vector<std::byte> expected(kBlockBytes);
    for (size_t b = 0; b < blocks.size(); ++b) {
      fill(expected.data(), p.chain[b]);
      if (std::memcmp(device_pool_->data(blocks[b]), expected.data(), kBlockBytes) != 0) {
        return false;
      }
    }
    return true;
  }

  // Brings the prompt up for `owner` and waits until the moves are done.
  int64_t bring_up(uint64_t owner, const Prompt& p) {
    const int64_t n = tier_->blocks_to_load(p.chain, p.tokens);
    if (n == 0) return 0;
    const int64_t started = tier_->start_loads(owner, {}, std::span(p.chain).first(n),
                                               std::span(p.tokens).first(n * kBlockTokens),
                                               BlockHash{}, /*reserve=*/0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (tier_->is_loading(owner) && std::chrono::steady_clock::now() < deadline) {
      tier_->poll();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_FALSE(tier_->is_loading(owner));
    return started;
  }

  void check_integrity() {
    device_cache_->check_integrity();
    tier_->host_cache().check_integrity();
  }

  std::filesystem::path dir_;
  std::unique_ptr<BlockPool> device_pool_;
  std::unique_ptr<PrefixCache> device_cache_;
  std::unique_ptr<BlockPool> host_pool_;
  std::unique_ptr<ThreadCopier> copier_;
  std::unique_ptr<DiskWorker> disk_;
  std::unique_ptr<DeviceHostMover> tier_;
};

TEST_F(DeviceHostMoverTest, ColdBlocksAreDemotedAndPromotedWithTheirBytes) {
  start(/*n_device=*/8, /*n_host=*/32, /*with_disk=*/false);
  const Prompt p = prompt_of(100, 6);
  compute(p);
  tier_->demote_cold(/*free_target=*/8);  // 2 free of 8: all 6 idle blocks go down
  tier_->drain();
  EXPECT_EQ(tier_->host_cache().n_cached(), 6);
  EXPECT_EQ(tier_->host_tier_stats()->n_blocks_demoted, 6);

  // A block already in T1 is not copied again.
  tier_->demote_cold(8);
  tier_->drain();
  EXPECT_EQ(copier_->n_copied(), 6);

  EXPECT_EQ(device_cache_->evict_all_idle(), 6);  // T0 drops them: T1 has copies
  EXPECT_EQ(tier_->blocks_to_load(p.chain, p.tokens), 6);
  EXPECT_EQ(bring_up(1, p), 6);
  EXPECT_TRUE(device_holds(p));
  EXPECT_EQ(tier_->host_tier_stats()->n_blocks_promoted, 6);
  EXPECT_EQ(device_cache_->n_referenced(), 6);  // held for the owner until admission
  tier_->release_owner(1);
  EXPECT_EQ(device_cache_->n_referenced(), 0);
  check_integrity();
}

TEST_F(DeviceHostMoverTest, WriteThroughReachesTheDiskAndServesAfterARestart) {
  const Prompt p = prompt_of(500, 5);
  start(8, 16, /*with_disk=*/true);
  compute(p);  // persist all: each published block goes down at once
  std::optional<int64_t> on_disk;
  tier_->flush([&](int64_t n) { on_disk = n; });
  tier_->drain();
  ASSERT_TRUE(on_disk.has_value());
  EXPECT_EQ(*on_disk, 5);
  check_integrity();

  start(8, 16, /*with_disk=*/true);  // a restart: T0 and T1 empty, the disk reopened
  EXPECT_EQ(tier_->host_cache().n_cached(), 0);
  EXPECT_EQ(tier_->blocks_to_load(p.chain, p.tokens), 5);
  EXPECT_EQ(bring_up(7, p), 5);
  EXPECT_TRUE(device_holds(p));
  EXPECT_EQ(tier_->n_blocks_loaded(), 5);
  EXPECT_EQ(tier_->host_cache().n_cached(), 5);  // on the way up through T1
  tier_->release_owner(7);
  check_integrity();
}

TEST_F(DeviceHostMoverTest, APromptContinuesFromHostMemoryThenFromDisk) {
  const Prompt p = prompt_of(900, 6);
  start(8, 16, /*with_disk=*/true);
  compute(p);
  tier_->drain();
  start(8, 16, /*with_disk=*/true);  // everything on disk only
  const Prompt head = prompt_of(900, 2);
  EXPECT_EQ(bring_up(1, head), 2);  // T1 now holds the first two
  tier_->release_owner(1);
  EXPECT_EQ(device_cache_->evict_all_idle(), 2);
  EXPECT_EQ(bring_up(2, p), 6);  // two from T1, four from disk through T1
  EXPECT_TRUE(device_holds(p));
  EXPECT_EQ(tier_->n_blocks_loaded(), 6);  // 2 + 4 read from disk in all
  tier_->release_owner(2);
  check_integrity();
}

TEST_F(DeviceHostMoverTest, BlocksInFlightArePinnedAndOwnersMayLeaveEarly) {
  start(8, 32, /*with_disk=*/false);
  const Prompt p = prompt_of(40, 4);
  compute(p);
  copier_->hold(true);
  tier_->demote_cold(8);
  EXPECT_EQ(device_cache_->n_evictable(), 0);  // pinned while copied down
  EXPECT_EQ(device_cache_->evict_all_idle(), 0);
  copier_->hold(false);
  tier_->drain();
  EXPECT_EQ(device_cache_->n_evictable(), 4);
  EXPECT_EQ(device_cache_->evict_all_idle(), 4);

  copier_->hold(true);
  EXPECT_EQ(tier_->start_loads(3, {}, p.chain, p.tokens, BlockHash{}, 0), 4);
  EXPECT_TRUE(tier_->is_loading(3));
  std::vector<int32_t> refs(static_cast<size_t>(device_cache_->n_total()), 0);
  tier_->add_references(refs);
  int64_t n_refs = 0;
  for (int32_t r : refs) n_refs += r;
  EXPECT_EQ(n_refs, 4);  // the T0 blocks being filled
  tier_->release_owner(3);  // the request went away; its copies still land
  copier_->hold(false);
  tier_->drain();
  EXPECT_EQ(device_cache_->n_referenced(), 0);
  EXPECT_TRUE(device_holds(p));  // cached, idle: the next request finds them
  check_integrity();
}

TEST_F(DeviceHostMoverTest, AFullHostTierTakesOnlyWhatFits) {
  start(16, /*n_host=*/3, /*with_disk=*/false);
  const Prompt p = prompt_of(7, 8);
  compute(p);
  tier_->demote_cold(16);
  tier_->drain();
  EXPECT_EQ(tier_->host_cache().n_cached(), 3);
  EXPECT_EQ(device_cache_->evict_all_idle(), 8);
  // T1 kept three blocks, but not the chain's head: nothing can be brought up.
  EXPECT_EQ(tier_->blocks_to_load(p.chain, p.tokens), 0);
  check_integrity();
}

TEST_F(DeviceHostMoverTest, ClearDropsHostBlocks) {
  start(8, 16, /*with_disk=*/false);
  compute(prompt_of(1, 3));
  tier_->demote_cold(8);
  tier_->drain();
  EXPECT_EQ(tier_->clear(), 3);
  EXPECT_EQ(tier_->host_cache().n_cached(), 0);
  check_integrity();
}

}  // namespace
}  // namespace strata
