// dequantize_bench: single-thread dequantize() throughput per weight type.
//
// For each type, ~64 MiB of quantized weights are decoded in rows of
// kRowElems floats into one small output buffer that stays in cache, as a
// matmul that dequantizes a row at a time would. The ceiling, measured in the
// same run, is memcpy of a buffer of the same size (bytes copied per second).
// Each figure is the best of kRepeats timed passes after one warm-up pass.
//
// Prints one JSON object:
//   {"bench": "dequantize", "threads": 1, "buffer_bytes": ..., "row_elems": ...,
//    "memcpy_gb_per_s": ...,
//    "types": [{"type": "q4_k", "bytes": ..., "gb_per_s_in": ..., "gelem_per_s": ...,
//               "ratio_to_memcpy": ...}, ...]}
// gb_per_s_in counts quantized bytes read (1e9 bytes/s); gelem_per_s counts
// floats produced (1e9/s); ratio_to_memcpy = gb_per_s_in / memcpy_gb_per_s.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/cpu/quantize.h"
#include "kernels/weight_type.h"

namespace strata {
namespace {

constexpr size_t kBufferBytes = size_t{64} << 20;  // quantized bytes per type, and the memcpy size
constexpr size_t kRowElems = 16384;                // floats per dequantize call (64 KiB out)
constexpr size_t kTileElems = 64 * kRowElems;      // values quantized once, then repeated
constexpr int kRepeats = 5;

constexpr WeightType kTypes[] = {WeightType::kF32,  WeightType::kF16,  WeightType::kBF16,
                                 WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_K,
                                 WeightType::kQ5_K, WeightType::kQ6_K};

using Clock = std::chrono::steady_clock;

// Best wall time of kRepeats runs of `pass`, after one untimed warm-up run.
template <typename Pass>
double best_seconds(Pass pass) {
  pass();
  double best = 1e30;
  for (int i = 0; i < kRepeats; ++i) {
    const Clock::time_point start = Clock::now();
    pass();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

double memcpy_gb_per_s() {
  std::vector<std::byte> src(kBufferBytes, std::byte{1}), dst(kBufferBytes, std::byte{0});
  const double seconds = best_seconds([&] {
    std::memcpy(dst.data(), src.data(), kBufferBytes);
    // Vary a byte so consecutive copies are not provably identical.
    src[0] = static_cast<std::byte>(static_cast<uint8_t>(dst[kBufferBytes / 2]) + 1);
  });
  return static_cast<double>(kBufferBytes) / seconds / 1e9;
}

// About kBufferBytes of `type`, holding a whole number of rows: one quantized
// tile of normal(0, 0.02) values repeated (decode speed does not depend on
// which values are repeated, and quantizing 64 MiB of K-quants would take seconds).
std::vector<std::byte> make_weights(WeightType type, size_t n_elems) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> tile_values(kTileElems);
  for (float& v : tile_values) v = normal(rng);
  const std::vector<std::byte> tile = quantize(type, tile_values);

  std::vector<std::byte> bytes(weight_bytes(type, n_elems).value());
  for (size_t at = 0; at < bytes.size(); at += tile.size()) {
    std::memcpy(bytes.data() + at, tile.data(), std::min(tile.size(), bytes.size() - at));
  }
  return bytes;
}

struct TypeResult {
  WeightType type;
  size_t bytes;
  double gb_per_s_in;
  double gelem_per_s;
};

TypeResult bench_type(WeightType type, float& sink) {
  const size_t bytes_per_row = weight_bytes(type, kRowElems).value();
  const size_t n_rows = kBufferBytes / bytes_per_row;
  const std::vector<std::byte> weights = make_weights(type, n_rows * kRowElems);
  std::vector<float> row(kRowElems);

  const double seconds = best_seconds([&] {
    const std::span<const std::byte> all(weights);
    for (size_t r = 0; r < n_rows; ++r) {
      dequantize(type, all.subspan(r * bytes_per_row, bytes_per_row), row);
      sink += row[r % kRowElems];  // keeps every call's output observable
    }
  });
  return {type, weights.size(), static_cast<double>(weights.size()) / seconds / 1e9,
          static_cast<double>(n_rows * kRowElems) / seconds / 1e9};
}

}  // namespace
}  // namespace strata

int main() {
  using namespace strata;
  const double memcpy_rate = memcpy_gb_per_s();
  float sink = 0;
  std::vector<TypeResult> results;
  for (WeightType type : kTypes) results.push_back(bench_type(type, sink));

  std::printf(
      "{\"bench\": \"dequantize\", \"threads\": 1, \"buffer_bytes\": %zu, \"row_elems\": %zu,\n",
      kBufferBytes, kRowElems);
  std::printf(" \"memcpy_gb_per_s\": %.3f,\n \"types\": [\n", memcpy_rate);
  for (size_t i = 0; i < results.size(); ++i) {
    const TypeResult& r = results[i];
    std::printf(
        "  {\"type\": \"%s\", \"bytes\": %zu, \"gb_per_s_in\": %.3f, \"gelem_per_s\": %.3f, "
        "\"ratio_to_memcpy\": %.3f}%s\n",
        std::string(weight_type_name(r.type)).c_str(), r.bytes, r.gb_per_s_in, r.gelem_per_s,
        r.gb_per_s_in / memcpy_rate, i + 1 < results.size() ? "," : "");
  }
  std::printf(" ]}\n");
  // The sum of sampled outputs goes to stderr so no decode can be optimized away.
  std::fprintf(stderr, "checksum %g\n", static_cast<double>(sink));
  return 0;
}
