// An engine whose disk tier has filled up: a tmpfs of a few MiB that the test
// mounts itself (as root; the test skips elsewhere), full before the first
// request. Every request is still answered, persistence turns off, and once
// the requests are done the engine stays idle: it does not keep offering the
// disk blocks that cannot be written (each refusal would wake it again).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/cpu/cpu_runtime.h"
#include "engine/kv_sizing.h"
#include "tests/engine/engine_test_support.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::EngineSetup;
using testing::EngineUnderTest;

class EngineFullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    dir_ = fs::temp_directory_path() / ("strata_engine_full_disk_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      const std::string why = std::strerror(errno);
      fs::remove(dir_);
      GTEST_SKIP() << "cannot mount a tmpfs here: " << why;
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(EngineFullDiskTest, AnswersEveryRequestAndStaysIdleOnceWritesFail) {
  const KvLayout layout = kv_layout_for(testing::test_model().config());
  CpuRuntime probe(testing::test_model(),
                   CpuRuntimeOptions{.kv_layout = layout, .n_kv_blocks = 1, .n_threads = 1});
  DiskWorker disk(DiskTierOptions{.dir = dir_ / "kv",
                                  .block_bytes = layout.block_bytes(),
                                  .capacity_bytes = int64_t{64} << 20,
                                  .model = testing::test_fingerprint(probe)});
  {
    std::ofstream filler(dir_ / "filler", std::ios::binary);
    const std::vector<char> chunk(64 * 1024, 0);
    while (filler.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) filler.flush();
  }

  // 64 blocks of room: eight 200-token prompts leave the pool full of idle
  // cached blocks, the case where the engine demotes to disk after each wake.
  EngineUnderTest e(EngineSetup{.n_kv_blocks = 64, .disk_tier = &disk});
  for (int i = 0; i < 8; ++i) {
    const testing::Outcome out = testing::run_one(e, testing::request_for(i, 200, 8));
    ASSERT_EQ(out.finish, FinishReason::kLength) << "request " << i;
    EXPECT_EQ(out.tokens.size(), 8u);
  }
  EXPECT_FALSE(disk.writing());

  disk.wait_idle();
  // The last step's stats are published just after its events: let it land.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t failures = disk.stats().n_write_failures;
  const int64_t steps = e.engine().stats().n_steps;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(disk.stats().n_write_failures, failures) << "the idle engine kept offering blocks";
  EXPECT_EQ(e.engine().stats().n_steps, steps);
}

}  // namespace
}  // namespace strata
