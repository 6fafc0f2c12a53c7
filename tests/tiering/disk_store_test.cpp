#include "tiering/disk_store.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <vector>

namespace strata {
namespace {

using std::chrono_literals::operator""ms;
namespace fs = std::filesystem;

constexpr int64_t kSlotBytes = 8192;

std::array<uint8_t, 32> fingerprint(uint8_t seed) {
  std::array<uint8_t, 32> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(seed * 31 + i);
  return bytes;
}

// n blocks of slot_bytes each, back to back in one 4096-aligned allocation.
class Blocks {
 public:
  Blocks(int64_t n, int64_t slot_bytes)
      : slot_bytes_(slot_bytes),
        data_(static_cast<std::byte*>(
            std::aligned_alloc(4096, static_cast<size_t>(n * slot_bytes)))) {
    std::memset(data_.get(), 0, static_cast<size_t>(n * slot_bytes));
  }
  std::byte* operator[](int64_t i) { return data_.get() + i * slot_bytes_; }
  // Block i gets distinct random bytes from seed + i.
  void fill_random(int64_t n, uint64_t seed) {
    for (int64_t i = 0; i < n; ++i) {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(i));
      auto* words = reinterpret_cast<uint64_t*>((*this)[i]);
      for (int64_t w = 0; w < slot_bytes_ / 8; ++w) words[w] = rng();
    }
  }
  bool same(int64_t i, Blocks& other, int64_t j) {
    return std::memcmp((*this)[i], other[j], static_cast<size_t>(slot_bytes_)) == 0;
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  int64_t slot_bytes_;
  std::unique_ptr<std::byte, Free> data_;
};

// Submits and reaps until n completions have arrived (or nothing comes for a
// while). No gtest assertions, so forked children can use it too.
struct Drained {
  std::map<uint64_t, int> error_of_tag;
  int64_t n_duplicates = 0;
  int64_t max_in_flight = 0;
};
Drained drain(DiskStore& store, size_t n) {
  Drained result;
  store.submit();
  for (int n_idle = 0; result.error_of_tag.size() < n && n_idle < 10;) {
    result.max_in_flight = std::max(result.max_in_flight, store.n_in_flight());
    const std::vector<DiskCompletion> done = store.reap(/*wait=*/true, 2000ms);
    n_idle = done.empty() ? n_idle + 1 : 0;
    for (const DiskCompletion& c : done) {
      if (!result.error_of_tag.emplace(c.tag, c.error).second) ++result.n_duplicates;
    }
  }
  return result;
}

// drain(), checking the queue bound and that each tag completes once.
std::map<uint64_t, int> run(DiskStore& store, size_t n) {
  const Drained result = drain(store, n);
  EXPECT_EQ(result.error_of_tag.size(), n);
  EXPECT_EQ(result.n_duplicates, 0);
  EXPECT_LE(result.max_in_flight, store.options().queue_depth);
  EXPECT_EQ(store.n_in_flight(), 0);
  EXPECT_EQ(store.n_queued(), 0);
  store.check_integrity();
  return result.error_of_tag;
}

void expect_all_ok(const std::map<uint64_t, int>& errors) {
  for (const auto& entry : errors) {
    EXPECT_EQ(entry.second, 0) << "tag " << entry.first << ": " << std::strerror(entry.second);
  }
}

// Runs body in a forked child, so that setrlimit (and the child's io_uring)
// stay there, and returns the numbers it reports; {-1} if it threw.
std::vector<int64_t> run_in_child(const std::function<std::vector<int64_t>()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::vector<int64_t> report;
    try {
      report = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      report = {-1};
    }
    const ssize_t n = write(fds[1], report.data(), report.size() * sizeof(int64_t));
    _exit(n < 0 ? 1 : 0);
  }
  close(fds[1]);
  std::vector<int64_t> report;
  int64_t value = 0;
  while (read(fds[0], &value, sizeof value) == sizeof value) report.push_back(value);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child died, status " << status;
  return report;
}

class DiskStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(testing::TempDir()) /
           ("disk_store_test-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    try {
      DiskStore probe(options("probe"));
    } catch (const std::system_error& e) {
      const int code = e.code().value();
      if (std::string(e.what()).starts_with("io_uring") && (code == ENOSYS || code == EPERM)) {
        GTEST_SKIP() << "io_uring unavailable here: " << e.what();
      }
      throw;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  DiskStoreOptions options(const std::string& sub) const {
    return {.dir = dir_ / sub,
            .slot_bytes = kSlotBytes,
            .max_slots = 64,
            .slots_per_slab = 4,
            .queue_depth = 8,
            .fingerprint = fingerprint(1)};
  }

  fs::path dir_;
};

// Writes blocks[0..n) to n newly allocated slots; returns the slots.
std::vector<SlotAddress> write_blocks(DiskStore& store, Blocks& blocks, int64_t n) {
  std::vector<SlotAddress> slots;
  for (int64_t i = 0; i < n; ++i) {
    const std::optional<SlotAddress> slot = store.allocate_slot();
    EXPECT_TRUE(slot.has_value());
    if (!slot) break;
    slots.push_back(*slot);
    store.enqueue_write(*slot, blocks[i], static_cast<uint64_t>(i));
  }
  expect_all_ok(run(store, slots.size()));
  return slots;
}

// Reads slots[i] into out[i] and checks it equals expected[i].
void expect_read_back(DiskStore& store, const std::vector<SlotAddress>& slots, Blocks& expected) {
  Blocks out(static_cast<int64_t>(slots.size()), store.options().slot_bytes);
  for (size_t i = 0; i < slots.size(); ++i) {
    store.enqueue_read(slots[i], out[static_cast<int64_t>(i)], 1000 + i);
  }
  expect_all_ok(run(store, slots.size()));
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto at = static_cast<int64_t>(i);
    EXPECT_TRUE(out.same(at, expected, at)) << "slot " << slots[i].slab << ":" << slots[i].slot;
  }
}

int read_error(DiskStore& store, SlotAddress slot) {
  Blocks out(1, store.options().slot_bytes);
  store.enqueue_read(slot, out[0], 77);
  const std::map<uint64_t, int> errors = run(store, 1);
  return errors.count(77) != 0 ? errors.at(77) : -1;
}

TEST_F(DiskStoreTest, WritesAndReadsBackBlocksAcrossSlabs) {
  DiskStore store(options("a"));
  constexpr int64_t kN = 10;  // slabs of 4: three slab files
  Blocks blocks(kN, kSlotBytes);
  blocks.fill_random(kN, 42);
  const std::vector<SlotAddress> slots = write_blocks(store, blocks, kN);
  ASSERT_EQ(slots.size(), static_cast<size_t>(kN));
  EXPECT_EQ(slots.back(), (SlotAddress{2, 1}));
  expect_read_back(store, slots, blocks);

  EXPECT_TRUE(fs::exists(store.slab_path(2)));
  EXPECT_FALSE(fs::exists(store.slab_path(3)));
  // Files grow only as slots are written: header + written slots.
  EXPECT_EQ(fs::file_size(store.slab_path(0)), static_cast<uintmax_t>(4096 + 4 * kSlotBytes));
  EXPECT_EQ(fs::file_size(store.slab_path(2)), static_cast<uintmax_t>(4096 + 2 * kSlotBytes));
  EXPECT_EQ(store.counters().writes, kN);
  EXPECT_EQ(store.counters().reads, kN);
  EXPECT_EQ(store.counters().errors, 0);
  EXPECT_EQ(store.counters().slabs_created, 3);
  std::printf("direct_io on %s: %d\n", testing::TempDir().c_str(), store.direct_io());
}

TEST_F(DiskStoreTest, ManyMoreOperationsThanQueueDepthStayBounded) {
  DiskStoreOptions o = options("a");
  o.queue_depth = 2;
  o.slots_per_slab = 16;
  DiskStore store(o);
  constexpr int64_t kN = 64;
  Blocks blocks(kN, kSlotBytes);
  blocks.fill_random(kN, 7);
  std::vector<SlotAddress> slots;
  for (int64_t i = 0; i < kN; ++i) {
    slots.push_back(*store.allocate_slot());
    store.enqueue_write(slots.back(), blocks[i], static_cast<uint64_t>(i));
  }
  EXPECT_EQ(store.n_queued(), kN);
  store.submit();
  EXPECT_EQ(store.n_in_flight(), 2);
  EXPECT_EQ(store.n_queued(), kN - 2);
  // Step by step: the bound holds at every point, not only at the end.
  std::set<uint64_t> done;
  for (int n_idle = 0; done.size() < kN && n_idle < 10;) {
    const std::vector<DiskCompletion> completions = store.reap(true, 2000ms);
    n_idle = completions.empty() ? n_idle + 1 : 0;
    EXPECT_LE(store.n_in_flight(), 2);
    for (const DiskCompletion& c : completions) {
      EXPECT_EQ(c.error, 0);
      EXPECT_TRUE(done.insert(c.tag).second) << "tag " << c.tag << " twice";
    }
    store.check_integrity();
  }
  EXPECT_EQ(done.size(), static_cast<size_t>(kN));
  expect_read_back(store, slots, blocks);
}

TEST_F(DiskStoreTest, ReopenedStoreReadsBackWhatWasWritten) {
  constexpr int64_t kN = 12;
  Blocks blocks(kN, kSlotBytes);
  blocks.fill_random(kN, 99);
  std::vector<SlotAddress> slots;
  {
    DiskStore store(options("a"));
    slots = write_blocks(store, blocks, kN);
    EXPECT_EQ(store.sync(), 0);
  }
  DiskStore store(options("a"));
  for (SlotAddress slot : slots) store.mark_used(slot);  // as the index would
  EXPECT_EQ(store.n_used_slots(), kN);
  expect_read_back(store, slots, blocks);
  EXPECT_EQ(store.allocate_slot(), (SlotAddress{3, 0}));  // the first slot not marked
  EXPECT_EQ(store.counters().slabs_created, 1);           // only slab 3 is new
  EXPECT_EQ(store.counters().slabs_rejected, 0);
}

TEST_F(DiskStoreTest, SlabWithAnotherHeaderIsNeverReadAsOurs) {
  struct Case {
    const char* name;
    std::function<void(DiskStoreOptions&)> change;
  };
  const std::vector<Case> cases = {
      {"fingerprint", [](DiskStoreOptions& o) { o.fingerprint = fingerprint(2); }},
      {"slot_bytes", [](DiskStoreOptions& o) { o.slot_bytes = 2 * kSlotBytes; }},
      {"slots_per_slab", [](DiskStoreOptions& o) { o.slots_per_slab = 8; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Blocks blocks(2, kSlotBytes);
    blocks.fill_random(2, 5);
    uintmax_t original_size = 0;
    {
      DiskStore store(options(c.name));
      write_blocks(store, blocks, 2);
      ASSERT_EQ(store.sync(), 0);
      original_size = fs::file_size(store.slab_path(0));
    }
    DiskStoreOptions other = options(c.name);
    c.change(other);
    DiskStore store(other);
    store.mark_used({0, 0});  // an index that wrongly believes slot 0:0 is ours
    EXPECT_EQ(read_error(store, {0, 0}), ENODATA);
    EXPECT_EQ(store.counters().slabs_rejected, 1);
    // Moved aside intact, not overwritten.
    const fs::path aside = store.slab_path(0).string() + ".rejected";
    ASSERT_TRUE(fs::exists(aside));
    EXPECT_EQ(fs::file_size(aside), original_size);
    EXPECT_EQ(fs::file_size(store.slab_path(0)), 4096u);  // a fresh header only
  }
}

TEST_F(DiskStoreTest, GarbageOrTruncatedSlabFileIsRejected) {
  for (const int64_t size : {int64_t{100}, int64_t{4096 + kSlotBytes}}) {
    SCOPED_TRACE(size);
    const DiskStoreOptions o = options("size-" + std::to_string(size));
    fs::create_directories(o.dir);
    {
      std::ofstream file(o.dir / "slab-000000.bin", std::ios::binary);
      std::mt19937 rng(3);
      for (int64_t i = 0; i < size; ++i) file.put(static_cast<char>(rng()));
    }
    DiskStore store(o);
    store.mark_used({0, 0});
    EXPECT_EQ(read_error(store, {0, 0}), ENODATA);
    EXPECT_EQ(store.counters().slabs_rejected, 1);
    EXPECT_EQ(fs::file_size(store.slab_path(0).string() + ".rejected"),
              static_cast<uintmax_t>(size));
  }
}

TEST_F(DiskStoreTest, CapacityIsMaxSlotsAndFreedSlotsComeBack) {
  DiskStoreOptions o = options("a");
  o.max_slots = 5;
  o.slots_per_slab = 2;  // three slabs, the last one with one slot
  DiskStore store(o);
  EXPECT_EQ(store.capacity_slots(), 5);
  std::vector<SlotAddress> slots;
  for (int i = 0; i < 5; ++i) slots.push_back(*store.allocate_slot());
  EXPECT_EQ(slots, (std::vector<SlotAddress>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}}));
  EXPECT_EQ(store.n_used_slots(), 5);
  EXPECT_FALSE(store.allocate_slot().has_value());
  store.check_integrity();

  store.free_slot({1, 0});
  EXPECT_FALSE(store.is_used({1, 0}));
  EXPECT_EQ(store.n_used_slots(), 4);
  EXPECT_EQ(store.allocate_slot(), (SlotAddress{1, 0}));
  EXPECT_FALSE(store.allocate_slot().has_value());
  store.check_integrity();
  EXPECT_FALSE(fs::exists(store.slab_path(3)));
}

TEST_F(DiskStoreTest, MarkUsedSlotsAreNotHandedOut) {
  DiskStore store(options("a"));
  store.mark_used({0, 0});
  store.mark_used({0, 2});
  store.mark_used({5, 3});
  EXPECT_EQ(store.n_used_slots(), 3);
  EXPECT_EQ(store.allocate_slot(), (SlotAddress{0, 1}));
  EXPECT_EQ(store.allocate_slot(), (SlotAddress{0, 3}));
  EXPECT_EQ(store.allocate_slot(), (SlotAddress{1, 0}));
  store.check_integrity();
}

TEST_F(DiskStoreTest, NeverWrittenSlotReadsAsErrorNotGarbage) {
  DiskStore store(options("a"));
  Blocks blocks(1, kSlotBytes);
  blocks.fill_random(1, 1);
  write_blocks(store, blocks, 1);                        // slot 0:0
  const SlotAddress unwritten = *store.allocate_slot();  // 0:1, past the end of the file
  EXPECT_EQ(read_error(store, unwritten), ENODATA);
  store.mark_used({3, 2});  // a slab with only its header
  EXPECT_EQ(read_error(store, {3, 2}), ENODATA);
  EXPECT_EQ(store.counters().errors, 2);
}

TEST_F(DiskStoreTest, ShortReadIsResubmittedAndATruncatedSlotFails) {
  DiskStore store(options("a"));
  Blocks blocks(2, kSlotBytes);
  blocks.fill_random(2, 11);
  const std::vector<SlotAddress> slots = write_blocks(store, blocks, 2);
  // Cut slot 1 in half: the first read returns 4096 bytes, the resubmitted
  // remainder finds the end of the file.
  fs::resize_file(store.slab_path(0), 4096 + kSlotBytes + 4096);
  const int64_t resubmits = store.counters().resubmits;
  EXPECT_EQ(read_error(store, slots[1]), ENODATA);
  EXPECT_GT(store.counters().resubmits, resubmits);
  expect_read_back(store, {slots[0]}, blocks);
}

TEST_F(DiskStoreTest, SyncReturnsZero) {
  DiskStore store(options("a"));
  EXPECT_EQ(store.sync(), 0);  // nothing written yet
  Blocks blocks(6, kSlotBytes);
  blocks.fill_random(6, 8);
  write_blocks(store, blocks, 6);
  EXPECT_EQ(store.sync(), 0);
  EXPECT_EQ(store.sync(), 0);
}

// The kernel takes writes into deleted files without a word: folder_status()
// is how the caller learns that its writes would be lost.
TEST_F(DiskStoreTest, FolderStatusSaysWhenWritesWouldNotLandInTheFolder) {
  DiskStore store(options("a"));
  EXPECT_EQ(store.folder_status(), 0);
  Blocks blocks(6, kSlotBytes);
  blocks.fill_random(6, 9);
  write_blocks(store, blocks, 2);  // slab 0
  EXPECT_EQ(store.folder_status(), 0);
  fs::remove(store.slab_path(0));
  EXPECT_EQ(store.folder_status(), ESTALE) << "a slab written since the last sync is gone";
  EXPECT_EQ(store.sync(), 0);
  EXPECT_EQ(store.folder_status(), 0) << "only the slabs about to be synced are looked at";

  fs::rename(dir_ / "a", dir_ / "moved");
  EXPECT_EQ(store.folder_status(), ESTALE);
  fs::create_directories(dir_ / "a");  // another folder at the path
  EXPECT_EQ(store.folder_status(), ESTALE);
  fs::remove(dir_ / "a");
  fs::rename(dir_ / "moved", dir_ / "a");  // the same folder back
  EXPECT_EQ(store.folder_status(), 0);
  fs::remove_all(dir_ / "a");
  EXPECT_EQ(store.folder_status(), ESTALE);
}

TEST_F(DiskStoreTest, BufferedIoRoundTrips) {
  DiskStoreOptions o = options("a");
  o.direct_io = false;
  DiskStore store(o);
  EXPECT_FALSE(store.direct_io());
  Blocks blocks(5, kSlotBytes);
  blocks.fill_random(5, 21);
  expect_read_back(store, write_blocks(store, blocks, 5), blocks);
}

TEST_F(DiskStoreTest, RegisteredArenaUsesFixedBuffers) {
  DiskStore store(options("a"));
  constexpr int64_t kN = 8;
  const size_t arena_bytes = static_cast<size_t>(2 * kN * kSlotBytes);
  void* mapped =
      mmap(nullptr, arena_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  std::span<std::byte> arena(static_cast<std::byte*>(mapped), arena_bytes);
  store.register_buffers(arena);
  std::printf("fixed buffers registered: %d\n", store.buffers_registered());

  // The first half of the arena is written out, read back into the second half.
  std::mt19937_64 rng(5);
  for (size_t i = 0; i < arena_bytes / 2; ++i) arena[i] = static_cast<std::byte>(rng());
  std::vector<SlotAddress> slots;
  for (int64_t i = 0; i < kN; ++i) {
    slots.push_back(*store.allocate_slot());
    store.enqueue_write(slots.back(), arena.data() + i * kSlotBytes, static_cast<uint64_t>(i));
  }
  expect_all_ok(run(store, kN));
  for (int64_t i = 0; i < kN; ++i) {
    store.enqueue_read(slots[static_cast<size_t>(i)], arena.data() + (kN + i) * kSlotBytes,
                       static_cast<uint64_t>(i));
  }
  expect_all_ok(run(store, kN));
  EXPECT_EQ(std::memcmp(arena.data(), arena.data() + arena_bytes / 2, arena_bytes / 2), 0);
  if (store.buffers_registered()) {
    EXPECT_EQ(store.counters().fixed_ops, 2 * kN);
  }

  // A buffer outside the arena still works, as a plain operation.
  Blocks outside(1, kSlotBytes);
  const int64_t fixed_ops = store.counters().fixed_ops;
  store.enqueue_read(slots[0], outside[0], 0);
  expect_all_ok(run(store, 1));
  EXPECT_EQ(std::memcmp(outside[0], arena.data(), kSlotBytes), 0);
  EXPECT_EQ(store.counters().fixed_ops, fixed_ops);

  store.register_buffers({});
  EXPECT_FALSE(store.buffers_registered());
  munmap(mapped, arena_bytes);
}

TEST_F(DiskStoreTest, WriteBeyondFileSizeLimitCompletesWithEfbig) {
  // RLIMIT_FSIZE stands in for a full disk: writes past it fail with EFBIG
  // (SIGXFSZ ignored). The limit cuts slot 1 in half: a short write, then
  // EFBIG for its remainder.
  const DiskStoreOptions o = options("a");
  const std::vector<int64_t> report = run_in_child([&o] {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{};
    getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = 4096 + kSlotBytes + kSlotBytes / 2;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::vector<int64_t>{-2};
    DiskStore store(o);
    Blocks blocks(4, kSlotBytes);
    blocks.fill_random(4, 13);
    for (uint64_t i = 0; i < 4; ++i) store.enqueue_write(*store.allocate_slot(), blocks[i], i);
    const Drained drained = drain(store, 4);
    std::vector<int64_t> out;
    for (uint64_t i = 0; i < 4; ++i) {
      out.push_back(drained.error_of_tag.count(i) != 0 ? drained.error_of_tag.at(i) : -3);
    }
    // The store keeps serving: the slot that fit reads back.
    Blocks back(1, kSlotBytes);
    store.enqueue_read({0, 0}, back[0], 9);
    const Drained read = drain(store, 1);
    out.push_back(read.error_of_tag.count(9) != 0 ? read.error_of_tag.at(9) : -3);
    out.push_back(back.same(0, blocks, 0) ? 1 : 0);
    out.push_back(store.counters().resubmits);
    out.push_back(store.sync());
    return out;
  });
  ASSERT_EQ(report.size(), 8u) << (report.empty() ? "no report"
                                                  : "first " + std::to_string(report[0]));
  EXPECT_EQ(report[0], 0);
  EXPECT_EQ(report[1], EFBIG);
  EXPECT_EQ(report[2], EFBIG);
  EXPECT_EQ(report[3], EFBIG);
  EXPECT_EQ(report[4], 0) << "read back of the slot that fit";
  EXPECT_EQ(report[5], 1) << "its bytes";
  EXPECT_GE(report[6], 1) << "the short write was resubmitted";
  EXPECT_EQ(report[7], 0) << "sync";
}

TEST_F(DiskStoreTest, SlabThatCannotBeCreatedFailsItsIoAndIsRetried) {
  // With the limit below one header page, creating slab 0 fails: allocation
  // still succeeds, and the slot's write completes at once with the error.
  // Once the limit is lifted, the next write creates the slab.
  const DiskStoreOptions o = options("a");
  const std::vector<int64_t> report = run_in_child([&o] {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{};
    getrlimit(RLIMIT_FSIZE, &limit);
    const rlim_t original = limit.rlim_cur;
    limit.rlim_cur = 1024;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::vector<int64_t>{-2};
    DiskStore store(o);
    Blocks blocks(1, kSlotBytes);
    blocks.fill_random(1, 17);
    const std::optional<SlotAddress> slot = store.allocate_slot();
    if (!slot) return std::vector<int64_t>{-4};
    store.enqueue_write(*slot, blocks[0], 1);
    std::vector<int64_t> out{store.n_queued(), fs::exists(store.slab_path(0)) ? 1 : 0};
    const std::vector<DiskCompletion> done = store.reap(false, 0ms);
    out.push_back(done.size() == 1 ? done[0].error : -3);

    limit.rlim_cur = original;
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return std::vector<int64_t>{-2};
    store.enqueue_write(*slot, blocks[0], 2);
    const Drained drained = drain(store, 1);
    out.push_back(drained.error_of_tag.count(2) != 0 ? drained.error_of_tag.at(2) : -3);
    return out;
  });
  ASSERT_EQ(report.size(), 4u) << (report.empty() ? "no report"
                                                  : "first " + std::to_string(report[0]));
  EXPECT_EQ(report[0], 0) << "a failed slab queues nothing";
  EXPECT_EQ(report[1], 0) << "the half-made slab file is removed";
  EXPECT_EQ(report[2], EFBIG);
  EXPECT_EQ(report[3], 0) << "the retry after the limit is lifted";
}

TEST_F(DiskStoreTest, SecondStoreOnTheSameDirectoryIsRefused) {
  DiskStore store(options("a"));
  try {
    DiskStore second(options("a"));
    ADD_FAILURE() << "a second store opened the same directory";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "a").string()), std::string::npos) << e.what();
  }
}

TEST_F(DiskStoreTest, UnusableDirectoryThrowsWithItsPath) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "not a directory";
  DiskStoreOptions o = options("file");
  o.dir /= "sub";
  try {
    DiskStore store(o);
    ADD_FAILURE() << "constructed under a regular file";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(o.dir.string()), std::string::npos) << e.what();
  }
}

TEST_F(DiskStoreTest, DestructorWaitsForIoInFlight) {
  Blocks blocks(32, kSlotBytes);  // outlives the store, as the contract asks
  blocks.fill_random(32, 3);
  {
    DiskStore store(options("a"));
    for (uint64_t i = 0; i < 32; ++i) store.enqueue_write(*store.allocate_slot(), blocks[i], i);
    store.submit();
    EXPECT_EQ(store.n_in_flight(), 8);
  }
  // The directory lock is released: a new store opens it.
  DiskStore store(options("a"));
  EXPECT_EQ(store.n_used_slots(), 0);
}

}  // namespace
}  // namespace strata
