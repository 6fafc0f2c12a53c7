// matmul_bench: matmul() throughput per weight type on a 2048 x 8192 matrix
// (a 1B-class model's FFN projection), on every CPU in the affinity mask.
//
//   decode: 1 token, the memory-bound case: a pass runs one matmul per copy of
//           the matrix in a 1 GiB buffer of copies, several times the
//           last-level cache (as decode walks a model's layers), so the
//           weights come from RAM.
//   batch:  32 tokens (a prefill chunk), the compute-bound case: a pass runs
//           one matmul on each of the first kBatchCopies copies.
// Ceiling: a multi-threaded read (vectorized memchr) of a 1 GiB buffer on the
// same pool (each task reads whole chunks, as matmul does), measured next to
// each type's runs, because on a shared machine the bandwidth we get drifts.
// Each figure is the best of kRepeats timed passes after one warm-up pass.
//
// Prints one JSON object:
//   {"bench": "matmul", "threads": N, "simd": "avx2", "rows": 2048, "row_length": 8192,
//    "stream_bytes": ..., "read_gb_per_s": <best of all ceiling runs>,
//    "types": [{"type": "q4_k", "matrix_bytes": ..., "copies": ..., "read_gb_per_s": ...,
//               "decode": {"tokens": 1, "us_per_matmul": ..., "gb_per_s": ...,
//                          "ratio_to_read": ..., "gmac_per_s": ..., "cpu_share": ...},
//               "batch": {"tokens": 32, ...}}, ...]}
// gb_per_s counts weight bytes read (1e9 bytes/s); ratio_to_read = gb_per_s /
// that type's read_gb_per_s; gmac_per_s counts multiply-adds (rows x
// row_length x tokens); cpu_share = process CPU time / (wall time x threads)
// over the timed passes: well under 1 means other processes took the cores
// (spinning workers count as busy, so 1 does not prove the work was useful).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench/memory_read_rate.h"
#include "common/thread_pool.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/weight_type.h"

namespace strata {
namespace {

constexpr int64_t kRows = 2048;
constexpr int64_t kRowLength = 8192;
// Bytes of matrix copies walked per pass: several times the 300 MiB L3 of
// the largest server parts, so weights stream from RAM.
constexpr size_t kStreamBytes = size_t{1} << 30;
constexpr int64_t kTileRows = 64;  // rows quantized once, then repeated
constexpr int64_t kBatchTokens = 32;
constexpr size_t kBatchCopies = 8;  // compute-bound: a few matrices suffice
constexpr int kRepeats = 3;

constexpr WeightType kTypes[] = {WeightType::kF32,  WeightType::kF16,  WeightType::kBF16,
                                 WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_K,
                                 WeightType::kQ5_K, WeightType::kQ6_K};

using Clock = std::chrono::steady_clock;

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

struct Timing {
  double best_seconds;  // fastest timed pass
  double cpu_share;     // process CPU time / (wall x threads) over the timed passes
};

template <typename Pass>
Timing time_passes(int n_threads, Pass pass) {
  pass();
  double best = 1e30, wall = 0;
  const double cpu_start = process_cpu_seconds();
  for (int i = 0; i < kRepeats; ++i) {
    const Clock::time_point start = Clock::now();
    pass();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, seconds);
    wall += seconds;
  }
  return {best, (process_cpu_seconds() - cpu_start) / (wall * n_threads)};
}

// The read ceiling on the same pool (bench/memory_read_rate.h).
double read_gb_per_s(std::span<const uint8_t> buffer, ThreadPool& pool) {
  return measure_read_gb_per_s(buffer, pool, kRepeats);
}

// `n_copies` back-to-back copies of one kRows x kRowLength matrix of `type`:
// a kTileRows tile of normal(0, 0.02) values quantized once and repeated
// (speed does not depend on the values; quantizing 1 GiB of K-quants would
// take minutes).
std::vector<std::byte> make_copies(WeightType type, size_t matrix_bytes, size_t n_copies) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> tile_values(static_cast<size_t>(kTileRows * kRowLength));
  for (float& v : tile_values) v = normal(rng);
  const std::vector<std::byte> tile = quantize(type, tile_values);
  std::vector<std::byte> bytes(matrix_bytes * n_copies);
  for (size_t at = 0; at < bytes.size(); at += tile.size()) {
    std::memcpy(bytes.data() + at, tile.data(), std::min(tile.size(), bytes.size() - at));
  }
  return bytes;
}

struct Rate {
  double us_per_matmul;
  double gb_per_s;
  double gmac_per_s;
  double cpu_share;
};

// One pass = one matmul of n_tokens tokens per copy.
Rate bench_matmuls(WeightType type, std::span<const std::byte> copies, size_t matrix_bytes,
                   int64_t n_tokens, ThreadPool& pool, float& sink) {
  const size_t n_copies = copies.size() / matrix_bytes;
  std::vector<float> x(static_cast<size_t>(n_tokens * kRowLength));
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  std::vector<float> y(static_cast<size_t>(n_tokens * kRows));
  const Timing timing = time_passes(pool.n_threads(), [&] {
    for (size_t c = 0; c < n_copies; ++c) {
      const WeightMatrix w = {.type = type, .data = copies.data() + c * matrix_bytes,
                              .n_rows = kRows, .row_length = kRowLength};
      matmul(w, x, n_tokens, y, pool);
      sink += y[c % y.size()];  // keeps every call's output observable
    }
  });
  const double per_matmul = timing.best_seconds / static_cast<double>(n_copies);
  return {per_matmul * 1e6, static_cast<double>(matrix_bytes) / per_matmul / 1e9,
          static_cast<double>(kRows * kRowLength * n_tokens) / per_matmul / 1e9, timing.cpu_share};
}

void print_rate(const char* name, int64_t n_tokens, const Rate& rate, double read_rate) {
  std::printf(
      "\"%s\": {\"tokens\": %lld, \"us_per_matmul\": %.1f, \"gb_per_s\": %.3f, "
      "\"ratio_to_read\": %.3f, \"gmac_per_s\": %.2f, \"cpu_share\": %.2f}",
      name, static_cast<long long>(n_tokens), rate.us_per_matmul, rate.gb_per_s,
      rate.gb_per_s / read_rate, rate.gmac_per_s, rate.cpu_share);
}

}  // namespace
}  // namespace strata

int main() {
  using namespace strata;
  ThreadPool pool;
  std::vector<uint8_t> read_buffer(kStreamBytes);
  for (size_t i = 0; i < read_buffer.size(); ++i) {
    read_buffer[i] = static_cast<uint8_t>(i % 0xff);  // never 0xff, the byte the scan seeks
  }
  float sink = 0;

  struct TypeResult {
    WeightType type;
    size_t matrix_bytes, n_copies;
    double read_rate;
    Rate decode, batch;
  };
  std::vector<TypeResult> results;
  double best_read_rate = 0;
  for (WeightType type : kTypes) {
    const size_t matrix_bytes = weight_bytes(type, kRows * kRowLength).value();
    const size_t n_copies = std::max<size_t>(1, kStreamBytes / matrix_bytes);
    const std::vector<std::byte> copies = make_copies(type, matrix_bytes, n_copies);
    const std::span<const std::byte> all(copies);
    TypeResult result{
        .type = type,
        .matrix_bytes = matrix_bytes,
        .n_copies = n_copies,
        .read_rate = read_gb_per_s(read_buffer, pool),
        .decode = bench_matmuls(type, all, matrix_bytes, 1, pool, sink),
        .batch = bench_matmuls(type, all.first(std::min(n_copies, kBatchCopies) * matrix_bytes),
                               matrix_bytes, kBatchTokens, pool, sink)};
    // Again after the decode runs; the better of the two is the ceiling.
    result.read_rate = std::max(result.read_rate, read_gb_per_s(read_buffer, pool));
    best_read_rate = std::max(best_read_rate, result.read_rate);
    results.push_back(result);
  }

  std::printf(
      "{\"bench\": \"matmul\", \"threads\": %d, \"simd\": \"%s\", \"rows\": %lld, "
      "\"row_length\": %lld, \"stream_bytes\": %zu, \"read_gb_per_s\": %.3f,\n \"types\": [\n",
      pool.n_threads(), std::string(cpu_simd_name(selected_cpu_simd())).c_str(),
      static_cast<long long>(kRows), static_cast<long long>(kRowLength), kStreamBytes,
      best_read_rate);
  for (size_t i = 0; i < results.size(); ++i) {
    const TypeResult& r = results[i];
    std::printf(
        "  {\"type\": \"%s\", \"matrix_bytes\": %zu, \"copies\": %zu, \"read_gb_per_s\": %.3f,\n  "
        " ",
        std::string(weight_type_name(r.type)).c_str(), r.matrix_bytes, r.n_copies, r.read_rate);
    print_rate("decode", 1, r.decode, r.read_rate);
    std::printf(",\n   ");
    print_rate("batch", kBatchTokens, r.batch, r.read_rate);
    std::printf("}%s\n", i + 1 < results.size() ? "," : "");
  }
  std::printf(" ]}\n");
  // Sums of sampled outputs go to stderr so no work can be optimized away.
  std::fprintf(stderr, "checksum %g\n", static_cast<double>(sink));
  return 0;
}
