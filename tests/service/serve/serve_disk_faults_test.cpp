// Real disk faults under a running `strata serve` with a disk KV cache: a full
// filesystem (ENOSPC on a slab, SQLITE_FULL on the index), a read-only folder,
// the folder deleted while serving, and a filesystem that fails every I/O
// (ext4 shut down: EIO). In each, the server must
//   - answer every request, with the greedy reply of a server without a disk
//     cache (a cached block that cannot be loaded is recomputed);
//   - say so once: one "persistence is off" warning, failures that repeat per
//     block logged a bounded number of times;
//   - report it: strata_kv_disk_writes_enabled 0 in /metrics;
//   - stay idle when no request comes (its CPU time over a second of
//     idleness, from /proc/PID/stat);
//   - and, where the fault goes away, write again by itself: the metric back
//     to 1 and one "persistence is back on" line.
// The filesystems are the test's own: tmpfs mounts, a read-only bind mount,
// an ext4 image on a loop device, all under a temporary folder and unmounted
// (lazily if busy) whatever the outcome. They need root; the tests skip
// elsewhere, saying why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/service/serve/serve_process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using strata::testing::CommandResult;
using strata::testing::curl;
using strata::testing::run_shell;
using strata::testing::seeded_words;
using strata::testing::ServeProcess;
using strata::testing::tiny_serve_model;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// ext4's shutdown ioctl (xfs_io -x -c shutdown does the same): every I/O on
// the filesystem fails with EIO from then on. NOLOGFLUSH: no journal flush.
constexpr unsigned long kExt4IocShutdown = _IOR('X', 125, uint32_t);
constexpr uint32_t kExt4GoingFlagsNoLogFlush = 2;

// Idle means this share of one CPU at most.
constexpr double kIdleCpuShare = 0.05;

// A prompt of about 17 blocks.
std::string prompt(int seed) { return seeded_words(200, seed); }

// The greedy completion over the server's Unix socket; "" with a failure
// when there is no reply.
std::string complete(const ServeProcess& server, const std::string& text) {
  const json body = {{"prompt", text}, {"max_tokens", 12}, {"temperature", 0}};
  const CommandResult r = curl("--unix-socket " + server.socket_path() +
                               " http://strata/v1/completions -H 'Content-Type: "
                               "application/json' -d '" + body.dump() + "'");
  const json reply = json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  if (r.exit_code != 0 || !reply.contains("choices")) {
    ADD_FAILURE() << "no completion: " << r.output << r.errors;
    return "";
  }
  return reply["choices"][0]["text"];
}

json get_json(const ServeProcess& server, const std::string& path) {
  const CommandResult r = curl("--unix-socket " + server.socket_path() + " http://strata" + path);
  return json::parse(r.output, nullptr, /*allow_exceptions=*/false);
}

// The value of the /metrics sample named `sample` (with its labels); -1 if absent.
double metric(const ServeProcess& server, const std::string& sample) {
  const CommandResult r = curl("--unix-socket " + server.socket_path() + " http://strata/metrics");
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(sample + " ")) return std::stod(line.substr(sample.size() + 1));
  }
  return -1;
}

const std::string kWritesEnabled = "strata_kv_disk_writes_enabled";
const std::string kDiskBlocks = "strata_kv_blocks_cached{tier=\"disk\"}";

int count_lines(const std::string& log, const std::string& text) {
  int n = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) n += line.find(text) != std::string::npos;
  return n;
}

// Polls `done` every 20 ms for up to `limit`.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit = 15s) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// CPU seconds (user + system) the process has used, from /proc/PID/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start at "state",
  // field 3; utime and stime are fields 14 and 15.
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The server's share of one CPU over `window` once its moves have settled.
double idle_cpu_share(const ServeProcess& server, std::chrono::milliseconds window = 1500ms) {
  eventually([&] {
    return metric(server, "strata_kv_moves_in_flight") == 0 &&
           metric(server, "strata_sequences_running") == 0;
  });
  std::this_thread::sleep_for(200ms);
  const double before = cpu_seconds(server.pid());
  EXPECT_GT(before, 0) << "no CPU time read for a server that has answered requests";
  const auto start = Clock::now();
  std::this_thread::sleep_for(window);
  const double used = cpu_seconds(server.pid()) - before;
  return used / std::chrono::duration<double>(Clock::now() - start).count();
}

// Replies of a server without a disk cache, each prompt asked once.
class ReferenceReplies {
 public:
  ReferenceReplies() : server_(tiny_serve_model(), {"--cache-dir", "none"}) {}
  const std::string& get(const std::string& text) {
    auto it = replies_.find(text);
    if (it == replies_.end()) it = replies_.emplace(text, complete(server_, text)).first;
    return it->second;
  }

 private:
  ServeProcess server_;
  std::map<std::string, std::string> replies_;
};

class ServeDiskFaultsTest : public testing::Test {
 protected:
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
  }

  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "the faults are made with mounts, which need root";
    if (reference_ == nullptr) reference_ = new ReferenceReplies();  // shared by the tests
    root_ = fs::temp_directory_path() /
            ("strata_serve_faults_" + std::to_string(getpid()) + "_" +
             testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    for (auto it = mounts_.rbegin(); it != mounts_.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  // A tmpfs of `size` at root_/name, or "" with the reason in `why`.
  fs::path mount_tmpfs(const std::string& name, const std::string& size, std::string& why) {
    const fs::path at = root_ / name;
    fs::create_directories(at);
    if (mount("tmpfs", at.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      why = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
      return {};
    }
    mounts_.push_back(at);
    return at;
  }

  // Serving with the cache in `cache`: small host memory (64 blocks), so
  // that blocks are written and pushed out, and a short retry cap.
  static std::unique_ptr<ServeProcess> serve(const fs::path& cache) {
    return std::make_unique<ServeProcess>(
        tiny_serve_model(),
        std::vector<std::string>{"--cache-dir", cache.string(), "--persist", "all",
                                 "--max-running", "4", "--host-cache-size", "256K",
                                 "--disk-retry-seconds", "0.2"});
  }

  // Each reply must be the reference's.
  void expect_answers(const ServeProcess& server, const std::vector<int>& seeds) {
    for (int seed : seeds) {
      const std::string text = prompt(seed);
      EXPECT_EQ(complete(server, text), reference_->get(text)) << "prompt " << seed;
    }
  }

  // Blocks on disk, once the writes in flight are done.
  static double disk_blocks(const ServeProcess& server) {
    eventually([&] { return metric(server, "strata_kv_moves_in_flight") == 0; });
    return metric(server, kDiskBlocks);
  }

  // While the fault lasts: writing off, one warning that says `reason`, and idle.
  void expect_writing_off(ServeProcess& server, const std::string& reason) {
    EXPECT_TRUE(server.wait_for_log("persistence is off", 10s)) << server.log();
    EXPECT_EQ(metric(server, kWritesEnabled), 0);
    EXPECT_GT(metric(server, "strata_kv_disk_write_failures_total"), 0);
    const std::string log = server.log();
    EXPECT_EQ(count_lines(log, "persistence is off"), 1) << log;
    EXPECT_NE(log.find(reason), std::string::npos) << "expected '" << reason << "'\n" << log;
    const double share = idle_cpu_share(server);
    EXPECT_LT(share, kIdleCpuShare) << "an idle server with writing off is busy";
    RecordProperty("idle_cpu_share_writing_off", std::to_string(share));
  }

  // The fault gone: new requests (every reply still right) until a probe
  // turns writing back on, which new blocks then show.
  void expect_writing_back(ServeProcess& server, int first_seed) {
    int seed = first_seed;
    const bool back = eventually([&] {
      expect_answers(server, {seed++});
      return metric(server, kWritesEnabled) == 1;
    });
    EXPECT_TRUE(back) << "writing did not come back\n" << server.log();
    EXPECT_EQ(count_lines(server.log(), "persistence is back on"), 1) << server.log();
    const double before = disk_blocks(server);
    expect_answers(server, {seed++});
    EXPECT_GT(disk_blocks(server), before) << "nothing written after writing came back";
    EXPECT_EQ(count_lines(server.log(), "persistence is off"), 1) << server.log();
  }

  static ReferenceReplies* reference_;
  fs::path root_;
  std::vector<fs::path> mounts_;
};

ReferenceReplies* ServeDiskFaultsTest::reference_ = nullptr;

// Writes zeros into `path` until the filesystem refuses more.
void fill_up(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  const std::vector<char> chunk(64 * 1024, 0);
  while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) out.flush();
}

// The filesystem full before the first slab file: its creation fails with
// ENOSPC. Deleting the filler gives the room back.
TEST_F(ServeDiskFaultsTest, FullDiskThenRoomAgain) {
  std::string why;
  const fs::path disk = mount_tmpfs("disk", "4m", why);
  if (disk.empty()) GTEST_SKIP() << why;
  std::unique_ptr<ServeProcess> server = serve(disk / "cache");
  ASSERT_TRUE(server->running()) << server->log();
  fill_up(disk / "filler");
  expect_answers(*server, {101, 102, 103});
  expect_writing_off(*server, "No space left on device");
  expect_answers(*server, {101, 104});

  fs::remove(disk / "filler");
  expect_writing_back(*server, 110);
  EXPECT_EQ(server->terminate(), 0) << server->log();
}

// The slab file exists, its slots reserved: block writes still land, but the
// index cannot grow (SQLITE_FULL).
TEST_F(ServeDiskFaultsTest, FullIndexThenRoomAgain) {
  std::string why;
  const fs::path disk = mount_tmpfs("disk", "8m", why);
  if (disk.empty()) GTEST_SKIP() << why;
  std::unique_ptr<ServeProcess> server = serve(disk / "cache");
  ASSERT_TRUE(server->running()) << server->log();
  expect_answers(*server, {201});
  ASSERT_GT(disk_blocks(*server), 0) << server->log();

  fill_up(disk / "filler");
  expect_answers(*server, {202, 203, 204});
  expect_writing_off(*server, "database or disk is full");
  expect_answers(*server, {201, 205});

  fs::remove(disk / "filler");
  expect_writing_back(*server, 210);
  EXPECT_EQ(server->terminate(), 0) << server->log();
}

// A read-only bind mount over the cache folder (root ignores chmod 0555, and
// a filesystem with files open for writing cannot be remounted read-only):
// the folder at the path can no longer be written. Unmounting it makes it
// writable again; the blocks already on disk stay, without a reopen.
TEST_F(ServeDiskFaultsTest, ReadOnlyFolderThenWritableAgain) {
  std::string why;
  const fs::path disk = mount_tmpfs("disk", "16m", why);
  if (disk.empty()) GTEST_SKIP() << why;
  std::unique_ptr<ServeProcess> server = serve(disk / "cache");
  ASSERT_TRUE(server->running()) << server->log();
  expect_answers(*server, {301});
  const double on_disk = disk_blocks(*server);
  ASSERT_GT(on_disk, 0) << server->log();

  ASSERT_EQ(mount(disk.c_str(), disk.c_str(), nullptr, MS_BIND, nullptr), 0) << strerror(errno);
  mounts_.push_back(disk);
  ASSERT_EQ(mount(nullptr, disk.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr), 0)
      << strerror(errno);
  expect_answers(*server, {302, 303});
  expect_writing_off(*server, "Read-only file system");
  expect_answers(*server, {301, 304});

  ASSERT_EQ(umount2(disk.c_str(), 0), 0) << strerror(errno);
  mounts_.pop_back();
  expect_writing_back(*server, 310);
  EXPECT_GE(disk_blocks(*server), on_disk) << "the blocks already on disk were dropped";
  EXPECT_EQ(metric(*server, "strata_kv_disk_reopens_total"), 0);
  EXPECT_EQ(server->terminate(), 0) << server->log();
}

// rm -rf of the cache folder while serving. First a file takes its place, so
// that it cannot be made again: writing stays off. Once it can, the server
// makes a fresh cache there. A second rm -rf, with nothing in the way, is
// repaired by the next probe at once.
TEST_F(ServeDiskFaultsTest, FolderDeletedWhileServing) {
  const fs::path cache = root_ / "cache";
  std::unique_ptr<ServeProcess> server = serve(cache);
  ASSERT_TRUE(server->running()) << server->log();
  expect_answers(*server, {401});
  ASSERT_GT(disk_blocks(*server), 0) << server->log();

  // The server is idle: nothing probes between these two lines.
  fs::remove_all(cache);
  std::ofstream(cache) << "in the way";
  expect_answers(*server, {402, 403});
  expect_writing_off(*server, "was deleted or replaced while serving");
  expect_answers(*server, {401, 404});
  EXPECT_EQ(metric(*server, kDiskBlocks), 0) << "blocks of a deleted folder are still listed";

  fs::remove(cache);
  expect_writing_back(*server, 410);
  EXPECT_EQ(metric(*server, "strata_kv_disk_reopens_total"), 1);
  EXPECT_EQ(count_lines(server->log(), "opened a new cache there"), 1) << server->log();
  bool index_there = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(cache)) {
    index_there = index_there || fs::exists(entry.path() / "index.sqlite");
  }
  EXPECT_TRUE(index_there) << "no fresh index in " << cache;

  fs::remove_all(cache);
  expect_answers(*server, {420, 421});
  int seed = 422;
  EXPECT_TRUE(eventually([&] {
    expect_answers(*server, {seed++});
    return metric(*server, "strata_kv_disk_reopens_total") == 2 &&
           metric(*server, kWritesEnabled) == 1;
  })) << server->log();
  EXPECT_EQ(server->terminate(), 0) << server->log();
}

// EIO: an ext4 image on a loop device, shut down under a server that has
// blocks of earlier prompts on it. Their loads fail and they are recomputed;
// writing goes off; nothing is logged per block beyond a few lines.
TEST_F(ServeDiskFaultsTest, FailingDiskEveryIoIsEio) {
  const fs::path image = root_ / "ext4.img";
  const fs::path disk = root_ / "disk";
  fs::create_directories(disk);
  const CommandResult made = run_shell("truncate -s 64M " + image.string() +
                                       " && mkfs.ext4 -q -F " + image.string());
  if (made.exit_code != 0) GTEST_SKIP() << "cannot make an ext4 image: " << made.errors;
  const CommandResult mounted = run_shell("mount -o loop " + image.string() + " " + disk.string());
  if (mounted.exit_code != 0) GTEST_SKIP() << "cannot loop-mount ext4: " << mounted.errors;
  mounts_.push_back(disk);

  const std::vector<int> seen = {501, 502, 503};
  {
    std::unique_ptr<ServeProcess> writer = serve(disk / "cache");
    ASSERT_TRUE(writer->running()) << writer->log();
    expect_answers(*writer, seen);
    EXPECT_EQ(writer->terminate(), 0) << writer->log();  // write-through finishes
  }
  std::unique_ptr<ServeProcess> server = serve(disk / "cache");
  ASSERT_TRUE(server->running()) << server->log();
  ASSERT_GT(metric(*server, kDiskBlocks), 0) << server->log();

  const int fd = open(disk.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << strerror(errno);
  uint32_t flags = kExt4GoingFlagsNoLogFlush;
  const int shut = ioctl(fd, kExt4IocShutdown, &flags);
  const int shut_errno = errno;
  close(fd);
  ASSERT_EQ(shut, 0) << "EXT4_IOC_SHUTDOWN: " << strerror(shut_errno);

  // The first prompt's blocks are loaded (no prefill rate known yet: a load
  // is chosen), and every load fails.
  expect_answers(*server, seen);
  expect_answers(*server, {504, 505});
  expect_writing_off(*server, "Input/output error");
  const json cache = get_json(*server, "/v1/cache");
  EXPECT_GT(cache["tiers"].back().value("load_failures", 0), 0) << cache.dump();
  const std::string log = server->log();
  const int n_unreadable = count_lines(log, "is unreadable");
  EXPECT_GE(n_unreadable, 1) << log;
  EXPECT_LE(n_unreadable, 3) << "one line per block that failed to load\n" << log;
  EXPECT_LE(count_lines(log, "warning:"), 10) << log;
  expect_answers(*server, {501, 506});
  EXPECT_EQ(count_lines(server->log(), "persistence is off"), 1) << server->log();
  EXPECT_EQ(server->terminate(), 0) << server->log();
}

}  // namespace
