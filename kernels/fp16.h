// fp32 <-> fp16 (IEEE binary16) and fp32 <-> bf16 (bfloat16) on raw 16-bit
// patterns, the way GGUF stores them. Pure, constexpr, no tables.
//
// fp16: round to nearest, ties to even, in every range (normal, subnormal,
// overflow to inf); NaN stays NaN (sign and top payload bits kept, made quiet).
// bf16: exactly ggml's ggml_compute_fp32_to_bf16: round to nearest even on the
// low 16 bits, subnormals kept (not flushed), NaN made quiet with its sign.
//
// Assumes the default floating-point environment (no flush-to-zero / DAZ).
#pragma once

#include <bit>
#include <cstdint>

namespace strata {

// Exact for every input: each binary16 value is representable as a float.
constexpr float fp16_to_fp32(uint16_t bits) {
  const uint32_t word = uint32_t{bits} << 16;
  const uint32_t sign = word & 0x80000000u;
  const uint32_t magnitude = word << 1;  // exponent in bits 31..27, mantissa in 26..17

  // Normal, inf and NaN: move exponent and mantissa into a float's fields with
  // the exponent raised by 224, then multiply by 2^-112. Net exponent change is
  // +112 = 127 - 15 (the bias difference); exponent 31 (inf/NaN) lands on 255,
  // which the multiply leaves inf/NaN. Both steps are exact.
  constexpr uint32_t kExponentRaise = 224u << 23;
  const float normal = std::bit_cast<float>((magnitude >> 4) + kExponentRaise) * 0x1.0p-112f;

  // Subnormal: m * 2^-24. Writing m under exponent 126 gives 0.5 + m * 2^-24;
  // subtracting 0.5 is exact (Sterbenz).
  const float subnormal = std::bit_cast<float>((magnitude >> 17) | (126u << 23)) - 0.5f;

  // Select with a mask rather than a branch so loops over this vectorize.
  const uint32_t subnormal_mask = magnitude < (1u << 27) ? ~0u : 0u;  // exponent field == 0
  return std::bit_cast<float>(sign | (std::bit_cast<uint32_t>(subnormal) & subnormal_mask) |
                              (std::bit_cast<uint32_t>(normal) & ~subnormal_mask));
}

constexpr uint16_t fp32_to_fp16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;

  if (magnitude > 0x7f800000u) {
    // NaN: keep the top 10 payload bits and set the quiet bit, so a payload
    // that lives only in the dropped low bits cannot turn into inf.
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x477ff000u) {
    // >= 65520, the midpoint between 65504 (largest half, odd mantissa) and
    // 2^16: ties to even go up, so this and inf become inf.
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (magnitude >= 0x38800000u) {
    // >= 2^-14: a normal half. Rebias the exponent (127 -> 15), then drop 13
    // mantissa bits rounding to nearest even; a carry out of the mantissa
    // correctly bumps the exponent.
    const uint32_t rebiased = magnitude - (112u << 23);
    const uint32_t round_up = 0xfffu + ((rebiased >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rebiased + round_up) >> 13));
  }
  if (magnitude <= 0x33000000u) {
    // <= 2^-25, half the smallest subnormal: the tie goes to even, i.e. zero.
    return static_cast<uint16_t>(sign);
  }
  // Subnormal half: round value / 2^-24 to the nearest even integer. The value
  // is mantissa * 2^(exponent - 150), so value / 2^-24 = mantissa >> shift.
  // A result of 0x400 is the smallest normal, which is the right encoding.
  const uint32_t exponent = magnitude >> 23;  // 102..112 here
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - exponent;  // 14..24
  const uint32_t round_up = (1u << (shift - 1)) - 1u + ((mantissa >> shift) & 1u);
  return static_cast<uint16_t>(sign | ((mantissa + round_up) >> shift));
}

// Exact: bf16 is the top half of a float.
constexpr float bf16_to_fp32(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

constexpr uint16_t fp32_to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN: force quiet, keep sign
  }
  // Round to nearest even on the 16 dropped bits; cannot overflow 32 bits
  // because the largest non-NaN pattern is 0xff800000 (-inf).
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace strata
