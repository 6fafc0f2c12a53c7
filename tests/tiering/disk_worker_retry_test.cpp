// DiskWorker after a failed write: writing turns off with one warning, a
// probe write is let through after a back-off that doubles up to its cap
// (short here, injected through DiskTierOptions), and writing comes back with
// one info line once the fault is gone: a full disk with room again, a
// read-only folder made writable, a folder or index deleted while serving
// (opened afresh). Loads that fail in numbers are logged a bounded number of
// times. The tmpfs and bind-mount cases need root and skip elsewhere.
#include "tiering/disk_worker.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace strata {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int64_t kBlockBytes = 16384;
constexpr milliseconds kRetryMin{50};
constexpr milliseconds kRetryMax{200};

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

int count_lines(const std::string& log, const std::string& text) {
  int n = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
  return n;
}

// How long until `done` holds (checked every millisecond); fails past `limit`.
milliseconds wait_for(const std::function<bool()>& done, milliseconds limit = milliseconds(5000)) {
  const auto start = Clock::now();
  while (!done()) {
    if (Clock::now() - start > limit) {
      ADD_FAILURE() << "waited " << limit.count() << " ms in vain";
      break;
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

class DiskWorkerRetryTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("strata_disk_retry_" + std::to_string(getpid()) + "_" +
             testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    for (int i = 0; i < kBlocks; ++i) {
      auto* bytes = static_cast<std::byte*>(std::aligned_alloc(4096, kBlockBytes));
      std::memset(bytes, 0x40 + i, kBlockBytes);
      blocks_.emplace_back(bytes, std::free);
    }
    dest_.reset(static_cast<std::byte*>(std::aligned_alloc(4096, kBlockBytes)));
  }
  void TearDown() override {
    worker_.reset();
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::permissions(root_, fs::perms::owner_all, ignored);
    fs::remove_all(root_, ignored);
  }

  // A tmpfs of `size` at root_/name; skips the test when it cannot be mounted.
  fs::path mount_tmpfs(const std::string& name, const std::string& size) {
    const fs::path at = root_ / name;
    fs::create_directories(at);
    if (geteuid() != 0) return {};
    if (mount("tmpfs", at.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) return {};
    mounts_.push_back(at);
    return at;
  }

  void start(const fs::path& dir, int64_t capacity_blocks = 64) {
    worker_ = std::make_unique<DiskWorker>(DiskTierOptions{.dir = dir,
                                                           .block_bytes = kBlockBytes,
                                                           .capacity_bytes =
                                                               capacity_blocks * kBlockBytes,
                                                           .retry_min = kRetryMin,
                                                           .retry_max = kRetryMax});
  }

  TierEvent only_completion() {
    worker_->wait_idle();
    const std::vector<TierCompletion> done = worker_->take_completions();
    EXPECT_EQ(done.size(), 1u);
    return done.empty() ? TierEvent::kLoadFailed : done.front().event;
  }
  TierEvent persist(int i) {
    const std::vector<int32_t> tokens = {i, i + 1};
    worker_->persist(block_hash(i), BlockHash{}, tokens, blocks_[static_cast<size_t>(i)].get(),
                     static_cast<uint64_t>(i));
    return only_completion();
  }
  TierEvent load(int i) {
    worker_->load(block_hash(i), dest_.get(), 1000 + static_cast<uint64_t>(i));
    const TierEvent event = only_completion();
    if (event == TierEvent::kLoaded) {
      EXPECT_EQ(std::memcmp(dest_.get(), blocks_[static_cast<size_t>(i)].get(), kBlockBytes), 0);
    }
    return event;
  }
  // Waits for the next probe to be due; how long that took.
  milliseconds wait_for_probe() {
    return wait_for([&] { return worker_->takes_writes(); });
  }
  // A probe (the fault still there) fails; writing stays off.
  void probe_fails(int i) {
    wait_for_probe();
    EXPECT_EQ(persist(i), TierEvent::kPersistFailed);
    EXPECT_FALSE(worker_->writing());
    EXPECT_FALSE(worker_->takes_writes()) << "a failed probe must back off";
  }
  // Once the fault is gone, the next probe turns writing back on.
  void probe_succeeds(int i) {
    wait_for_probe();
    EXPECT_EQ(persist(i), TierEvent::kPersisted);
    EXPECT_TRUE(worker_->writing());
    EXPECT_TRUE(worker_->takes_writes());
  }

  static constexpr int kBlocks = 8;
  fs::path root_;
  std::vector<fs::path> mounts_;
  std::vector<std::unique_ptr<std::byte, decltype(&std::free)>> blocks_;
  std::unique_ptr<std::byte, decltype(&std::free)> dest_{nullptr, std::free};
  std::unique_ptr<DiskWorker> worker_;
};

TEST_F(DiskWorkerRetryTest, WritingComesBackOnceTheFullDiskHasRoomAgain) {
  const fs::path disk = mount_tmpfs("disk", "2m");
  if (disk.empty()) GTEST_SKIP() << "mounting a tmpfs needs root";
  testing::internal::CaptureStderr();
  start(disk / "kv");
  fill_up(disk / "filler");  // before the first slab file: its creation fails
  EXPECT_EQ(persist(0), TierEvent::kPersistFailed);
  EXPECT_FALSE(worker_->writing());
  EXPECT_FALSE(worker_->takes_writes()) << "no probe before the back-off";
  EXPECT_EQ(persist(1), TierEvent::kPersistFailed) << "refused at once, not a probe";

  EXPECT_GE(wait_for_probe(), kRetryMin - milliseconds(5));
  probe_fails(1);
  EXPECT_GE(wait_for_probe(), 2 * kRetryMin - milliseconds(5)) << "the back-off doubles";
  probe_fails(1);

  fs::remove(disk / "filler");
  probe_succeeds(1);
  EXPECT_EQ(persist(2), TierEvent::kPersisted);
  EXPECT_EQ(load(1), TierEvent::kLoaded);
  const DiskTierStats stats = worker_->stats();
  EXPECT_EQ(stats.n_blocks, 2);
  EXPECT_EQ(stats.n_write_failures, 4);
  EXPECT_EQ(stats.n_reopens, 0);
  worker_.reset();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(log, "persistence is off"), 1) << log;
  EXPECT_EQ(count_lines(log, "persistence is back on"), 1) << log;
  EXPECT_EQ(count_lines(log, "still off"), 0) << log;
  EXPECT_LE(count_lines(log, "warning"), 2) << "failed probes add no lines\n" << log;
}

// A folder made read-only (here a read-only bind mount over it, as root
// ignores modes): the open files could still be written, but the folder at
// the path cannot, so writing turns off until it can again. No reopen: the
// blocks on disk stay.
TEST_F(DiskWorkerRetryTest, ReadOnlyFolderTurnsWritingOffUntilItIsWritableAgain) {
  const fs::path disk = mount_tmpfs("disk", "8m");
  if (disk.empty()) GTEST_SKIP() << "mounting a tmpfs needs root";
  testing::internal::CaptureStderr();
  start(disk / "kv");
  ASSERT_EQ(persist(0), TierEvent::kPersisted);

  ASSERT_EQ(mount(disk.c_str(), disk.c_str(), nullptr, MS_BIND, nullptr), 0) << strerror(errno);
  mounts_.push_back(disk);
  ASSERT_EQ(mount(nullptr, disk.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << strerror(errno);
  EXPECT_EQ(persist(1), TierEvent::kPersistFailed);
  EXPECT_FALSE(worker_->writing());
  probe_fails(1);
  EXPECT_EQ(load(0), TierEvent::kLoaded) << "loads go on";

  ASSERT_EQ(umount2(disk.c_str(), 0), 0) << strerror(errno);
  mounts_.pop_back();
  probe_succeeds(1);
  EXPECT_TRUE(worker_->contains(block_hash(0)));
  EXPECT_EQ(worker_->stats().n_reopens, 0);
  worker_.reset();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(log, "Read-only file system; persistence is off"), 1) << log;
  EXPECT_EQ(count_lines(log, "persistence is back on"), 1) << log;
}

// rm -rf of the folder while serving: the kernel takes writes into the
// unlinked files, so the worker checks the folder before each commit. While
// the folder cannot be made again (a file in its place), probes fail; once it
// can, a fresh store and index are opened there, and the blocks of the old
// one are gone from the catalog.
TEST_F(DiskWorkerRetryTest, FolderDeletedWhileServingIsOpenedAfresh) {
  const fs::path dir = root_ / "cache" / "kv";
  testing::internal::CaptureStderr();
  start(dir);
  ASSERT_EQ(persist(0), TierEvent::kPersisted);

  fs::remove_all(root_ / "cache");
  EXPECT_EQ(persist(1), TierEvent::kPersistFailed);
  EXPECT_FALSE(worker_->writing());
  std::ofstream(root_ / "cache") << "in the way";  // the folder cannot be made again
  probe_fails(1);
  EXPECT_FALSE(worker_->contains(block_hash(0))) << "the old folder's blocks are gone";
  EXPECT_EQ(load(0), TierEvent::kLoadFailed);
  probe_fails(1);

  fs::remove(root_ / "cache");
  probe_succeeds(1);
  EXPECT_TRUE(fs::exists(dir / "index.sqlite"));
  EXPECT_EQ(persist(2), TierEvent::kPersisted);
  EXPECT_EQ(load(1), TierEvent::kLoaded);
  DiskTierStats stats = worker_->stats();
  EXPECT_EQ(stats.n_reopens, 1);
  EXPECT_EQ(stats.n_blocks, 2);

  // What a restart finds: the new folder's blocks, in its index.
  worker_.reset();
  start(dir);
  EXPECT_TRUE(worker_->contains(block_hash(1)));
  EXPECT_TRUE(worker_->contains(block_hash(2)));
  EXPECT_FALSE(worker_->contains(block_hash(0)));
  EXPECT_EQ(load(2), TierEvent::kLoaded);
  worker_.reset();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(log, "was deleted or replaced while serving; persistence is off"), 1)
      << log;
  EXPECT_EQ(count_lines(log, "opened a new cache there"), 1) << log;
  EXPECT_EQ(count_lines(log, "persistence is back on"), 1) << log;
}

// The index alone deleted (the slab files stay): a row would go to a file
// nobody opens again, so the folder is opened afresh, in the same place,
// which the old store must unlock first.
TEST_F(DiskWorkerRetryTest, IndexDeletedWhileServingIsReplacedByAFreshOne) {
  const fs::path dir = root_ / "kv";
  start(dir);
  ASSERT_EQ(persist(0), TierEvent::kPersisted);
  for (const char* name : {"index.sqlite", "index.sqlite-wal", "index.sqlite-shm"}) {
    fs::remove(dir / name);
  }
  EXPECT_EQ(persist(1), TierEvent::kPersistFailed);
  EXPECT_FALSE(worker_->writing());
  probe_succeeds(1);
  EXPECT_EQ(worker_->stats().n_reopens, 1);
  EXPECT_TRUE(fs::exists(dir / "index.sqlite"));
  EXPECT_FALSE(worker_->contains(block_hash(0)));
  EXPECT_EQ(load(1), TierEvent::kLoaded);
}

// Failing probes wait twice as long each time, but never longer than
// retry_max; writing off, persist() refuses at once between probes. A wait is
// timed from when the test has the failed probe's completion, a little after
// the worker set the next probe's time: the lower bounds allow 25 ms for that.
TEST_F(DiskWorkerRetryTest, TheBackOffDoublesUpToItsCap) {
  const fs::path dir = root_ / "cache" / "kv";
  DiskTierOptions options{.dir = dir,
                          .block_bytes = kBlockBytes,
                          .capacity_bytes = 64 * kBlockBytes,
                          .retry_min = milliseconds(40),
                          .retry_max = milliseconds(160)};
  worker_ = std::make_unique<DiskWorker>(options);
  fs::remove_all(root_ / "cache");
  std::ofstream(root_ / "cache") << "in the way";
  EXPECT_EQ(persist(0), TierEvent::kPersistFailed);
  std::vector<milliseconds> waits;
  for (int i = 0; i < 6; ++i) {
    waits.push_back(wait_for_probe());
    EXPECT_EQ(persist(0), TierEvent::kPersistFailed);
    EXPECT_EQ(persist(0), TierEvent::kPersistFailed) << "refused at once";
  }
  EXPECT_GE(waits[0], milliseconds(15));
  EXPECT_GE(waits[1], milliseconds(55));  // 80: doubled
  for (size_t i = 2; i < waits.size(); ++i) {
    EXPECT_GE(waits[i], milliseconds(135)) << "wait " << i;  // 160: doubled, then capped
  }
  // Doubling without a cap would wait 1.28 s before the last probe.
  EXPECT_LT(waits.back(), milliseconds(800));
  EXPECT_EQ(worker_->stats().n_write_failures, 13);
}

// A storm of failed loads (every block on disk corrupt) is logged a few
// times, not once per block.
TEST_F(DiskWorkerRetryTest, FailedLoadsAreLoggedABoundedNumberOfTimes) {
  const fs::path dir = root_ / "kv";
  start(dir);
  for (int i = 0; i < kBlocks; ++i) ASSERT_EQ(persist(i), TierEvent::kPersisted);
  worker_.reset();
  {
    std::fstream slab(dir / "slab-000000.bin", std::ios::in | std::ios::out | std::ios::binary);
    slab.seekp(4096);  // past the header: every slot
    const std::vector<char> garbage(static_cast<size_t>(kBlocks * kBlockBytes), 'x');
    slab.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  testing::internal::CaptureStderr();
  start(dir);
  for (int i = 0; i < kBlocks; ++i) EXPECT_EQ(load(i), TierEvent::kLoadFailed) << "block " << i;
  EXPECT_EQ(worker_->stats().n_load_failures, kBlocks);
  EXPECT_EQ(worker_->stats().n_blocks, 0);
  worker_.reset();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(log, "fails its checksum"), 3) << log;
}

}  // namespace
}  // namespace strata
