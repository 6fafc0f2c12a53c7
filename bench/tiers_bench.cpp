#include "bench/tiers_bench.h"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bench/gpu_ceilings.h"
#include "common/log.h"
#include "common/str_cat.h"
#include "engine/cpu/cpu_runtime.h"
#include "engine/engine.h"
#include "engine/kv_sizing.h"
#include "engine/model_fingerprint.h"
#include "engine/model_runtime.h"
#include "kernels/kv_layout.h"
#include "tiering/block_hash.h"
#include "tiering/block_pool.h"
#include "tiering/disk_store.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kDefaultMoveBytes = int64_t{256} << 20;  // blocks moved each way by default
constexpr int64_t kLargeChunkBytes = int64_t{1} << 20;     // the sequential ceiling's I/O size
constexpr int64_t kTtftMaxTokens = 1;  // the TTFT runs stop at their first token
constexpr int64_t kWarmUpTokens = 32;  // prompt of each engine's warm-up request
constexpr auto kReapTimeout = std::chrono::milliseconds(100);

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

double gb_per_s(int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

[[noreturn]] void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), what);
}

void fill_random(std::byte* bytes, int64_t n, std::mt19937_64& rng) {
  for (int64_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t word = rng();
    std::memcpy(bytes + i, &word, 8);
  }
}

// --- plain O_DIRECT files: the ceiling -------------------------------------------

// One file opened with O_DIRECT, or buffered where the filesystem refuses it
// (EINVAL: tmpfs and the like). Buffers, sizes and offsets: 4096-aligned.
class PlainFile {
 public:
  PlainFile(const std::filesystem::path& path, int flags) {
    fd_ = ::open(path.c_str(), flags | O_DIRECT | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EINVAL) {
      direct_ = false;
      fd_ = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    }
    if (fd_ < 0) throw_errno(errno, "open " + path.string());
  }
  ~PlainFile() { ::close(fd_); }
  PlainFile(const PlainFile&) = delete;
  PlainFile& operator=(const PlainFile&) = delete;

  bool direct() const { return direct_; }

  void write_at(const std::byte* bytes, int64_t n, int64_t offset) {
    while (n > 0) {
      const ssize_t done = ::pwrite(fd_, bytes, static_cast<size_t>(n), offset);
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) throw_errno(done < 0 ? errno : EIO, "pwrite");
      bytes += done;
      n -= done;
      offset += done;
    }
  }

  void read_at(std::byte* bytes, int64_t n, int64_t offset) {
    while (n > 0) {
      const ssize_t done = ::pread(fd_, bytes, static_cast<size_t>(n), offset);
      if (done < 0 && errno == EINTR) continue;
      if (done <= 0) throw_errno(done < 0 ? errno : ENODATA, "pread");
      bytes += done;
      n -= done;
      offset += done;
    }
  }

  // fdatasync; a buffered file also drops its pages, so that reads go to the disk.
  void sync() {
    if (::fdatasync(fd_) != 0) throw_errno(errno, "fdatasync");
    if (!direct_) ::posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED);
  }

 private:
  int fd_ = -1;
  bool direct_ = true;
};

struct PlainTimes {
  double write_s = 0;
  double read_s = 0;
  bool direct = true;
};

// Writes n_chunks chunks of chunk_bytes, chunk(i) for the i-th, back to back
// into a new file at `path`, then fdatasync; then reads them back into
// chunk(i) in the same order. One I/O at a time, as a plain program does.
PlainTimes plain_write_read(const std::filesystem::path& path, int64_t chunk_bytes,
                            int64_t n_chunks, const std::function<std::byte*(int64_t)>& chunk) {
  PlainTimes times;
  {
    PlainFile file(path, O_WRONLY | O_CREAT | O_TRUNC);
    times.direct = file.direct();
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < n_chunks; ++i) file.write_at(chunk(i), chunk_bytes, i * chunk_bytes);
    file.sync();
    times.write_s = seconds_since(start);
  }
  {
    PlainFile file(path, O_RDONLY);
    times.direct = times.direct && file.direct();
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < n_chunks; ++i) file.read_at(chunk(i), chunk_bytes, i * chunk_bytes);
    times.read_s = seconds_since(start);
  }
  std::filesystem::remove(path);
  return times;
}

// --- the tier's own layers -------------------------------------------------------

// Reaps until n completions have come back; throws on the first failed one.
void reap_all(DiskStore& store, int64_t n, const char* what) {
  for (int64_t n_done = 0; n_done < n;) {
    for (const DiskCompletion& done : store.reap(/*wait=*/true, kReapTimeout)) {
      if (done.error != 0) throw_errno(done.error, what);
      ++n_done;
    }
  }
}

// Takes the worker's completions (after wait_idle) and checks each is `want`.
void expect_completions(DiskWorker& worker, int64_t n, TierEvent want, const char* what) {
  const std::vector<TierCompletion> done = worker.take_completions();
  const auto n_ok =
      std::ranges::count_if(done, [&](const TierCompletion& c) { return c.event == want; });
  if (static_cast<int64_t>(done.size()) != n || n_ok != n) {
    throw std::runtime_error(str_cat("tiers bench: ", what, ": ", n_ok, " of ", n,
                                     " blocks moved (see the warnings above)"));
  }
}

// --- time to first token -------------------------------------------------------------

std::vector<TokenId> random_prompt(int64_t n, int32_t n_vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> token(0, n_vocab - 1);
  std::vector<TokenId> prompt(static_cast<size_t>(n));
  for (TokenId& id : prompt) id = token(rng);
  return prompt;
}

struct FirstToken {
  double seconds = 0;  // submit to the first token's event
  TokenId token = -1;
  Usage usage;
};

// Runs one greedy request of kTtftMaxTokens on an idle engine and waits for
// it, then for the engine to settle: the step that finished it has published
// its stats, so every block it made has been handed to the disk tier.
FirstToken time_first_token(Engine& engine, std::vector<TokenId> prompt) {
  // Written by the engine thread's callback, which holds it by shared_ptr.
  struct State {
    std::mutex mutex;
    std::condition_variable finished;
    std::optional<Clock::time_point> first;  // under mutex
    TokenId token = -1;
    std::optional<FinishReason> finish;
    std::string error;
    Usage usage;
  };
  auto state = std::make_shared<State>();
  const int64_t n_steps_before = engine.stats().n_steps;
  GenerateRequest request;
  request.prompt = std::move(prompt);
  request.sampling.temperature = 0.0f;
  request.max_tokens = kTtftMaxTokens;
  request.ignore_eos = true;
  const Clock::time_point start = Clock::now();
  engine.submit(std::move(request), [state](const EngineEvent& event) {
    const Clock::time_point now = Clock::now();
    {
      std::lock_guard lock(state->mutex);
      if (!state->first && !event.token_ids.empty()) {
        state->first = now;
        state->token = event.token_ids.front();
      }
      if (!event.finish) return;
      state->finish = event.finish;
      state->error = event.error;
      state->usage = event.usage;
    }
    state->finished.notify_one();
  });
  FirstToken result;
  {
    std::unique_lock lock(state->mutex);
    state->finished.wait(lock, [&] { return state->finish.has_value(); });
    if (*state->finish != FinishReason::kLength || !state->first) {
      throw std::runtime_error(str_cat("tiers bench: a request ended with ",
                                       finish_reason_name(*state->finish),
                                       state->error.empty() ? "" : ": ", state->error));
    }
    result = FirstToken{.seconds = std::chrono::duration<double>(*state->first - start).count(),
                        .token = state->token, .usage = state->usage};
  }
  for (;;) {
    const EngineStats stats = engine.stats();
    if (stats.n_steps > n_steps_before && stats.n_running + stats.n_waiting == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return result;
}

// A runtime (its own, empty KV pools: T1 on the CPU; T0 and T1 on a GPU)
// and an engine over it that writes through to `disk` (T2). The engine
// always loads what it finds below (no prefill is ever observed by its cost
// model): the bench measures loads. Members in this order: the engine goes
// first, draining its moves out of the runtime's pools.
struct EngineOnDisk {
  EngineOnDisk(const LoadedModel& model, const RuntimeOptions& runtime_options,
               const ModelFingerprint& fingerprint, DiskWorker& disk)
      : runtime(make_runtime(model, runtime_options)),
        engine(runtime->backend(), runtime->kv_blocks(), model.tokenizer(),
               EngineOptions{.scheduler = {.model_fingerprint = fingerprint},
                             .disk_tier = &disk,
                             .device_copier = runtime->device_copier(),
                             .host_blocks = runtime->host_blocks(),
                             .load_cost = {.min_prefill_tokens = INT64_MAX}}) {}
  std::unique_ptr<ModelRuntime> runtime;
  Engine engine;
};

// --- the JSON ------------------------------------------------------------------------

nlohmann::ordered_json move_json(const TierMoveResult& r) {
  const double plain_write = gb_per_s(r.bytes, r.plain_write_s);
  const double plain_read = gb_per_s(r.bytes, r.plain_read_s);
  const int64_t large_bytes = round_up(r.bytes, r.large_chunk_bytes);
  const double large_write = gb_per_s(large_bytes, r.plain_large_write_s);
  const double large_read = gb_per_s(large_bytes, r.plain_large_read_s);
  const double tier_write = gb_per_s(r.bytes, r.tier_write_s);
  const double tier_read = gb_per_s(r.bytes, r.tier_read_s);
  nlohmann::ordered_json out;
  out["blocks"] = r.n_blocks;
  out["bytes"] = r.bytes;
  out["t1_to_t2_gb_per_s"] = tier_write;
  out["t2_to_t1_gb_per_s"] = tier_read;
  out["store_write_gb_per_s"] = gb_per_s(r.bytes, r.store_write_s);
  out["store_read_gb_per_s"] = gb_per_s(r.bytes, r.store_read_s);
  out["plain_odirect_write_gb_per_s"] = plain_write;
  out["plain_odirect_read_gb_per_s"] = plain_read;
  out["write_ratio"] = plain_write > 0 ? tier_write / plain_write : 0.0;
  out["read_ratio"] = plain_read > 0 ? tier_read / plain_read : 0.0;
  out["large_chunk_bytes"] = r.large_chunk_bytes;
  out["plain_odirect_large_write_gb_per_s"] = large_write;
  out["plain_odirect_large_read_gb_per_s"] = large_read;
  out["write_ratio_to_large"] = large_write > 0 ? tier_write / large_write : 0.0;
  out["read_ratio_to_large"] = large_read > 0 ? tier_read / large_read : 0.0;
  out["seconds"] = {{"t1_to_t2", r.tier_write_s},     {"t2_to_t1", r.tier_read_s},
                    {"store_write", r.store_write_s}, {"store_read", r.store_read_s},
                    {"plain_write", r.plain_write_s}, {"plain_read", r.plain_read_s},
                    {"plain_large_write", r.plain_large_write_s},
                    {"plain_large_read", r.plain_large_read_s}};
  return out;
}

nlohmann::ordered_json ttft_json(const TierTtftResult& r) {
  auto speedup = [&](double s) { return s > 0 ? r.cold_s / s : 0.0; };
  nlohmann::ordered_json out;
  out["prompt_tokens"] = r.prompt_tokens;
  out["cold_s"] = r.cold_s;
  if (r.on_gpu) out["t0_s"] = r.t0_s;
  out["t1_s"] = r.t1_s;
  out["t2_s"] = r.t2_s;
  if (r.on_gpu) out["t0_speedup"] = speedup(r.t0_s);
  out["t1_speedup"] = speedup(r.t1_s);
  out["t2_speedup"] = speedup(r.t2_s);
  out["cold_prefill_tok_s"] = r.cold_s > 0 ? static_cast<double>(r.prompt_tokens) / r.cold_s : 0.0;
  out["cached_tokens_cold"] = r.cached_tokens_cold;
  if (r.on_gpu) out["cached_tokens_t0"] = r.cached_tokens_t0;
  out["cached_tokens_t1"] = r.cached_tokens_t1;
  out["cached_tokens_t2"] = r.cached_tokens_t2;
  if (r.on_gpu) out["t1_blocks_promoted"] = r.t1_blocks_promoted;
  out["t2_blocks_loaded"] = r.t2_blocks_loaded;
  out["same_first_token"] = r.first_token_cold == r.first_token_t1 &&
                            r.first_token_cold == r.first_token_t2 &&
                            (!r.on_gpu || r.first_token_cold == r.first_token_t0);
  return out;
}

nlohmann::ordered_json device_move_json(const DeviceMoveResult& r) {
  const double up = gb_per_s(r.bytes, r.to_device_s);
  const double down = gb_per_s(r.bytes, r.to_host_s);
  nlohmann::ordered_json out;
  out["device"] = r.device;
  out["blocks"] = r.n_blocks;
  out["bytes"] = r.bytes;
  out["t1_to_t0_gb_per_s"] = up;
  out["t0_to_t1_gb_per_s"] = down;
  out["plain_pinned_to_device_gb_per_s"] = r.plain_to_device_gb_per_s;
  out["plain_pinned_to_host_gb_per_s"] = r.plain_to_host_gb_per_s;
  out["to_device_ratio"] = r.plain_to_device_gb_per_s > 0 ? up / r.plain_to_device_gb_per_s : 0.0;
  out["to_host_ratio"] = r.plain_to_host_gb_per_s > 0 ? down / r.plain_to_host_gb_per_s : 0.0;
  return out;
}

// The filesystem holding `path`, by statfs's magic number; "other (0x...)" if unknown.
std::string filesystem_name(const std::filesystem::path& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return "unknown";
  switch (static_cast<uint64_t>(info.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x2FC12FC1: return "zfs";
    case 0x6969: return "nfs";
    case 0x794C7630: return "overlayfs";
    case 0x01021994: return "tmpfs";
    default: {
      char name[32];
      std::snprintf(name, sizeof name, "other (0x%llx)",
                    static_cast<unsigned long long>(info.f_type));
      return name;
    }
  }
}

// A fresh folder inside `parent`, removed with everything in it when this goes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& parent) {
    const std::filesystem::path base =
        parent.empty() ? std::filesystem::temp_directory_path() : parent;
    std::filesystem::create_directories(base);
    path_ = base / str_cat("strata-bench-tiers-", ::getpid());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directory(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

TierMoveResult measure_tier_moves(const TierMoveOptions& o) {
  if (o.block_bytes <= 0 || o.block_tokens <= 0 || o.n_blocks <= 0 || o.queue_depth <= 0) {
    throw std::invalid_argument(
        "tiers bench: block_bytes, block_tokens, n_blocks and queue_depth must be > 0");
  }
  std::filesystem::create_directories(o.dir);
  BlockPool pool(o.block_bytes, o.n_blocks);
  std::vector<BlockId> blocks;
  std::mt19937_64 rng(1);
  for (int64_t i = 0; i < o.n_blocks; ++i) {
    blocks.push_back(*pool.allocate());
    fill_random(pool.data(blocks.back()), o.block_bytes, rng);
  }
  auto slot = [&](int64_t i) { return pool.data(blocks[static_cast<size_t>(i)]); };

  TierMoveResult r;
  r.slot_bytes = pool.slot_bytes();
  r.n_blocks = o.n_blocks;
  r.bytes = o.n_blocks * r.slot_bytes;
  r.large_chunk_bytes = kLargeChunkBytes;

  // The ceiling: the same bytes, slot by slot, then in large chunks (from one
  // buffer of random bytes written again and again).
  log_info("bench tiers: plain O_DIRECT write and read of ",
           static_cast<double>(r.bytes) / (1 << 20), " MiB in ", r.slot_bytes,
           "-byte chunks, then ", kLargeChunkBytes >> 10, " KiB chunks");
  const PlainTimes plain = plain_write_read(o.dir / "plain.bin", r.slot_bytes, o.n_blocks, slot);
  BlockPool large_buffer(kLargeChunkBytes, 1);
  const BlockId large = *large_buffer.allocate();
  fill_random(large_buffer.data(large), kLargeChunkBytes, rng);
  const PlainTimes plain_large =
      plain_write_read(o.dir / "plain-large.bin", kLargeChunkBytes,
                       round_up(r.bytes, kLargeChunkBytes) / kLargeChunkBytes,
                       [&](int64_t) { return large_buffer.data(large); });
  r.plain_write_s = plain.write_s;
  r.plain_read_s = plain.read_s;
  r.plain_large_write_s = plain_large.write_s;
  r.plain_large_read_s = plain_large.read_s;
  r.direct_io = plain.direct && plain_large.direct;

  // Any fingerprint will do: nothing here is ever served to a model.
  const std::string name = "strata bench tiers";
  const ModelFingerprint fingerprint =
      sha256(std::span(reinterpret_cast<const uint8_t*>(name.data()), name.size()));

  log_info("bench tiers: DiskStore write and read of ", o.n_blocks, " blocks");
  {
    DiskStore store(DiskStoreOptions{.dir = o.dir / "store", .slot_bytes = r.slot_bytes,
                                     .max_slots = o.n_blocks, .queue_depth = o.queue_depth,
                                     .fingerprint = fingerprint.bytes});
    std::vector<SlotAddress> slots;
    Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < o.n_blocks; ++i) {
      slots.push_back(*store.allocate_slot());
      store.enqueue_write(slots.back(), slot(i), static_cast<uint64_t>(i));
    }
    store.submit();
    reap_all(store, o.n_blocks, "DiskStore write");
    if (const int error = store.sync(); error != 0) throw_errno(error, "DiskStore sync");
    r.store_write_s = seconds_since(start);
    start = Clock::now();
    for (int64_t i = 0; i < o.n_blocks; ++i) {
      store.enqueue_read(slots[static_cast<size_t>(i)], slot(i), static_cast<uint64_t>(i));
    }
    store.submit();
    reap_all(store, o.n_blocks, "DiskStore read");
    r.store_read_s = seconds_since(start);
    r.direct_io = r.direct_io && store.direct_io();
  }
  std::filesystem::remove_all(o.dir / "store");

  // A chain of blocks as a sequence's would be, token ids 0, 1, 2, ...
  std::vector<int32_t> tokens(static_cast<size_t>(o.n_blocks * o.block_tokens));
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i);
  auto tokens_of = [&](int64_t i) {
    return std::span<const int32_t>(tokens).subspan(static_cast<size_t>(i * o.block_tokens),
                                                    static_cast<size_t>(o.block_tokens));
  };
  std::vector<BlockHash> hashes;
  BlockHash parent{};
  for (int64_t i = 0; i < o.n_blocks; ++i) {
    hashes.push_back(hash_block(parent, fingerprint, tokens_of(i)));
    parent = hashes.back();
  }

  log_info("bench tiers: DiskWorker persist and load of ", o.n_blocks, " blocks");
  {
    DiskWorker worker(DiskTierOptions{.dir = o.dir / "tier", .block_bytes = o.block_bytes,
                                      .capacity_bytes = r.bytes, .model = fingerprint,
                                      .queue_depth = o.queue_depth, .persist = true});
    Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < o.n_blocks; ++i) {
      worker.persist(hashes[static_cast<size_t>(i)],
                     i > 0 ? hashes[static_cast<size_t>(i - 1)] : BlockHash{}, tokens_of(i),
                     slot(i), static_cast<uint64_t>(i));
    }
    worker.wait_idle();
    r.tier_write_s = seconds_since(start);
    expect_completions(worker, o.n_blocks, TierEvent::kPersisted, "T1 -> T2");
    start = Clock::now();
    for (int64_t i = 0; i < o.n_blocks; ++i) {
      worker.load(hashes[static_cast<size_t>(i)], slot(i), static_cast<uint64_t>(i));
    }
    worker.wait_idle();
    r.tier_read_s = seconds_since(start);
    expect_completions(worker, o.n_blocks, TierEvent::kLoaded, "T2 -> T1");
  }
  std::filesystem::remove_all(o.dir / "tier");
  return r;
}

std::optional<DeviceMoveResult> measure_device_moves(const LoadedModel& model, WeightType kv_dtype,
                                                     int64_t n_blocks) {
  std::unique_ptr<ModelRuntime> runtime;
  try {
    runtime = make_runtime(
        model, RuntimeOptions{.kv_layout = kv_layout_for(model.config(),
                                                         KvLayout::kDefaultBlockTokens, kv_dtype),
                              .n_kv_blocks = n_blocks,
                              .n_kv_blocks_gpu = n_blocks,
                              .n_host_blocks = n_blocks,
                              .backend = BackendChoice::kCuda});
  } catch (const std::exception& e) {
    log_info("bench tiers: no T0 <-> T1 moves: ", e.what());
    return std::nullopt;
  }
  DeviceCopier& copier = *runtime->device_copier();
  BlockPool& device = runtime->kv_blocks();
  BlockPool& host = *runtime->host_blocks();
  n_blocks = std::min(device.n_total(), host.n_total());  // VRAM may hold fewer
  std::mt19937_64 rng(2);
  std::vector<BlockCopy> up;
  std::vector<BlockCopy> down;
  for (int64_t i = 0; i < n_blocks; ++i) {
    const BlockId d = *device.allocate();
    const BlockId h = *host.allocate();
    fill_random(host.data(h), host.block_bytes(), rng);
    up.push_back({.direction = BlockCopy::Direction::kToDevice, .device_block = d,
                  .host = host.data(h), .tag = static_cast<uint64_t>(i)});
    down.push_back({.direction = BlockCopy::Direction::kToHost, .device_block = d,
                    .host = host.data(h), .tag = static_cast<uint64_t>(n_blocks + i)});
  }
  auto timed = [&](const std::vector<BlockCopy>& copies) {
    copier.copy(std::span(copies).first(std::min<size_t>(copies.size(), 16)));  // warm-up
    copier.wait_idle();
    const Clock::time_point start = Clock::now();
    copier.copy(copies);
    copier.wait_idle();
    const double seconds = seconds_since(start);
    copier.take_completed();
    return seconds;
  };
  DeviceMoveResult r{.device = runtime->description(), .n_blocks = n_blocks,
                     .bytes = n_blocks * copier.block_bytes()};
  log_info("bench tiers: ", n_blocks, " blocks up to VRAM and down through the copy stream");
  r.to_device_s = timed(up);
  r.to_host_s = timed(down);
  for (const BlockCopy& c : up) device.free(c.device_block);
  for (int64_t i = 0; i < host.n_total(); ++i) {
    if (host.is_allocated(static_cast<BlockId>(i))) host.free(static_cast<BlockId>(i));
  }
  runtime.reset();  // its VRAM back before the plain copies take theirs
  if (const std::optional<BusCeilings> bus = measure_bus_ceilings(r.bytes)) {
    r.plain_to_device_gb_per_s = bus->to_device_gb_per_s;
    r.plain_to_host_gb_per_s = bus->to_host_gb_per_s;
  }
  return r;
}

namespace {

// Runtime options for a TTFT run of an n_prompt-token prompt: host memory
// for the prompt twice and the warm-ups; on a GPU a VRAM arena for the
// prompt once, so that another prompt pushes it down to T1.
RuntimeOptions ttft_runtime_options(const KvLayout& layout, int64_t n_prompt,
                                    const TierTtftOptions& o) {
  const int64_t warm_up = layout.blocks_for(kWarmUpTokens + kTtftMaxTokens);
  const int64_t one_prompt = layout.blocks_for(n_prompt + kTtftMaxTokens);
  const int64_t n_host = 2 * one_prompt + 2 * warm_up + 16;
  return RuntimeOptions{.kv_layout = layout, .n_kv_blocks = n_host,
                        .n_kv_blocks_gpu = one_prompt + warm_up + 2, .n_host_blocks = n_host,
                        .n_threads = o.n_threads, .backend = o.backend};
}

}  // namespace

std::vector<TierTtftResult> measure_tier_ttft(const LoadedModel& model, const TierTtftOptions& o) {
  const ModelConfig& config = model.config();
  const int32_t n_vocab = static_cast<int32_t>(config.n_vocab);
  const KvLayout layout = kv_layout_for(config, KvLayout::kDefaultBlockTokens, o.kv_dtype);
  const ModelFingerprint fingerprint = model_fingerprint(model.file(), layout);
  std::vector<TierTtftResult> results;
  for (const int64_t n_prompt : o.prompt_tokens) {
    if (n_prompt < 1 || n_prompt + kTtftMaxTokens > config.context_length) {
      throw std::invalid_argument(str_cat("tiers bench: a ", n_prompt,
                                          "-token prompt does not fit the context (",
                                          config.context_length, ")"));
    }
    const RuntimeOptions runtime_options = ttft_runtime_options(layout, n_prompt, o);
    DiskWorker disk(DiskTierOptions{
        .dir = o.dir / str_cat("ttft-", n_prompt),
        .block_bytes = layout.block_bytes(),
        .capacity_bytes =
            runtime_options.n_kv_blocks * round_up(layout.block_bytes(), BlockPool::kSlotAlignment),
        .model = fingerprint,
        .persist = true});
    const std::vector<TokenId> prompt =
        random_prompt(n_prompt, n_vocab, static_cast<uint64_t>(n_prompt));
    TierTtftResult r{.prompt_tokens = n_prompt};
    {
      EngineOnDisk e(model, runtime_options, fingerprint, disk);
      r.backend = e.runtime->description();
      r.on_gpu = e.runtime->on_gpu();
      if (auto* cpu = dynamic_cast<CpuRuntime*>(e.runtime.get())) {
        r.n_threads = cpu->threads().n_threads();
      }
      log_info("bench tiers: ", n_prompt, "-token prompt, cold then in ",
               r.on_gpu ? "T0, then T1" : "T1");
      // Faults the weights in and sizes the buffers; its prompt shares no block.
      time_first_token(e.engine, random_prompt(kWarmUpTokens, n_vocab, 1000003));
      disk.wait_idle();
      const FirstToken cold = time_first_token(e.engine, prompt);
      disk.wait_idle();  // the write-through of the cold run's blocks is not timed
      r.cold_s = cold.seconds;
      r.cached_tokens_cold = cold.usage.cached_prompt_tokens;
      r.first_token_cold = cold.token;
      const FirstToken hit = time_first_token(e.engine, prompt);  // in the compute tier
      if (r.on_gpu) {
        r.t0_s = hit.seconds;
        r.cached_tokens_t0 = hit.usage.cached_prompt_tokens;
        r.first_token_t0 = hit.token;
        // Another prompt as long takes the VRAM: the first goes down to T1.
        time_first_token(e.engine,
                         random_prompt(n_prompt, n_vocab, static_cast<uint64_t>(n_prompt) + 1));
        disk.wait_idle();
        const int64_t promoted_before = e.engine.stats().host_tier->n_blocks_promoted;
        const FirstToken t1 = time_first_token(e.engine, prompt);
        r.t1_s = t1.seconds;
        r.cached_tokens_t1 = t1.usage.cached_prompt_tokens;
        r.first_token_t1 = t1.token;
        r.t1_blocks_promoted = e.engine.stats().host_tier->n_blocks_promoted - promoted_before;
      } else {
        r.t1_s = hit.seconds;
        r.cached_tokens_t1 = hit.usage.cached_prompt_tokens;
        r.first_token_t1 = hit.token;
      }
    }
    disk.wait_idle();
    {
      log_info("bench tiers: ", n_prompt, "-token prompt in T2, a new runtime and engine");
      EngineOnDisk e(model, runtime_options, fingerprint, disk);
      time_first_token(e.engine, random_prompt(kWarmUpTokens, n_vocab, 1000004));
      disk.wait_idle();
      const int64_t n_loads_before = disk.stats().n_loads;
      const FirstToken t2 = time_first_token(e.engine, prompt);
      r.t2_s = t2.seconds;
      r.cached_tokens_t2 = t2.usage.cached_prompt_tokens;
      r.first_token_t2 = t2.token;
      r.t2_blocks_loaded = disk.stats().n_loads - n_loads_before;
    }
    results.push_back(r);
  }
  return results;
}

nlohmann::ordered_json run_tiers_bench(const TiersBenchOptions& o) {
  std::unique_ptr<LoadedModel> model = LoadedModel::open(o.model_path);
  const ModelConfig& config = model->config();
  const KvLayout layout = kv_layout_for(config, KvLayout::kDefaultBlockTokens, o.kv_dtype);
  const int64_t slot_bytes = round_up(layout.block_bytes(), BlockPool::kSlotAlignment);
  const int64_t n_blocks =
      o.n_blocks > 0 ? o.n_blocks : std::max<int64_t>(1, kDefaultMoveBytes / slot_bytes);

  std::vector<std::string> notes;
  std::vector<int64_t> prompt_tokens;
  for (const int64_t requested : o.prompt_tokens) {
    const int64_t n = std::min(requested, config.context_length - kTtftMaxTokens);
    if (n != requested) {
      notes.push_back(str_cat("prompt_tokens ", requested, " clipped to ", n,
                              ": the model's context is ", config.context_length, " tokens"));
    }
    if (n >= 1 && std::ranges::find(prompt_tokens, n) == prompt_tokens.end())
      prompt_tokens.push_back(n);
  }

  const ScratchDir scratch(o.cache_dir);
  const TierMoveResult moves = measure_tier_moves(
      {.dir = scratch.path() / "move", .block_bytes = layout.block_bytes(),
       .block_tokens = layout.block_tokens, .n_blocks = n_blocks});
  std::optional<DeviceMoveResult> device_moves;
  if (o.backend != BackendChoice::kCpu)
    device_moves = measure_device_moves(*model, o.kv_dtype, n_blocks);
  const std::vector<TierTtftResult> ttft = measure_tier_ttft(
      *model, {.dir = scratch.path() / "ttft", .prompt_tokens = prompt_tokens,
               .n_threads = o.n_threads, .kv_dtype = o.kv_dtype,
               .backend = o.backend == BackendChoice::kAuto && !device_moves ? BackendChoice::kCpu
                                                                              : o.backend});
  const std::string filesystem = filesystem_name(scratch.path());
  if (filesystem == "tmpfs")
    notes.push_back("the cache folder is on tmpfs: T2 is RAM here, not a disk");
  if (!moves.direct_io) {
    notes.push_back(
        "the filesystem refused O_DIRECT: buffered I/O, page cache dropped after each write");
  }
  notes.push_back(
      "cold runs write their blocks through to disk, as a server with --cache-dir does");

  nlohmann::ordered_json out;
  out["bench"] = "tiers";
  out["model"] = o.model_path;
  out["arch"] = architecture_name(config.arch);
  out["context_length"] = config.context_length;
  out["backend"] = ttft.empty() ? "" : ttft.front().backend;
  out["threads"] = ttft.empty() ? o.n_threads : ttft.front().n_threads;
  out["kv_type"] = o.kv_dtype == WeightType::kF32 ? "f32" : "f16";
  out["cache_dir"] = scratch.path().parent_path().string();
  out["filesystem"] = filesystem;
  out["direct_io"] = moves.direct_io;
  out["block_tokens"] = layout.block_tokens;
  out["block_bytes"] = layout.block_bytes();
  out["slot_bytes"] = moves.slot_bytes;
  out["move"] = move_json(moves);
  out["ttft"] = nlohmann::ordered_json::array();
  for (const TierTtftResult& r : ttft) out["ttft"].push_back(ttft_json(r));
  if (device_moves) {
    out["t0"] = device_move_json(*device_moves);
  } else {
    out["t0"] = "not measured: no GPU here (the CPU backend computes in T1)";
  }
  out["notes"] = notes;
  out["ceiling"] =
      "moves: plain O_DIRECT pwrite+fdatasync and pread of the same bytes in the same folder, one "
      "slot-sized chunk at a time (write_ratio, read_ratio) and in 1 MiB chunks "
      "(*_ratio_to_large), "
      "measured in this run; t1_to_t2 includes the XXH3 checksum, io_uring writes, fdatasync and "
      "the "
      "SQLite commit, t2_to_t1 the io_uring reads and checksum checks; store_* is the DiskStore "
      "alone. "
      "ttft: the cold run's prefill (cold_prefill_tok_s); t*_speedup is cold_s over t*_s. "
      "t0 (GPU): one cudaMemcpyAsync per block on the copy stream against one plain cudaMemcpy of "
      "the same bytes from pinned memory, each way, measured in this run";
  return out;
}

}  // namespace strata
