// Weight (tensor element) types as GGUF numbers them: the values are ggml's
// type ids, so a WeightType read from a file is the file's own number.
// Strata computes with F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K and Q6_K; the
// other ids are known by name and size so that files holding them get a clear
// "unsupported" error instead of a wrong byte count.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

enum class WeightType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct WeightTypeInfo {
  WeightType type;
  std::string_view name;  // lower case, as on the command line: "q4_k"
  uint32_t block_elems;   // elements per block (1 for plain types)
  uint32_t block_bytes;   // bytes per block
  bool supported;         // Strata can dequantize and compute with it
};

// nullptr for an id ggml does not define.
const WeightTypeInfo* find_weight_type(uint32_t ggml_type_id);
const WeightTypeInfo& weight_type_info(WeightType type);
// Accepts "q4_k" or "Q4_K"; nullopt for unknown names.
std::optional<WeightType> parse_weight_type(std::string_view name);
std::string_view weight_type_name(WeightType type);

// Bytes of `n_elems` elements; nullopt when n_elems is not a whole number of blocks.
std::optional<uint64_t> weight_bytes(WeightType type, uint64_t n_elems);

}  // namespace strata
