// Encoders of the 32-element block types, reproducing ggml's reference
// quantizers (quantize_row_q8_0_ref, quantize_row_q4_0_ref) exactly, so files
// we write hold the same bytes llama.cpp would.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/check.h"
#include "kernels/cpu/quant_rows.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

void check_sizes(size_t n_values, size_t n_blocks) {
  STRATA_CHECK(n_values == n_blocks * kBlockElems0, n_values, " values into ", n_blocks,
               " blocks of ", kBlockElems0);
}

}  // namespace

void quantize_q8_0(std::span<const float> values, std::span<BlockQ8_0> blocks) {
  check_sizes(values.size(), blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* x = values.data() + kBlockElems0 * b;
    float amax = 0;
    for (int i = 0; i < kBlockElems0; ++i) amax = std::max(amax, std::fabs(x[i]));
    // The scale maps the largest magnitude to 127. Quants are rounded against
    // the unrounded scale (as ggml does), halves away from zero (roundf).
    const float d = amax / 127.0f;
    const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = fp32_to_fp16(d);
    for (int i = 0; i < kBlockElems0; ++i) {
      blocks[b].qs[i] = static_cast<int8_t>(std::round(x[i] * inv_d));
    }
  }
}

void quantize_q4_0(std::span<const float> values, std::span<BlockQ4_0> blocks) {
  check_sizes(values.size(), blocks.size());
  constexpr int kHalf = kBlockElems0 / 2;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* x = values.data() + kBlockElems0 * b;
    // The value of largest magnitude (first one on ties), with its sign: it
    // maps to level 0, i.e. -8, the side with the extra level.
    float amax = 0, max = 0;
    for (int i = 0; i < kBlockElems0; ++i) {
      if (std::fabs(x[i]) > amax) {
        amax = std::fabs(x[i]);
        max = x[i];
      }
    }
    const float d = max / -8.0f;
    const float inv_d = d != 0.0f ? 1.0f / d : 0.0f;
    blocks[b].d = fp32_to_fp16(d);
    // level = truncate(x / d + 8.5), i.e. round half up, capped at 15 (x / d
    // is in -8..8, so only +8 needs the cap).
    auto level = [&](float v) {
      return std::min(15, static_cast<int>(static_cast<int8_t>(v * inv_d + 8.5f)));
    };
    for (int i = 0; i < kHalf; ++i) {
      blocks[b].qs[i] = static_cast<uint8_t>(level(x[i]) | (level(x[i + kHalf]) << 4));
    }
  }
}

}  // namespace strata
