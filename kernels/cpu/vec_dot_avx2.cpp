// AVX2 + FMA + F16C dot products. This is the only file compiled with those
// instructions (kernels/cpu/CMakeLists.txt), and its kernels are reached only
// through vec_dot_kernel() after cpu_supports(CpuSimd::kAvx2), so the binary
// still runs on CPUs without AVX2. Nothing here may be inlined into other
// files: only the kernel set is exported.
//
// The integer kernels follow ggml's AVX2 ones (ggml-cpu/arch/x86/quants.c):
// unpack quants to bytes, multiply-add unsigned x signed bytes into int16
// pairs (_mm256_maddubs_epi16), widen with the sub-block scale into int32
// lanes (_mm256_madd_epi16), and scale the int32 lanes by the block's float
// scale into 8 float lanes, summed at the end. No step saturates: a pair sum
// is at most 2 * 63 * 127 = 16002 (Q6_K, the widest quant) in int16.
//
// All loads are unaligned (loadu): rows and packed blocks sit anywhere.
//
// This file must not call inline functions of shared headers (fp16.h,
// check.h, std:: templates): an out-of-line copy compiled here with AVX2
// could be the one the linker keeps for the whole program. Hence its own
// fp16/bf16 decoding below, and only declarations and struct layouts included.
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot_kernels.h"

namespace strata {
namespace {

template <typename Block>
const Block* blocks_at(const std::byte* bytes) {
  return reinterpret_cast<const Block*>(bytes);
}

inline __m256i load_bytes_32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline float fp16_scalar(uint16_t bits) { return _cvtsh_ss(bits); }

inline float horizontal_sum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum);
}

// Signed x signed bytes, summed in groups of 4 into 8 int32 lanes.
// maddubs wants its first operand unsigned: move the sign of x onto y.
inline __m256i dot_i8_lanes(__m256i x, __m256i y) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// 16 packed nibbles -> 32 bytes: element i < 16 is the low nibble of byte i,
// element i >= 16 the high nibble of byte i - 16 (the Q4_0 order).
inline __m256i unpack_nibbles_q4_0(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// ---- float activations ------------------------------------------------------

// Shared loop of the f32 / f16 / bf16 kernels: kLoad8(p) turns the 8 weights
// at p into floats; kDecode decodes one weight for the tail.
template <int kBytesPerWeight, __m256 (*kLoad8)(const std::byte*),
          float (*kDecode)(const std::byte*)>
float dot_float_weights(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* x = reinterpret_cast<const float*>(activations);
  // Four accumulators hide the FMA latency.
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const std::byte* w = weight_row + kBytesPerWeight * i;
    acc0 = _mm256_fmadd_ps(kLoad8(w), _mm256_loadu_ps(x + i), acc0);
    acc1 = _mm256_fmadd_ps(kLoad8(w + 8 * kBytesPerWeight), _mm256_loadu_ps(x + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(kLoad8(w + 16 * kBytesPerWeight), _mm256_loadu_ps(x + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(kLoad8(w + 24 * kBytesPerWeight), _mm256_loadu_ps(x + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(kLoad8(weight_row + kBytesPerWeight * i), _mm256_loadu_ps(x + i), acc0);
  }
  float sum = horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum += kDecode(weight_row + kBytesPerWeight * i) * x[i];
  return sum;
}

inline __m256 load8_f32(const std::byte* p) {
  return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
}
inline __m256 load8_f16(const std::byte* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load8_bf16(const std::byte* p) {
  // bf16 is the top half of an f32.
  const __m256i widened =
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(widened, 16));
}

inline float decode_f32(const std::byte* p) {
  float value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}
inline uint16_t load_u16(const std::byte* p) {
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return bits;
}
inline float decode_f16(const std::byte* p) { return _cvtsh_ss(load_u16(p)); }
inline float decode_bf16(const std::byte* p) {
  const uint32_t bits = uint32_t{load_u16(p)} << 16;
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// ---- 32-element blocks: Q8_0 and Q4_0 weights . Q8_0 activations ------------

// One 32-element block's contribution to the 8 float lanes: its scale times
// its int32 partial sums. kUnpack gives the block's weights as signed bytes.
template <typename Block, __m256i (*kUnpack)(const Block&)>
inline __m256 block_dot_0(const Block& w, const BlockQ8_0& x, __m256 acc) {
  const __m256 d = _mm256_set1_ps(fp16_scalar(w.d) * fp16_scalar(x.d));
  const __m256i sums = dot_i8_lanes(kUnpack(w), load_bytes_32(x.qs));
  return _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc);
}

// Two accumulators over alternate blocks hide the FMA latency.
template <typename Block, __m256i (*kUnpack)(const Block&)>
float dot_blocks_0(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<Block>(weight_row);
  const auto* x = blocks_at<BlockQ8_0>(activations);
  const int64_t n_blocks = n / kBlockElems0;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= n_blocks; b += 2) {
    acc0 = block_dot_0<Block, kUnpack>(w[b], x[b], acc0);
    acc1 = block_dot_0<Block, kUnpack>(w[b + 1], x[b + 1], acc1);
  }
  if (b < n_blocks) acc0 = block_dot_0<Block, kUnpack>(w[b], x[b], acc0);
  return horizontal_sum(_mm256_add_ps(acc0, acc1));
}

inline __m256i unpack_q8_0(const BlockQ8_0& block) { return load_bytes_32(block.qs); }
inline __m256i unpack_q4_0(const BlockQ4_0& block) {
  return _mm256_sub_epi8(unpack_nibbles_q4_0(block.qs), _mm256_set1_epi8(8));  // -8..7
}

// ---- K-quants . Q8_K activations ----------------------------------------------

// The 8 scales and 8 mins of a Q4_K / Q5_K block, 6 bits each, unpacked four
// at a time in 32-bit words (ggml's kmask trick; same result as
// unpack_k4_scale_min for j = 0..7).
struct ScalesMinsK4 {
  uint8_t scales[8];
  uint8_t mins[8];
};

inline ScalesMinsK4 unpack_scales_mins_k4(const uint8_t* packed) {
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t word[3];
  std::memcpy(word, packed, sizeof(word));
  const uint32_t unpacked[4] = {
      word[0] & kLow6,                                        // scales 0..3
      (word[2] & kLow4) | (((word[0] >> 6) & kLow2) << 4),    // scales 4..7
      word[1] & kLow6,                                        // mins 0..3
      ((word[2] >> 4) & kLow4) | (((word[1] >> 6) & kLow2) << 4),  // mins 4..7
  };
  ScalesMinsK4 out;
  std::memcpy(&out, unpacked, sizeof(out));
  return out;
}

// sum_j min[j] * (sum of the activations of sub-block j), exact in int.
inline int dot_mins_k4(const uint8_t* mins, const int16_t* bsums) {
  int sum = 0;
  for (int j = 0; j < 8; ++j) sum += mins[j] * (bsums[2 * j] + bsums[2 * j + 1]);
  return sum;
}

// Unsigned quants (0..31) of two 32-element sub-blocks times their
// activations, each pair sum times its sub-block scale, as 8 int32 lanes.
inline __m256i scaled_dot_pair(__m256i q_lo, __m256i q_hi, const int8_t* a, uint8_t scale_lo,
                               uint8_t scale_hi) {
  const __m256i lo = _mm256_maddubs_epi16(q_lo, load_bytes_32(a));
  const __m256i hi = _mm256_maddubs_epi16(q_hi, load_bytes_32(a + 32));
  return _mm256_add_epi32(_mm256_madd_epi16(lo, _mm256_set1_epi16(scale_lo)),
                          _mm256_madd_epi16(hi, _mm256_set1_epi16(scale_hi)));
}

float dot_q4_k(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<BlockQ4K>(weight_row);
  const auto* x = blocks_at<BlockQ8K>(activations);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float sum_mins = 0.0f;
  for (int64_t b = 0; b < n / kBlockElemsK; ++b) {
    const ScalesMinsK4 sm = unpack_scales_mins_k4(w[b].scales);
    sum_mins +=
        fp16_scalar(w[b].dmin) * x[b].d * static_cast<float>(dot_mins_k4(sm.mins, x[b].bsums));

    __m256i sums = _mm256_setzero_si256();
    for (int chunk = 0; chunk < 4; ++chunk) {  // 64 elements: sub-blocks 2c (low nibbles), 2c+1
      const __m256i packed = load_bytes_32(w[b].qs + 32 * chunk);
      const __m256i q_lo = _mm256_and_si256(packed, low4);
      const __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
      sums =
          _mm256_add_epi32(sums, scaled_dot_pair(q_lo, q_hi, x[b].qs + 64 * chunk,
                                                 sm.scales[2 * chunk], sm.scales[2 * chunk + 1]));
    }
    const __m256 d = _mm256_set1_ps(fp16_scalar(w[b].d) * x[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc);
  }
  return horizontal_sum(acc) - sum_mins;
}

float dot_q5_k(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<BlockQ5K>(weight_row);
  const auto* x = blocks_at<BlockQ8K>(activations);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i bit5 = _mm256_set1_epi8(0x10);
  __m256 acc = _mm256_setzero_ps();
  float sum_mins = 0.0f;
  for (int64_t b = 0; b < n / kBlockElemsK; ++b) {
    const ScalesMinsK4 sm = unpack_scales_mins_k4(w[b].scales);
    sum_mins +=
        fp16_scalar(w[b].dmin) * x[b].d * static_cast<float>(dot_mins_k4(sm.mins, x[b].bsums));

    // Bit j of qh[l] is the fifth bit of element 32j + l: shift it to bit 4
    // of each byte (16-bit shifts; the mask drops what crosses bytes).
    const __m256i high_bits = load_bytes_32(w[b].qh);
    __m256i sums = _mm256_setzero_si256();
    for (int chunk = 0; chunk < 4; ++chunk) {
      const __m256i packed = load_bytes_32(w[b].qs + 32 * chunk);
      const int sub_lo = 2 * chunk, sub_hi = 2 * chunk + 1;
      const __m256i fifth_lo = _mm256_and_si256(
          sub_lo <= 4 ? _mm256_sll_epi16(high_bits, _mm_cvtsi32_si128(4 - sub_lo))
                      : _mm256_srl_epi16(high_bits, _mm_cvtsi32_si128(sub_lo - 4)),
          bit5);
      const __m256i fifth_hi = _mm256_and_si256(
          sub_hi <= 4 ? _mm256_sll_epi16(high_bits, _mm_cvtsi32_si128(4 - sub_hi))
                      : _mm256_srl_epi16(high_bits, _mm_cvtsi32_si128(sub_hi - 4)),
          bit5);
      const __m256i q_lo = _mm256_or_si256(_mm256_and_si256(packed, low4), fifth_lo);
      const __m256i q_hi =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 4), low4), fifth_hi);
      sums = _mm256_add_epi32(sums, scaled_dot_pair(q_lo, q_hi, x[b].qs + 64 * chunk,
                                                    sm.scales[sub_lo], sm.scales[sub_hi]));
    }
    const __m256 d = _mm256_set1_ps(fp16_scalar(w[b].d) * x[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc);
  }
  return horizontal_sum(acc) - sum_mins;
}

// Q6_K: quants 0..63 with offset 32. (q - 32) . a = q . a - 32 * sum(a), both
// from maddubs (q unsigned); the offset term uses 32 as the unsigned operand.
float dot_q6_k(int64_t n, const std::byte* weight_row, const std::byte* activations) {
  const auto* w = blocks_at<BlockQ6K>(weight_row);
  const auto* x = blocks_at<BlockQ8K>(activations);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i low2 = _mm256_set1_epi8(0x03);
  const __m256i offset = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kBlockElemsK; ++b) {
    const BlockQ6K& block = w[b];
    const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block.scales));
    __m256i sums = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {  // 128 elements: quarters k = 0..3 of 32
      const __m256i ql0 = load_bytes_32(block.ql + 64 * half);       // quarters 0 (low), 2 (high)
      const __m256i ql1 = load_bytes_32(block.ql + 64 * half + 32);  // quarters 1 (low), 3 (high)
      const __m256i qh = load_bytes_32(block.qh + 32 * half);        // 2 bits per quarter
      const __m256i quants[4] = {
          _mm256_or_si256(_mm256_and_si256(ql0, low4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4)),
          _mm256_or_si256(_mm256_and_si256(ql1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4)),
      };
      for (int quarter = 0; quarter < 4; ++quarter) {
        const int8_t* a = x[b].qs + 128 * half + 32 * quarter;
        const __m256i activation = load_bytes_32(a);
        const __m256i pairs = _mm256_sub_epi16(_mm256_maddubs_epi16(quants[quarter], activation),
                                               _mm256_maddubs_epi16(offset, activation));
        // The quarter's two 16-element sub-blocks: int16 lanes 0..7 take
        // scale 2s, lanes 8..15 scale 2s + 1 (s = sub-block pair index).
        const int pair = 4 * half + quarter;
        const __m128i pick = _mm_set_epi64x(0x0101010101010101LL * (2 * pair + 1),
                                            0x0101010101010101LL * (2 * pair));
        const __m256i scale = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, pick));
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(scale, pairs));
      }
    }
    const __m256 d = _mm256_set1_ps(fp16_scalar(block.d) * x[b].d);
    acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc);
  }
  return horizontal_sum(acc);
}

}  // namespace

const VecDotKernelSet& vec_dot_kernels_avx2() {
  static constexpr VecDotKernelSet kKernels = {
      .f32 = dot_float_weights<4, load8_f32, decode_f32>,
      .f16 = dot_float_weights<2, load8_f16, decode_f16>,
      .bf16 = dot_float_weights<2, load8_bf16, decode_bf16>,
      .q8_0 = dot_blocks_0<BlockQ8_0, unpack_q8_0>,
      .q4_0 = dot_blocks_0<BlockQ4_0, unpack_q4_0>,
      .q4_k = dot_q4_k,
      .q5_k = dot_q5_k,
      .q6_k = dot_q6_k,
  };
  return kKernels;
}

}  // namespace strata

#endif  // x86
