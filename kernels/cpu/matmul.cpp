// matmul(): activations converted once per call, then output rows split into
// chunks that the pool's threads claim one at a time.
//
// Memory traffic, the cost that matters: each task walks a chunk of weight
// rows; for each row it runs over a tile of tokens, so the row is fetched
// from memory once and re-read from L1 for the tile's other tokens. With more
// tokens than one tile, the chunk (sized to stay in L2) is walked once per
// tile, so weights still come from memory once per call.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "common/check.h"
#include "common/thread_pool.h"
#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/vec_dot.h"

namespace strata {
namespace {

// Weight bytes per chunk: small enough to stay in L2 (>= 256 KiB on current
// x86 cores) beside an activation tile, so tiles after the first re-read it
// from cache.
constexpr size_t kChunkWeightBytes = size_t{128} << 10;
// Activation bytes per token tile: re-read once per weight row, from L2.
constexpr size_t kTileActivationBytes = size_t{128} << 10;
// Chunks per thread at least, so threads that finish early take more work.
constexpr int64_t kMinChunksPerThread = 4;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Asks for the next weight row while the current one is dotted. The hardware
// prefetchers stop at 4 KiB page boundaries, which rows cross; measured on
// one core streaming from RAM (Sapphire Rapids VM): +6..17% for Q8_0, Q4_K,
// Q6_K, F32.
void prefetch_row(const std::byte* row, size_t n_bytes) {
  constexpr size_t kCacheLineBytes = 64;
  for (size_t at = 0; at < n_bytes; at += kCacheLineBytes) __builtin_prefetch(row + at);
}

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto a_begin = reinterpret_cast<uintptr_t>(a), b_begin = reinterpret_cast<uintptr_t>(b);
  return a_begin < b_begin + b_bytes && b_begin < a_begin + a_bytes;
}

// Quantizes token rows of x into `out`; read-only while tasks run. (Tasks
// capture a pointer to a job, which keeps std::function from allocating.)
struct QuantizeJob {
  ActivationFormat format;
  std::span<const float> x;  // n_tokens x row_length
  size_t row_length;
  std::span<std::byte> out;  // n_tokens x out_row_bytes
  size_t out_row_bytes;

  void run_token(int64_t t) const {
    const auto token = static_cast<size_t>(t);
    quantize_activation_row(format, x.subspan(token * row_length, row_length),
                            out.subspan(token * out_row_bytes, out_row_bytes));
  }
};

// Everything one call's dot products share; read-only while tasks run.
struct MatmulJob {
  VecDotFn dot;
  const std::byte* weights;     // n_rows x weight_row_bytes
  size_t weight_row_bytes;
  const std::byte* activations;  // n_tokens x activation_row_bytes
  size_t activation_row_bytes;
  int64_t row_length;
  int64_t n_rows;
  int64_t n_tokens;
  int64_t chunk_rows;   // weight rows per task (the last chunk may be shorter)
  int64_t tile_tokens;  // tokens per tile
  float* y;             // n_tokens x n_rows

  void run_chunk(int64_t chunk) const {
    const int64_t row_begin = chunk * chunk_rows;
    const int64_t row_end = std::min(n_rows, row_begin + chunk_rows);
    for (int64_t tile_begin = 0; tile_begin < n_tokens; tile_begin += tile_tokens) {
      const int64_t tile_end = std::min(n_tokens, tile_begin + tile_tokens);
      for (int64_t r = row_begin; r < row_end; ++r) {
        const std::byte* weight_row = weights + static_cast<size_t>(r) * weight_row_bytes;
        if (r + 1 < row_end) prefetch_row(weight_row + weight_row_bytes, weight_row_bytes);
        for (int64_t t = tile_begin; t < tile_end; ++t) {
          y[t * n_rows + r] = dot(row_length, weight_row,
                                  activations + static_cast<size_t>(t) * activation_row_bytes);
        }
      }
    }
  }
};

// Checks every shape matmul() relies on; returns the bytes of one weight row.
size_t checked_weight_row_bytes(const WeightMatrix& w, std::span<const float> x, int64_t n_tokens,
                                std::span<const float> y) {
  STRATA_CHECK(w.n_rows >= 0 && w.row_length >= 0 && n_tokens >= 0, "negative matmul shape");
  const ActivationFormat format = activation_format(w.type);  // aborts on unsupported types
  const std::optional<uint64_t> row_bytes =
      weight_bytes(w.type, static_cast<uint64_t>(w.row_length));
  STRATA_CHECK(row_bytes.has_value() && w.row_length % activation_block_elems(format) == 0,
               "row_length ", w.row_length, " is not a whole number of ", weight_type_name(w.type),
               " blocks");
  STRATA_CHECK(x.size() == static_cast<size_t>(n_tokens * w.row_length), "x has ", x.size(),
               " floats, want ", n_tokens, " x ", w.row_length);
  STRATA_CHECK(y.size() == static_cast<size_t>(n_tokens * w.n_rows), "y has ", y.size(),
               " floats, want ", n_tokens, " x ", w.n_rows);
  STRATA_CHECK(w.data != nullptr || w.n_rows == 0 || w.row_length == 0, "null weights");
  STRATA_CHECK(!overlaps(x.data(), x.size_bytes(), y.data(), y.size_bytes()), "x and y overlap");
  return static_cast<size_t>(*row_bytes);
}

// The activation rows the dot products read: x itself for f32, else x
// quantized into `storage`, one row per token, spread over the pool.
const std::byte* prepare_activations(ActivationFormat format, std::span<const float> x,
                                     int64_t n_tokens, int64_t row_length, ThreadPool& pool,
                                     std::vector<std::byte>& storage) {
  if (format == ActivationFormat::kF32) return reinterpret_cast<const std::byte*>(x.data());
  // operator new aligns the buffer, and a Q8_K row is 292 * k bytes, so every
  // row is 4-byte aligned as BlockQ8K needs.
  const size_t row_bytes = activation_row_bytes(format, row_length);
  storage.resize(static_cast<size_t>(n_tokens) * row_bytes);
  const QuantizeJob job = {
      .format = format,
      .x = x,
      .row_length = static_cast<size_t>(row_length),
      .out = storage,
      .out_row_bytes = row_bytes,
  };
  pool.parallel_for(n_tokens, [&job](int64_t t) { job.run_token(t); });
  return storage.data();
}

}  // namespace

void matmul(const WeightMatrix& w, std::span<const float> x, int64_t n_tokens,
            std::span<float> y, ThreadPool& pool) {
  matmul(w, x, n_tokens, y, pool, selected_cpu_simd());
}

void matmul(const WeightMatrix& w, std::span<const float> x, int64_t n_tokens,
            std::span<float> y, ThreadPool& pool, CpuSimd simd) {
  const size_t weight_row_bytes = checked_weight_row_bytes(w, x, n_tokens, y);
  if (y.empty()) return;
  if (w.row_length == 0) {
    std::fill(y.begin(), y.end(), 0.0f);
    return;
  }

  const ActivationFormat format = activation_format(w.type);
  std::vector<std::byte> quantized;
  const std::byte* activations =
      prepare_activations(format, x, n_tokens, w.row_length, pool, quantized);
  const size_t bytes_per_activation_row = activation_row_bytes(format, w.row_length);

  const int64_t rows_for_cache =
      std::max<int64_t>(1, static_cast<int64_t>(kChunkWeightBytes / weight_row_bytes));
  const int64_t rows_for_balance =
      std::max<int64_t>(1, ceil_div(w.n_rows, kMinChunksPerThread * pool.n_threads()));
  const MatmulJob job = {
      .dot = vec_dot_kernel(w.type, simd),
      .weights = w.data,
      .weight_row_bytes = weight_row_bytes,
      .activations = activations,
      .activation_row_bytes = bytes_per_activation_row,
      .row_length = w.row_length,
      .n_rows = w.n_rows,
      .n_tokens = n_tokens,
      .chunk_rows = std::min(rows_for_cache, rows_for_balance),
      .tile_tokens = std::clamp<int64_t>(
          static_cast<int64_t>(kTileActivationBytes / bytes_per_activation_row), 1, n_tokens),
      .y = y.data(),
  };
  pool.parallel_for(ceil_div(w.n_rows, job.chunk_rows),
                    [&job](int64_t chunk) { job.run_chunk(chunk); });
}

}  // namespace strata
