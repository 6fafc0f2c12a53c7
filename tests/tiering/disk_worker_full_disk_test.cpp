// DiskWorker on a filesystem that fills up: a tmpfs of a few MiB that the
// test mounts itself (as root; the test skips elsewhere). Once the disk is
// full, loading what is on it still works — the index update that records a
// block's use fails with SQLITE_FULL, which must cost only that record, never
// the disk thread or the process — and new writes fail as kPersistFailed.
#include "tiering/disk_worker.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kBlockBytes = 16384;

BlockHash block_hash(int i) {
  const std::vector<int32_t> tokens = {i, i + 1};
  return hash_block(BlockHash{}, BlockHash{}, tokens);
}

// Writes zeros into `path` until the filesystem refuses more.
void fill_up(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  const std::vector<char> chunk(64 * 1024, 0);
  while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) out.flush();
}

class DiskWorkerFullDiskTest : public testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    mount_point_ = fs::temp_directory_path() / ("strata_full_disk_" + std::to_string(getpid()));
    fs::create_directories(mount_point_);
    if (mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=2m") != 0) {
      const std::string why = std::strerror(errno);
      fs::remove(mount_point_);
      GTEST_SKIP() << "cannot mount a tmpfs here: " << why;
    }
    mounted_ = true;
    for (int i = 0; i < 2; ++i) {
      auto* bytes = static_cast<std::byte*>(std::aligned_alloc(4096, kBlockBytes));
      std::memset(bytes, 0x40 + i, kBlockBytes);
      blocks_.emplace_back(bytes, std::free);
    }
  }
  void TearDown() override {
    worker_.reset();
    if (mounted_) umount2(mount_point_.c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(mount_point_, ignored);
  }

  TierEvent only_completion() {
    worker_->wait_idle();
    const std::vector<TierCompletion> done = worker_->take_completions();
    EXPECT_EQ(done.size(), 1u);
    return done.empty() ? TierEvent::kLoadFailed : done.front().event;
  }

  fs::path mount_point_;
  bool mounted_ = false;
  std::vector<std::unique_ptr<std::byte, decltype(&std::free)>> blocks_;
  std::unique_ptr<DiskWorker> worker_;
};

TEST_F(DiskWorkerFullDiskTest, LoadsGoOnAndWritesFailWhenTheDiskFills) {
  worker_ = std::make_unique<DiskWorker>(DiskTierOptions{.dir = mount_point_ / "kv",
                                                         .block_bytes = kBlockBytes,
                                                         .capacity_bytes = 64 * kBlockBytes});
  const std::vector<int32_t> tokens = {1, 2};
  worker_->persist(block_hash(0), BlockHash{}, tokens, blocks_[0].get(), 1);
  ASSERT_EQ(only_completion(), TierEvent::kPersisted);

  fill_up(mount_point_ / "filler");
  // Each load's use is recorded in the index, which cannot grow now.
  auto* dest = static_cast<std::byte*>(std::aligned_alloc(4096, kBlockBytes));
  const std::unique_ptr<std::byte, decltype(&std::free)> owned(dest, std::free);
  for (uint64_t tag = 2; tag < 5; ++tag) {
    worker_->load(block_hash(0), dest, tag);
    EXPECT_EQ(only_completion(), TierEvent::kLoaded) << "load " << tag;
    EXPECT_EQ(std::memcmp(dest, blocks_[0].get(), kBlockBytes), 0);
  }
  worker_->persist(block_hash(1), BlockHash{}, tokens, blocks_[1].get(), 5);
  EXPECT_EQ(only_completion(), TierEvent::kPersistFailed);
  EXPECT_TRUE(worker_->contains(block_hash(0)));

  fs::remove(mount_point_ / "filler");  // space again: the worker still runs
  worker_->load(block_hash(0), dest, 6);
  EXPECT_EQ(only_completion(), TierEvent::kLoaded);
}

}  // namespace
}  // namespace strata
