// Block layouts of the quantized weight types, byte for byte as ggml defines
// them (ggml-common.h block_q8_0, block_q4_0, block_q4_K, block_q5_K,
// block_q6_K), so GGUF tensor data can be read in place. Scales are fp16 bit
// patterns (kernels/fp16.h). Packed: a block may sit at any byte offset.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/check.h"

namespace strata {

inline constexpr int kBlockElems0 = 32;  // elements per Q8_0 / Q4_0 block
inline constexpr int kBlockElemsK = 256;  // elements per K-quant super-block
inline constexpr int kScaleBytesK4 = 12;  // packed 6-bit scales+mins of Q4_K / Q5_K

// Q8_0: x[i] = d * qs[i].
struct [[gnu::packed]] BlockQ8_0 {
  uint16_t d;                // fp16 scale
  int8_t qs[kBlockElems0];  // (32) quants, -127..127 from our quantizer
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: x[i] = d * (q[i] - 8), q in 0..15. Element i < 16 is the low nibble of
// qs[i]; element i >= 16 is the high nibble of qs[i - 16].
struct [[gnu::packed]] BlockQ4_0 {
  uint16_t d;                    // fp16 scale
  uint8_t qs[kBlockElems0 / 2];  // (16) two nibbles each
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_K: 8 sub-blocks of 32 elements. Element e of sub-block j = e / 32:
//   x = d * scale[j] * q - dmin * min[j],  q in 0..15,
// scale[j], min[j] 6-bit, packed into `scales` (see unpack_k4_scale_min).
// qs holds 4 chunks of 32 bytes; chunk c covers elements 64c..64c+63: the low
// nibbles are elements 64c..64c+31 (sub-block 2c), the high nibbles
// 64c+32..64c+63 (sub-block 2c+1).
struct [[gnu::packed]] BlockQ4K {
  uint16_t d;                      // fp16 super-block scale of the 6-bit scales
  uint16_t dmin;                   // fp16 super-block scale of the 6-bit mins
  uint8_t scales[kScaleBytesK4];  // 8 scales + 8 mins, 6 bits each
  uint8_t qs[kBlockElemsK / 2];   // (128) 4-bit quants
};
static_assert(sizeof(BlockQ4K) == 144);

// Q5_K: as Q4_K with q in 0..31. The low 4 bits are in qs exactly as Q4_K;
// the fifth bit of element 64c + l (l < 32) is bit 2c of qh[l], and of element
// 64c + 32 + l is bit 2c+1 of qh[l].
struct [[gnu::packed]] BlockQ5K {
  uint16_t d;                      // fp16 super-block scale of the 6-bit scales
  uint16_t dmin;                   // fp16 super-block scale of the 6-bit mins
  uint8_t scales[kScaleBytesK4];  // 8 scales + 8 mins, 6 bits each
  uint8_t qh[kBlockElemsK / 8];   // (32) fifth bits
  uint8_t qs[kBlockElemsK / 2];   // (128) low 4 bits
};
static_assert(sizeof(BlockQ5K) == 176);

// Q6_K: 16 sub-blocks of 16 elements; x = d * scales[e / 16] * (q - 32), q in
// 0..63. Two halves of 128 elements; in half h, with r = e - 128h, k = r / 32,
// l = r % 32: the low 4 bits are in ql[64h + l + 32 * (k & 1)] (low nibble for
// k < 2, high nibble for k >= 2) and the top 2 bits are bits 2k..2k+1 of
// qh[32h + l].
struct [[gnu::packed]] BlockQ6K {
  uint8_t ql[kBlockElemsK / 2];      // (128) low 4 bits
  uint8_t qh[kBlockElemsK / 4];      // (64) high 2 bits
  int8_t scales[kBlockElemsK / 16];  // (16) 8-bit signed sub-block scales
  uint16_t d;                        // fp16 super-block scale
};
static_assert(sizeof(BlockQ6K) == 210);

// The 6-bit (scale, min) of sub-block j (0..7) of a Q4_K / Q5_K block:
//   j < 4:  scale = scales[j] & 63,  min = scales[j + 4] & 63
//   j >= 4: the low 4 bits come from scales[j + 4] (scale: low nibble, min:
//           high nibble), the high 2 bits from the top bits of scales[j - 4]
//           (scale) and scales[j] (min).
struct ScaleMin6 {
  uint8_t scale;  // 0..63
  uint8_t min;    // 0..63
};

constexpr ScaleMin6 unpack_k4_scale_min(int j, std::span<const uint8_t, kScaleBytesK4> packed) {
  if (j < 4)
    return {static_cast<uint8_t>(packed[j] & 63), static_cast<uint8_t>(packed[j + 4] & 63)};
  return {static_cast<uint8_t>((packed[j + 4] & 0xf) | ((packed[j - 4] >> 6) << 4)),
          static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4))};
}

// Inverse of unpack_k4_scale_min; every value must be < 64.
constexpr std::array<uint8_t, kScaleBytesK4> pack_k4_scales_mins(
    std::span<const ScaleMin6, 8> values) {
  std::array<uint8_t, kScaleBytesK4> packed{};
  for (int j = 0; j < 4; ++j) {
    packed[j] = values[j].scale;
    packed[j + 4] = values[j].min;
  }
  for (int j = 4; j < 8; ++j) {
    packed[j + 4] = static_cast<uint8_t>((values[j].scale & 0xf) | ((values[j].min & 0xf) << 4));
    packed[j - 4] |= static_cast<uint8_t>((values[j].scale >> 4) << 6);
    packed[j] |= static_cast<uint8_t>((values[j].min >> 4) << 6);
  }
  return packed;
}

// Views a byte buffer as blocks. Blocks are implicit-lifetime types and the
// structs are packed (alignment 1), so any buffer from an allocation or an
// mmap'd file can be read this way.
template <typename Block>
std::span<const Block> as_blocks(std::span<const std::byte> bytes) {
  STRATA_CHECK(bytes.size() % sizeof(Block) == 0, bytes.size(), " bytes is not a whole number of ",
               sizeof(Block), "-byte blocks");
  return {reinterpret_cast<const Block*>(bytes.data()), bytes.size() / sizeof(Block)};
}

template <typename Block>
std::span<Block> as_blocks(std::span<std::byte> bytes) {
  STRATA_CHECK(bytes.size() % sizeof(Block) == 0, bytes.size(), " bytes is not a whole number of ",
               sizeof(Block), "-byte blocks");
  return {reinterpret_cast<Block*>(bytes.data()), bytes.size() / sizeof(Block)};
}

}  // namespace strata
