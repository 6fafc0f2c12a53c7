#include "bench/memory_read_rate.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common/thread_pool.h"

namespace strata {
namespace {

// A byte the scan looks for and the caller's buffer should not hold, so
// memchr reads each chunk to its end. glibc's memchr is vectorized for the CPU
// (AVX2 / AVX-512), so the scan outruns memory and measures it, where a plain
// summing loop can be compute-bound.
constexpr int kAbsentByte = 0xff;
constexpr size_t kChunkBytes = size_t{1} << 20;

}  // namespace

double measure_read_gb_per_s(std::span<const uint8_t> buffer, ThreadPool& pool, int repeats) {
  const auto n_chunks = static_cast<int64_t>(buffer.size() / kChunkBytes);
  if (n_chunks == 0) return 0.0;
  std::vector<uint8_t> found(static_cast<size_t>(n_chunks));
  double best_seconds = 1e30;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(n_chunks, [&](int64_t chunk) {
      const uint8_t* bytes = buffer.data() + static_cast<size_t>(chunk) * kChunkBytes;
      found[static_cast<size_t>(chunk)] = std::memchr(bytes, kAbsentByte, kChunkBytes) != nullptr;
    });
    best_seconds =
        std::min(best_seconds,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // Reading `found` keeps the scans from being optimized away.
  volatile uint8_t any = 0;
  for (uint8_t f : found) any = any | f;
  return static_cast<double>(n_chunks) * kChunkBytes / best_seconds / 1e9;
}

}  // namespace strata
