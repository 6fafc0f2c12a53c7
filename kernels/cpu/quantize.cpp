// quantize(): sizes the output, then hands the values to the encoder of the
// type. F32 / F16 / BF16 are encoded here; block types in quantize_*.cpp.
#include "kernels/cpu/quantize.h"

#include <cstdint>
#include <cstring>

#include "common/check.h"
#include "kernels/cpu/quant_rows.h"
#include "kernels/fp16.h"

namespace strata {
namespace {

template <uint16_t (*kEncode)(float)>
void encode_16bit(std::span<const float> values, std::span<std::byte> out) {
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t bits = kEncode(values[i]);
    std::memcpy(out.data() + 2 * i, &bits, sizeof(bits));
  }
}

}  // namespace

std::vector<std::byte> quantize(WeightType type, std::span<const float> values) {
  const std::optional<uint64_t> n_bytes = weight_bytes(type, values.size());
  STRATA_CHECK(n_bytes.has_value(), weight_type_name(type), ": ", values.size(),
               " values are not a whole number of blocks");
  std::vector<std::byte> bytes(*n_bytes);
  const std::span<std::byte> out(bytes);
  switch (type) {
    case WeightType::kF32:
      if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
      return bytes;
    case WeightType::kF16: encode_16bit<fp32_to_fp16>(values, out); return bytes;
    case WeightType::kBF16: encode_16bit<fp32_to_bf16>(values, out); return bytes;
    case WeightType::kQ8_0: quantize_q8_0(values, as_blocks<BlockQ8_0>(out)); return bytes;
    case WeightType::kQ4_0: quantize_q4_0(values, as_blocks<BlockQ4_0>(out)); return bytes;
    case WeightType::kQ4_K: quantize_q4_k(values, as_blocks<BlockQ4K>(out)); return bytes;
    case WeightType::kQ5_K: quantize_q5_k(values, as_blocks<BlockQ5K>(out)); return bytes;
    case WeightType::kQ6_K: quantize_q6_k(values, as_blocks<BlockQ6K>(out)); return bytes;
    default: break;
  }
  STRATA_CHECK(false, "quantize: unsupported weight type ", weight_type_name(type));
  return {};
}

}  // namespace strata
