// dequantize(): checks sizes, then hands the bytes to the decoder of their type.
// F32 / F16 / BF16 are decoded here; block types in dequantize_blocks.cpp.
#include <cstdint>
#include <cstring>

#include "common/check.h"
#include "kernels/cpu/quant_rows.h"
#include "kernels/cpu/quantize.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

// memcpy per element: the bytes need not be 2-byte aligned; compiles to a load.
uint16_t load_u16(const std::byte* at) {
  uint16_t bits;
  std::memcpy(&bits, at, sizeof(bits));
  return bits;
}

// Output never overlaps the input (__restrict: no run-time overlap checks).
void dequantize_f16(const std::byte* __restrict in, float* __restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(load_u16(in + 2 * i));
}

void dequantize_bf16(const std::byte* __restrict in, float* __restrict y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(load_u16(in + 2 * i));
}

}  // namespace

void dequantize(WeightType type, std::span<const std::byte> bytes, std::span<float> out) {
  const std::optional<uint64_t> expected_bytes = weight_bytes(type, out.size());
  STRATA_CHECK(expected_bytes.has_value() && *expected_bytes == bytes.size(),
               weight_type_name(type), ": ", bytes.size(), " bytes do not encode ", out.size(),
               " elements");
  switch (type) {
    case WeightType::kF32:
      if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
      return;
    case WeightType::kF16: return dequantize_f16(bytes.data(), out.data(), out.size());
    case WeightType::kBF16: return dequantize_bf16(bytes.data(), out.data(), out.size());
    case WeightType::kQ8_0: return dequantize_q8_0(as_blocks<BlockQ8_0>(bytes), out);
    case WeightType::kQ4_0: return dequantize_q4_0(as_blocks<BlockQ4_0>(bytes), out);
    case WeightType::kQ4_K: return dequantize_q4_k(as_blocks<BlockQ4K>(bytes), out);
    case WeightType::kQ5_K: return dequantize_q5_k(as_blocks<BlockQ5K>(bytes), out);
    case WeightType::kQ6_K: return dequantize_q6_k(as_blocks<BlockQ6K>(bytes), out);
    default: break;
  }
  STRATA_CHECK(false, "dequantize: unsupported weight type ", weight_type_name(type));
}

}  // namespace strata
