#include "kernels/weight_type.h"

#include <array>
#include <cctype>

#include "common/check.h"

namespace strata {
namespace {

using W = WeightType;

// Block sizes follow ggml's block structs (ggml-common.h), e.g. block_q4_K is
// 2 fp16 scales + 12 bytes of packed 6-bit scales + 128 bytes of nibbles.
constexpr std::array kWeightTypes = {
    WeightTypeInfo{W::kF32, "f32", 1, 4, true},
    WeightTypeInfo{W::kF16, "f16", 1, 2, true},
    WeightTypeInfo{W::kQ4_0, "q4_0", 32, 18, true},
    WeightTypeInfo{W::kQ4_1, "q4_1", 32, 20, false},
    WeightTypeInfo{W::kQ5_0, "q5_0", 32, 22, false},
    WeightTypeInfo{W::kQ5_1, "q5_1", 32, 24, false},
    WeightTypeInfo{W::kQ8_0, "q8_0", 32, 34, true},
    WeightTypeInfo{W::kQ8_1, "q8_1", 32, 36, false},
    WeightTypeInfo{W::kQ2_K, "q2_k", 256, 84, false},
    WeightTypeInfo{W::kQ3_K, "q3_k", 256, 110, false},
    WeightTypeInfo{W::kQ4_K, "q4_k", 256, 144, true},
    WeightTypeInfo{W::kQ5_K, "q5_k", 256, 176, true},
    WeightTypeInfo{W::kQ6_K, "q6_k", 256, 210, true},
    WeightTypeInfo{W::kQ8_K, "q8_k", 256, 292, false},
    WeightTypeInfo{W::kIQ2_XXS, "iq2_xxs", 256, 66, false},
    WeightTypeInfo{W::kIQ2_XS, "iq2_xs", 256, 74, false},
    WeightTypeInfo{W::kIQ3_XXS, "iq3_xxs", 256, 98, false},
    WeightTypeInfo{W::kIQ1_S, "iq1_s", 256, 50, false},
    WeightTypeInfo{W::kIQ4_NL, "iq4_nl", 32, 18, false},
    WeightTypeInfo{W::kIQ3_S, "iq3_s", 256, 110, false},
    WeightTypeInfo{W::kIQ2_S, "iq2_s", 256, 82, false},
    WeightTypeInfo{W::kIQ4_XS, "iq4_xs", 256, 136, false},
    WeightTypeInfo{W::kI8, "i8", 1, 1, false},
    WeightTypeInfo{W::kI16, "i16", 1, 2, false},
    WeightTypeInfo{W::kI32, "i32", 1, 4, false},
    WeightTypeInfo{W::kI64, "i64", 1, 8, false},
    WeightTypeInfo{W::kF64, "f64", 1, 8, false},
    WeightTypeInfo{W::kIQ1_M, "iq1_m", 256, 56, false},
    WeightTypeInfo{W::kBF16, "bf16", 1, 2, true},
    WeightTypeInfo{W::kTQ1_0, "tq1_0", 256, 54, false},
    WeightTypeInfo{W::kTQ2_0, "tq2_0", 256, 66, false},
    WeightTypeInfo{W::kMXFP4, "mxfp4", 32, 17, false},
};

}  // namespace

const WeightTypeInfo* find_weight_type(uint32_t ggml_type_id) {
  for (const WeightTypeInfo& info : kWeightTypes) {
    if (static_cast<uint32_t>(info.type) == ggml_type_id) return &info;
  }
  return nullptr;
}

const WeightTypeInfo& weight_type_info(WeightType type) {
  const WeightTypeInfo* info = find_weight_type(static_cast<uint32_t>(type));
  STRATA_CHECK(info != nullptr, "weight type id ", static_cast<uint32_t>(type));
  return *info;
}

std::optional<WeightType> parse_weight_type(std::string_view name) {
  for (const WeightTypeInfo& info : kWeightTypes) {
    if (info.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(name[i])) == info.name[i];
    }
    if (same) return info.type;
  }
  return std::nullopt;
}

std::string_view weight_type_name(WeightType type) { return weight_type_info(type).name; }

std::optional<uint64_t> weight_bytes(WeightType type, uint64_t n_elems) {
  const WeightTypeInfo& info = weight_type_info(type);
  if (n_elems % info.block_elems != 0) return std::nullopt;
  return n_elems / info.block_elems * info.block_bytes;
}

}  // namespace strata
