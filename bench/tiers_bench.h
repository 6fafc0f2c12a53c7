// strata bench tiers: what the KV cache's tiers cost, next to ceilings
// measured in the same run on the same disk, as one JSON object.
//
//  - Moves: N random blocks of the model's real KV block size in a BlockPool
//    (T1) go to disk (T2) and back, through the DiskWorker (the real path:
//    XXH3 checksum, io_uring with O_DIRECT, fdatasync, SQLite commit; loads
//    verify the checksum) and through the DiskStore alone (io_uring,
//    O_DIRECT, fdatasync). The ceiling: plain O_DIRECT pwrite + fdatasync of
//    the same bytes into one file in the same folder, then pread of it, one
//    slot-sized chunk at a time; and again in 1 MiB chunks, the device's
//    sequential rate.
//  - On a GPU, T0 (VRAM) <-> T1 (pinned host) moves: N blocks up and down
//    through the runtime's copy stream (one cudaMemcpyAsync per block), next
//    to the ceiling of one plain cudaMemcpy of the same bytes each way.
//  - Time to first token of a prompt whose prefix is nowhere (cold: a fresh
//    engine, an empty cache), in the tier the backend computes in (the same
//    engine, the same prompt again: T1 on the CPU, T0 on a GPU), on a GPU
//    also in T1 only (another prompt pushed it out of a VRAM arena sized for
//    one), or only in T2 (a new runtime and engine over the same disk
//    folder, as after a restart); greedy, one token. The cold run's prefill
//    rate is the reference the cached runs are compared to.
//
// Threads: every function blocks the calling thread; the engines and the
// tiering threads they start are joined before it returns.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/model_runtime.h"
#include "kernels/weight_type.h"
#include "model/loaded_model.h"
#include "model/tokenizer/vocab.h"

namespace strata {

// --- T1 <-> T2 moves ---------------------------------------------------------

struct TierMoveOptions {
  std::filesystem::path dir;  // folder on the disk measured; created if missing, left empty
  int64_t block_bytes = 0;    // one KV block (KvLayout::block_bytes()), > 0
  int64_t block_tokens = 16;  // tokens indexed with each block
  int64_t n_blocks = 0;       // blocks moved each way, > 0
  int32_t queue_depth = 64;   // io_uring depth of the DiskWorker and the DiskStore
};

// Seconds of each phase; each moves n_blocks * slot_bytes bytes (the DiskWorker
// counts block_bytes, but moves whole slots too).
struct TierMoveResult {
  int64_t slot_bytes = 0;  // block_bytes rounded up to 4096
  int64_t n_blocks = 0;
  int64_t bytes = 0;       // n_blocks * slot_bytes, each way
  bool direct_io = false;  // every file opened with O_DIRECT (false: the filesystem refused it)
  double tier_write_s = 0;   // DiskWorker: persist all, until every row is committed
  double tier_read_s = 0;    // DiskWorker: load all, until every checksum is verified
  double store_write_s = 0;  // DiskStore: allocate, write all, sync
  double store_read_s = 0;   // DiskStore: read all
  double plain_write_s = 0;  // pwrite slot by slot + fdatasync
  double plain_read_s = 0;   // pread slot by slot
  int64_t large_chunk_bytes = 0;   // the large-chunk ceiling's pwrite / pread size
  double plain_large_write_s = 0;  // the same bytes in large chunks + fdatasync
  double plain_large_read_s = 0;
};

// Throws std::runtime_error when a move fails (I/O error, full disk).
TierMoveResult measure_tier_moves(const TierMoveOptions& options);

// --- T0 <-> T1 moves (GPU) -------------------------------------------------------

struct DeviceMoveResult {
  std::string device{};  // the runtime's description (it says whether T1 is pinned)
  int64_t n_blocks = 0;
  int64_t bytes = 0;          // n_blocks * block_bytes, each way
  double to_device_s = 0;     // T1 -> T0 through the copy stream
  double to_host_s = 0;       // T0 -> T1
  double plain_to_device_gb_per_s = 0;  // one pinned cudaMemcpy of `bytes`
  double plain_to_host_gb_per_s = 0;
};

// nullopt when the model does not run on a GPU here.
std::optional<DeviceMoveResult> measure_device_moves(const LoadedModel& model, WeightType kv_dtype,
                                                     int64_t n_blocks);

// --- time to first token by where the prefix is ----------------------------------

struct TierTtftOptions {
  std::filesystem::path dir;          // for the disk tiers (a ttft-N folder each, left there)
  std::vector<int64_t> prompt_tokens; // each <= context length - 1, >= 1
  int n_threads = 0;                  // compute threads; 0: every core
  WeightType kv_dtype = WeightType::kF16;
  BackendChoice backend = BackendChoice::kCpu;
};

struct TierTtftResult {
  int64_t prompt_tokens = 0;
  std::string backend{};  // the runtime's description
  bool on_gpu = false;  // t0_* measured
  int n_threads = 0;    // the CPU's
  double cold_s = 0;  // submit to first token; nothing cached
  double t0_s = 0;    // GPU: the prefix in VRAM
  double t1_s = 0;    // the prefix in host memory
  double t2_s = 0;    // the prefix on disk only, loaded by the new engine
  int64_t cached_tokens_cold = 0;  // usage.cached_prompt_tokens of each run
  int64_t cached_tokens_t0 = 0;
  int64_t cached_tokens_t1 = 0;
  int64_t cached_tokens_t2 = 0;
  int64_t t1_blocks_promoted = 0;  // GPU: T1 -> T0 copies of the T1 run
  int64_t t2_blocks_loaded = 0;  // verified loads of the T2 run
  TokenId first_token_cold = -1;  // greedy: all must agree
  TokenId first_token_t0 = -1;
  TokenId first_token_t1 = -1;
  TokenId first_token_t2 = -1;
};

std::vector<TierTtftResult> measure_tier_ttft(const LoadedModel& model,
                                              const TierTtftOptions& options);

// --- the whole benchmark -----------------------------------------------------------

struct TiersBenchOptions {
  std::string model_path;
  // A fresh subfolder of it is used and removed afterwards; empty: the
  // system's temporary folder.
  std::filesystem::path cache_dir;
  int64_t n_blocks = 0;  // 0: ~256 MiB of blocks
  std::vector<int64_t> prompt_tokens{4096, 8192};  // clipped to the context, with a note
  int n_threads = 0;
  WeightType kv_dtype = WeightType::kF16;
  BackendChoice backend = BackendChoice::kAuto;  // of the TTFT runs
};

// Runs every part; progress lines go to stderr (log_info). The JSON object:
// the move figures in GB/s with their ratios to the plain O_DIRECT ceiling,
// one TTFT entry per prompt length with speedups over cold, the notes, and
// the ceiling stated in words.
nlohmann::ordered_json run_tiers_bench(const TiersBenchOptions& options);

}  // namespace strata
