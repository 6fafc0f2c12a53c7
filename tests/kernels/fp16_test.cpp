#include "kernels/fp16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace strata {
namespace {

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

// ---- fp16 -> fp32 -------------------------------------------------------

TEST(Fp16ToFp32, KnownValues) {
  EXPECT_EQ(fp16_to_fp32(0x0000), 0.0f);
  EXPECT_TRUE(std::signbit(fp16_to_fp32(0x8000)));
  EXPECT_EQ(fp16_to_fp32(0x8000), 0.0f);
  EXPECT_EQ(fp16_to_fp32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_fp32(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_fp32(0x3555), 0x1.554p-2f);  // 0.333251953125
  EXPECT_EQ(fp16_to_fp32(0x7bff), 65504.0f);     // largest finite
  EXPECT_EQ(fp16_to_fp32(0x0400), 0x1p-14f);     // smallest normal
  EXPECT_EQ(fp16_to_fp32(0x0001), 0x1p-24f);     // smallest subnormal
  EXPECT_EQ(fp16_to_fp32(0x03ff), 1023 * 0x1p-24f);  // largest subnormal
  EXPECT_EQ(fp16_to_fp32(0x8001), -0x1p-24f);
  EXPECT_EQ(fp16_to_fp32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp16_to_fp32(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(Fp16ToFp32, NanKeepsSignAndPayload) {
  const float quiet = fp16_to_fp32(0x7e00);
  EXPECT_TRUE(std::isnan(quiet));
  EXPECT_FALSE(std::signbit(quiet));
  EXPECT_EQ(bits_of(quiet), 0x7fc00000u);
  const float negative = fp16_to_fp32(0xfe01);
  EXPECT_TRUE(std::isnan(negative));
  EXPECT_TRUE(std::signbit(negative));
  EXPECT_EQ(bits_of(negative) & 0x7fffffu, 0x201u << 13);  // payload moved up 13 bits
  EXPECT_TRUE(std::isnan(fp16_to_fp32(0x7c01)));           // signalling NaN stays NaN
}

// Every half value: its float is the exact value sign * 2^(e-15) * 1.m (or
// sign * m * 2^-24), computed here with ldexp on doubles.
TEST(Fp16ToFp32, EveryPatternMatchesDefinition) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const float got = fp16_to_fp32(static_cast<uint16_t>(h));
    if (exponent == 31) {
      EXPECT_EQ(std::isnan(got), mantissa != 0) << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
      continue;
    }
    const double expected = exponent == 0 ? sign * std::ldexp(mantissa, -24)
                                          : sign * std::ldexp(1024 + mantissa, exponent - 25);
    ASSERT_EQ(static_cast<double>(got), expected) << "half 0x" << std::hex << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << h;
  }
}

// ---- fp32 -> fp16 -------------------------------------------------------

TEST(Fp32ToFp16, KnownValues) {
  EXPECT_EQ(fp32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(0x1p-14f), 0x0400);
  EXPECT_EQ(fp32_to_fp16(0x1p-24f), 0x0001);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(1e10f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(-1e10f), 0xfc00);
  EXPECT_EQ(fp32_to_fp16(1e-10f), 0x0000);
  EXPECT_EQ(fp32_to_fp16(-1e-10f), 0x8000);
  EXPECT_EQ(fp32_to_fp16(std::numeric_limits<float>::denorm_min()), 0x0000);
}

TEST(Fp32ToFp16, TiesGoToEven) {
  // Near 1 the half step is 2^-10; midpoints are odd multiples of 2^-11.
  EXPECT_EQ(fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);      // tie, 0x3c00 even: down
  EXPECT_EQ(fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie, 0x3c01 odd: up
  EXPECT_EQ(fp32_to_fp16(std::nextafter(1.0f + 0x1p-11f, 2.0f)), 0x3c01);  // just above the tie
  EXPECT_EQ(fp32_to_fp16(-(1.0f + 0x1p-11f)), 0xbc00);
  // Subnormals: steps of 2^-24, ties at odd multiples of 2^-25.
  EXPECT_EQ(fp32_to_fp16(0x1p-25f), 0x0000);                  // tie between 0 and 1: 0
  EXPECT_EQ(fp32_to_fp16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(fp32_to_fp16(3 * 0x1p-25f), 0x0002);              // tie between 1 and 2: 2
  EXPECT_EQ(fp32_to_fp16(5 * 0x1p-25f), 0x0002);              // tie between 2 and 3: 2
  EXPECT_EQ(fp32_to_fp16(-3 * 0x1p-25f), 0x8002);
  // Largest subnormal + half step rounds up into the smallest normal.
  EXPECT_EQ(fp32_to_fp16(1023 * 0x1p-24f + 0x1p-25f), 0x0400);
  // Overflow: 65520 is the tie between 65504 (odd) and 2^16: up to inf.
  EXPECT_EQ(fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(fp32_to_fp16(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(fp32_to_fp16(-65520.0f), 0xfc00);
}

TEST(Fp32ToFp16, NanStaysNanWithSign) {
  const uint16_t quiet = fp32_to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(quiet & 0x7c00, 0x7c00);
  EXPECT_NE(quiet & 0x03ff, 0);
  EXPECT_EQ(fp32_to_fp16(float_of(0xffc00000u)) & 0x8000, 0x8000);
  // A payload only in the low 13 bits must not become inf.
  EXPECT_EQ(fp32_to_fp16(float_of(0x7f800001u)), 0x7e00);
  EXPECT_EQ(fp32_to_fp16(float_of(0xff800001u)), 0xfe00);
}

// Every half round-trips through float, NaNs stay NaN.
TEST(Fp32ToFp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    const uint16_t back = fp32_to_fp16(f);
    if (std::isnan(f)) {
      EXPECT_EQ(back & 0x7c00, 0x7c00);
      EXPECT_NE(back & 0x3ff, 0);
      EXPECT_EQ(back & 0x8000, h & 0x8000);
    } else {
      ASSERT_EQ(back, h) << "half 0x" << std::hex << h;
    }
  }
}

// An independent reference: the nearest of all finite halves (as doubles),
// ties to the even pattern, beyond 65520 infinity.
class NearestHalf {
 public:
  NearestHalf() {
    for (uint32_t h = 0; h < 0x7c00; ++h)
      values_.push_back(static_cast<double>(fp16_to_fp32(static_cast<uint16_t>(h))));
  }
  uint16_t operator()(float f) const {
    const double magnitude = std::fabs(static_cast<double>(f));
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    if (magnitude >= 65520.0) return sign | 0x7c00;
    if (magnitude > 65504.0) return sign | 0x7bff;
    // values_ is sorted and values_[i] is the value of pattern i.
    const size_t above =
        std::lower_bound(values_.begin(), values_.end(), magnitude) - values_.begin();
    if (values_[above] == magnitude) return static_cast<uint16_t>(sign | above);
    const size_t below = above - 1;
    const double to_below = magnitude - values_[below], to_above = values_[above] - magnitude;
    size_t pick = to_below < to_above   ? below
                  : to_above < to_below ? above
                                        : (below % 2 == 0 ? below : above);
    return static_cast<uint16_t>(sign | pick);
  }
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<double> values_;  // value of each positive finite half pattern 0x0000..0x7bff
};

TEST(Fp32ToFp16, MatchesNearestHalfAtEveryMidpoint) {
  const NearestHalf nearest;
  const std::vector<double>& v = nearest.values();
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const float mid = static_cast<float>((v[i] + v[i + 1]) / 2);  // exact: one more bit than a half
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), -mid}) {
      ASSERT_EQ(fp32_to_fp16(f), nearest(f)) << "float 0x" << std::hex << bits_of(f);
    }
  }
}

TEST(Fp32ToFp16, MatchesNearestHalfOnStridedFloats) {
  const NearestHalf nearest;
  // Every 4099th float pattern below inf, both signs (~1M values).
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 4099) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float f = float_of(bits | sign);
      ASSERT_EQ(fp32_to_fp16(f), nearest(f)) << "float 0x" << std::hex << (bits | sign);
    }
  }
}

// ---- bf16 ---------------------------------------------------------------

TEST(Bf16, ToFp32IsTheTopHalf) {
  EXPECT_EQ(bf16_to_fp32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_fp32(0xc049), -3.140625f);
  EXPECT_EQ(bf16_to_fp32(0x0001), float_of(0x00010000u));  // subnormal
  EXPECT_EQ(bf16_to_fp32(0x7f80), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(bf16_to_fp32(0x7fc0)));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    ASSERT_EQ(bits_of(bf16_to_fp32(static_cast<uint16_t>(h))), h << 16);
  }
}

TEST(Bf16, FromFp32RoundsToNearestEven) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(fp32_to_bf16(3.14159265f), 0x4049);  // 3.140625 is nearest
  // Near 1 the bf16 step is 2^-7; ties at odd multiples of 2^-8.
  EXPECT_EQ(fp32_to_bf16(1.0f + 0x1p-8f), 0x3f80);      // tie, even below
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie, 0x3f81 odd: up
  EXPECT_EQ(fp32_to_bf16(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(-0.0f), 0x8000);
  // Subnormals are rounded, not flushed (ggml's current behaviour).
  EXPECT_EQ(fp32_to_bf16(float_of(0x00010000u)), 0x0001);
  EXPECT_EQ(fp32_to_bf16(float_of(0x00008000u)), 0x0000);  // tie to even 0
  EXPECT_EQ(fp32_to_bf16(float_of(0x00018000u)), 0x0002);  // tie to even 2
  EXPECT_EQ(fp32_to_bf16(float_of(0x00008001u)), 0x0001);
  // Overflow and infinities.
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(fp32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
}

TEST(Bf16, NanIsQuietAndKeepsSign) {
  EXPECT_EQ(fp32_to_bf16(float_of(0x7f800001u)),
            0x7fc0);  // would round to inf without the NaN rule
  EXPECT_EQ(fp32_to_bf16(float_of(0xff800001u)), 0xffc0);
  EXPECT_EQ(fp32_to_bf16(float_of(0x7fc00000u)), 0x7fc0);
  EXPECT_EQ(fp32_to_bf16(float_of(0x7fa50000u)), 0x7fe5);  // payload kept, quiet bit set
}

TEST(Bf16, EveryBf16RoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(h));
    const uint16_t back = fp32_to_bf16(f);
    if (std::isnan(f)) {
      EXPECT_EQ(back, h | 0x40);
    } else {
      ASSERT_EQ(back, h);
    }
  }
}

// Constexpr use compiles (the conversions run at compile time).
static_assert(fp32_to_fp16(1.0f) == 0x3c00);
static_assert(fp16_to_fp32(0x3c00) == 1.0f);
static_assert(fp32_to_bf16(1.0f) == 0x3f80);

}  // namespace
}  // namespace strata
