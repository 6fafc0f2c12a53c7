// dequantize() on hand-built blocks. Blocks are written as raw bytes at the
// offsets of ggml's structs (not through our structs), and expected values come
// from the format written out per element (spec_* below) plus literal values
// worked out by hand in the comments. Scales are powers of two and quants small
// integers, so every expected value is exact.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/quantize.h"

namespace strata {
namespace {

constexpr uint16_t kHalf0_25 = 0x3400;    // 0.25 in fp16
constexpr uint16_t kHalf0_5 = 0x3800;     // 0.5
constexpr uint16_t kHalf2 = 0x4000;       // 2.0
constexpr uint16_t kHalfMinus1_5 = 0xbe00;  // -1.5

// A little-endian byte buffer holding one or more blocks.
class Bytes {
 public:
  explicit Bytes(size_t n) : bytes_(n) {}
  void u8(size_t at, uint8_t v) { bytes_.at(at) = std::byte{v}; }
  void u16(size_t at, uint16_t v) {
    u8(at, static_cast<uint8_t>(v & 0xff));
    u8(at + 1, static_cast<uint8_t>(v >> 8));
  }
  uint8_t get(size_t at) const { return static_cast<uint8_t>(bytes_.at(at)); }
  std::span<const std::byte> span() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<float> decode(WeightType type, const Bytes& bytes, size_t n_elems) {
  std::vector<float> out(n_elems, std::numeric_limits<float>::quiet_NaN());
  dequantize(type, bytes.span(), out);
  return out;
}

// Fills [begin, end) with a byte pattern that hits every nibble value.
void fill_pattern(Bytes& bytes, size_t begin, size_t end, uint8_t seed) {
  for (size_t i = begin; i < end; ++i) bytes.u8(i, static_cast<uint8_t>((i * 37 + seed) & 0xff));
}

// ---- plain types ------------------------------------------------------------

TEST(Dequantize, F32IsACopy) {
  const float values[] = {1.5f, -0.0f, 3e38f, -1e-40f};
  Bytes bytes(sizeof(values));
  for (size_t i = 0; i < sizeof(values); ++i)
    bytes.u8(i, reinterpret_cast<const uint8_t*>(values)[i]);
  const std::vector<float> out = decode(WeightType::kF32, bytes, 4);
  EXPECT_EQ(std::memcmp(out.data(), values, sizeof(values)), 0);
}

TEST(Dequantize, F16) {
  Bytes bytes(10);
  bytes.u16(0, 0x3c00);  // 1
  bytes.u16(2, 0xc000);  // -2
  bytes.u16(4, 0x0001);  // 2^-24, smallest subnormal
  bytes.u16(6, 0x7c00);  // inf
  bytes.u16(8, 0x7bff);  // 65504
  const std::vector<float> out = decode(WeightType::kF16, bytes, 5);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 0x1p-24f);
  EXPECT_EQ(out[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[4], 65504.0f);
}

TEST(Dequantize, Bf16) {
  Bytes bytes(6);
  bytes.u16(0, 0x3f80);  // 1
  bytes.u16(2, 0xc049);  // -3.140625
  bytes.u16(4, 0xff80);  // -inf
  const std::vector<float> out = decode(WeightType::kBF16, bytes, 3);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -3.140625f);
  EXPECT_EQ(out[2], -std::numeric_limits<float>::infinity());
}

// ---- Q8_0: [d:2][qs:32 x int8], x = d * q -------------------------------

TEST(Dequantize, Q8_0) {
  Bytes bytes(2 * 34);
  bytes.u16(0, kHalf0_5);
  const int8_t qs[] = {-128, -127, -1, 0, 1, 2, 127, 64};
  for (int i = 0; i < 32; ++i) bytes.u8(2 + i, static_cast<uint8_t>(qs[i % 8]));
  bytes.u16(34, kHalf2);  // second block: d = 2, q[i] = i - 16
  for (int i = 0; i < 32; ++i) bytes.u8(36 + i, static_cast<uint8_t>(static_cast<int8_t>(i - 16)));

  const std::vector<float> out = decode(WeightType::kQ8_0, bytes, 64);
  const float block0[] = {-64.0f, -63.5f, -0.5f, 0.0f, 0.5f, 1.0f, 63.5f, 32.0f};
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], block0[i % 8]) << i;
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[32 + i], 2.0f * (i - 16)) << i;
}

// ---- Q4_0: [d:2][qs:16], x[i] = d * (nibble - 8); low nibbles first ---------

TEST(Dequantize, Q4_0) {
  Bytes bytes(2 * 18);
  bytes.u16(0, kHalfMinus1_5);
  for (int i = 0; i < 16; ++i) bytes.u8(2 + i, static_cast<uint8_t>(i | ((15 - i) << 4)));
  bytes.u16(18, kHalf0_25);
  fill_pattern(bytes, 20, 36, 5);

  const std::vector<float> out = decode(WeightType::kQ4_0, bytes, 64);
  // Block 0: element i < 16 has nibble i, element 16 + i has nibble 15 - i.
  EXPECT_EQ(out[0], 12.0f);    // (0 - 8) * -1.5
  EXPECT_EQ(out[8], -0.0f);    // (8 - 8) * -1.5
  EXPECT_EQ(out[15], -10.5f);  // (15 - 8) * -1.5
  EXPECT_EQ(out[16], -10.5f);  // nibble 15
  EXPECT_EQ(out[31], 12.0f);   // nibble 0
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(out[i], -1.5 * (i - 8)) << i;
    EXPECT_EQ(out[16 + i], -1.5 * (7 - i)) << i;
  }
  for (int i = 0; i < 32; ++i) {
    const uint8_t byte = bytes.get(20 + i % 16);
    const int nibble = i < 16 ? (byte & 0xf) : (byte >> 4);
    EXPECT_EQ(out[32 + i], 0.25 * (nibble - 8)) << i;
  }
}

// ---- Q4_K / Q5_K -----------------------------------------------------------
// Q4_K: [d:2][dmin:2][scales:12][qs:128]            = 144 bytes
// Q5_K: [d:2][dmin:2][scales:12][qh:32][qs:128]     = 176 bytes
// Sub-block j = e / 32 has 6-bit scale sc[j] and min m[j]:
//   x = d * sc[j] * q - dmin * m[j]
// The 12 scale bytes, worked out by hand for these scales and mins:
//   sc = {5, 63, 32, 1, 17, 33, 50, 12},  m = {0, 7, 63, 40, 16, 47, 63, 3}
//   bytes 0..3:  sc[j] | (sc[j+4] >> 4) << 6  -> 0x45 0xbf 0xe0 0x01
//   bytes 4..7:  m[j]  | (m[j+4]  >> 4) << 6  -> 0x40 0x87 0xff 0x28
//   bytes 8..11: (sc[j+4] & 15) | (m[j+4] & 15) << 4 -> 0x01 0xf1 0xf2 0x3c
constexpr uint8_t kPackedScales[12] = {0x45, 0xbf, 0xe0, 0x01, 0x40, 0x87,
                                       0xff, 0x28, 0x01, 0xf1, 0xf2, 0x3c};
constexpr int kSc[8] = {5, 63, 32, 1, 17, 33, 50, 12};
constexpr int kMin[8] = {0, 7, 63, 40, 16, 47, 63, 3};

// 4-bit part of element e: chunk c = e / 64 is qs[32c .. 32c+31]; the first 32
// elements of the chunk are the low nibbles, the next 32 the high nibbles.
int spec_k_low4(const Bytes& bytes, size_t qs_at, int e) {
  const uint8_t byte = bytes.get(qs_at + 32 * (e / 64) + e % 32);
  return (e % 64) < 32 ? (byte & 0xf) : (byte >> 4);
}

// Fifth bit of element e: bit (e / 32) of qh[e % 32].
int spec_q5_high(const Bytes& bytes, size_t qh_at, int e) {
  return (bytes.get(qh_at + e % 32) >> (e / 32)) & 1;
}

void put_k4_header(Bytes& bytes, size_t at, uint16_t d, uint16_t dmin) {
  bytes.u16(at, d);
  bytes.u16(at + 2, dmin);
  for (int i = 0; i < 12; ++i) bytes.u8(at + 4 + i, kPackedScales[i]);
}

TEST(Dequantize, Q4_K) {
  Bytes bytes(2 * 144);
  put_k4_header(bytes, 0, kHalf0_5, kHalf0_25);
  fill_pattern(bytes, 16, 144, 11);
  bytes.u8(16 + 0, 0x9a);  // element 0: nibble 10 (sub-block 0); element 32: nibble 9 (sub-block 1)
  bytes.u8(16 + 104,
           0x3f);  // element 200: nibble 15 (sub-block 6); element 232: nibble 3 (sub-block 7)
  bytes.u8(16 + 127,
           0x70);  // element 223: nibble 0 (sub-block 6); element 255: nibble 7 (sub-block 7)
  put_k4_header(bytes, 144, kHalf2, kHalf0_5);  // second block: other d, dmin
  fill_pattern(bytes, 160, 288, 3);

  const std::vector<float> out = decode(WeightType::kQ4_K, bytes, 512);
  EXPECT_EQ(out[0], 25.0f);       // 0.5 * 5 * 10 - 0.25 * 0
  EXPECT_EQ(out[32], 281.75f);    // 0.5 * 63 * 9 - 0.25 * 7
  EXPECT_EQ(out[200], 359.25f);   // 0.5 * 50 * 15 - 0.25 * 63
  EXPECT_EQ(out[223], -15.75f);   // 0.5 * 50 * 0 - 0.25 * 63
  EXPECT_EQ(out[232], 17.25f);    // 0.5 * 12 * 3 - 0.25 * 3
  EXPECT_EQ(out[255], 41.25f);    // 0.5 * 12 * 7 - 0.25 * 3
  for (int b = 0; b < 2; ++b) {
    const double d = b == 0 ? 0.5 : 2.0, dmin = b == 0 ? 0.25 : 0.5;
    for (int e = 0; e < 256; ++e) {
      const int q = spec_k_low4(bytes, 144 * b + 16, e);
      const double expected = d * kSc[e / 32] * q - dmin * kMin[e / 32];
      ASSERT_EQ(out[256 * b + e], expected) << "block " << b << " element " << e;
    }
  }
}

TEST(Dequantize, Q5_K) {
  Bytes bytes(2 * 176);
  put_k4_header(bytes, 0, kHalf0_5, kHalf0_25);
  fill_pattern(bytes, 16, 176, 29);
  constexpr size_t kQh = 16, kQs = 48;
  bytes.u8(kQs + 0, 0x9a);    // element 0: low 4 bits 10; element 32: 9
  bytes.u8(kQh + 0, 0x01);    // element 0: fifth bit set (bit 0); element 32: clear (bit 1)
  bytes.u8(kQs + 104, 0x3f);  // element 200: 15; element 232: 3
  bytes.u8(kQh + 8, 0x40);    // element 200: bit 6 set; element 232: bit 7 clear
  bytes.u8(kQs + 36, 0xb0);   // element 100 (chunk 1, high half, l = 4): 11
  bytes.u8(kQh + 4, 0x08);    // element 100: bit 3 set
  put_k4_header(bytes, 176, kHalf2, kHalf0_5);
  fill_pattern(bytes, 192, 352, 7);

  const std::vector<float> out = decode(WeightType::kQ5_K, bytes, 512);
  EXPECT_EQ(out[0], 65.0f);      // 0.5 * 5 * 26 - 0
  EXPECT_EQ(out[32], 281.75f);   // 0.5 * 63 * 9 - 0.25 * 7
  EXPECT_EQ(out[100], 3.5f);     // 0.5 * 1 * 27 - 0.25 * 40
  EXPECT_EQ(out[200], 759.25f);  // 0.5 * 50 * 31 - 0.25 * 63
  EXPECT_EQ(out[232], 17.25f);   // 0.5 * 12 * 3 - 0.25 * 3
  for (int b = 0; b < 2; ++b) {
    const double d = b == 0 ? 0.5 : 2.0, dmin = b == 0 ? 0.25 : 0.5;
    for (int e = 0; e < 256; ++e) {
      const int q =
          spec_k_low4(bytes, 176 * b + kQs, e) + 16 * spec_q5_high(bytes, 176 * b + kQh, e);
      const double expected = d * kSc[e / 32] * q - dmin * kMin[e / 32];
      ASSERT_EQ(out[256 * b + e], expected) << "block " << b << " element " << e;
    }
  }
}

// ---- Q6_K: [ql:128][qh:64][scales:16 x int8][d:2] = 210 bytes ---------------
// x = d * scales[e / 16] * (q - 32), q 6 bits. Half h = e / 128, r = e % 128,
// k = r / 32, l = r % 32: low 4 bits in ql[64h + l + 32 (k & 1)] (low nibble
// for k < 2, high for k >= 2), top 2 bits = bits 2k, 2k+1 of qh[32h + l].
int spec_q6(const Bytes& bytes, size_t at, int e) {
  const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
  const uint8_t low_byte = bytes.get(at + 64 * h + l + 32 * (k & 1));
  const int low = k < 2 ? (low_byte & 0xf) : (low_byte >> 4);
  const int high = (bytes.get(at + 128 + 32 * h + l) >> (2 * k)) & 3;
  return low | (high << 4);
}

TEST(Dequantize, Q6_K) {
  const int8_t scales[16] = {1, -1, 2, -3, 127, 3, -7, 9, 11, -128, 13, 0, 17, -19, 21, -3};
  Bytes bytes(2 * 210);
  fill_pattern(bytes, 0, 192, 3);
  for (int j = 0; j < 16; ++j) bytes.u8(192 + j, static_cast<uint8_t>(scales[j]));
  bytes.u16(208, kHalf0_5);
  bytes.u8(0, 0x05);         // element 0: low 4 bits 5
  bytes.u8(128 + 0, 0x02);   // element 0: top bits 2 (bits 0..1)
  bytes.u8(13, 0xf0);        // element 77 (k = 2, l = 13): high nibble 15
  bytes.u8(128 + 13, 0x30);  // element 77: top bits 3 (bits 4..5)
  bytes.u8(127, 0x00);       // element 255 (h = 1, k = 3, l = 31): high nibble 0
  bytes.u8(128 + 63, 0x00);  // element 255: top bits 0 (bits 6..7)
  bytes.u8(86, 0x0c);        // element 150 (h = 1, k = 0, l = 22): low nibble 12
  bytes.u8(128 + 54, 0x01);  // element 150: top bits 1
  fill_pattern(bytes, 210, 420, 9);  // second block: its own scales (the pattern) and d
  bytes.u16(210 + 208, kHalf0_25);

  const std::vector<float> out = decode(WeightType::kQ6_K, bytes, 512);
  EXPECT_EQ(out[0], 2.5f);       // 0.5 * 1 * (37 - 32)
  EXPECT_EQ(out[77], 1968.5f);   // 0.5 * 127 * (63 - 32)
  EXPECT_EQ(out[150], 256.0f);   // 0.5 * -128 * (28 - 32)
  EXPECT_EQ(out[255], 48.0f);    // 0.5 * -3 * (0 - 32)
  EXPECT_EQ(out[176], 0.0f);     // sub-block 11 has scale 0
  for (int b = 0; b < 2; ++b) {
    const size_t at = 210 * b;
    const double d = b == 0 ? 0.5 : 0.25;
    for (int e = 0; e < 256; ++e) {
      const int scale = static_cast<int8_t>(bytes.get(at + 192 + e / 16));
      const double expected = d * scale * (spec_q6(bytes, at, e) - 32);
      ASSERT_EQ(out[256 * b + e], expected) << "block " << b << " element " << e;
    }
  }
}

// ---- addressing and sizes ---------------------------------------------------

// Blocks read from a GGUF mapping may start at any byte: decode at an odd address.
TEST(Dequantize, BlocksAtOddAddresses) {
  Bytes aligned(144), shifted(145);
  put_k4_header(aligned, 0, kHalf0_5, kHalf0_25);
  fill_pattern(aligned, 16, 144, 1);
  for (size_t i = 0; i < 144; ++i) shifted.u8(i + 1, aligned.get(i));
  std::vector<float> a(256), b(256);
  dequantize(WeightType::kQ4_K, aligned.span(), a);
  dequantize(WeightType::kQ4_K, shifted.span().subspan(1), b);
  EXPECT_EQ(a, b);

  Bytes f16(7);
  f16.u16(1, 0x3c00);
  f16.u16(3, 0xc000);
  f16.u16(5, 0x3800);
  std::vector<float> halves(3);
  dequantize(WeightType::kF16, f16.span().subspan(1), halves);
  EXPECT_EQ(halves, (std::vector<float>{1.0f, -2.0f, 0.5f}));
}

TEST(Dequantize, EmptyInputIsFine) {
  std::vector<float> out;
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kQ4_K}) {
    dequantize(type, {}, out);
  }
}

TEST(DequantizeDeathTest, SizeMismatchIsABug) {
  Bytes bytes(144);
  std::vector<float> out(255);
  EXPECT_DEATH(dequantize(WeightType::kQ4_K, bytes.span(), out), "");
  std::vector<float> one(1);
  EXPECT_DEATH(dequantize(WeightType::kQ4_1, Bytes(20).span(), std::span<float>(out).first(32)),
               "");
  EXPECT_DEATH(dequantize(WeightType::kF16, Bytes(3).span(), one), "");
}

}  // namespace
}  // namespace strata
