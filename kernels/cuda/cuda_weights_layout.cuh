// The repacked layout of a CudaWeightMatrix (cuda_weights.h), for both sides:
// the block sizes cuda_weights.cu repacks with, and the device decoders that
// every kernel reading the matrix shares (matvec, dequantize, gather).
//
// Each row is two arrays: quants (quant_row_bytes) and meta (meta_row_bytes,
// a multiple of 16). Bytes are the file's, moved but never changed; nb is the
// number of blocks in a row:
//   type            quants                      meta
//   F32, F16, BF16  the row as the file has it  none
//   Q8_0            per block qs[32] (int8)     nb x fp16 d
//   Q4_0            per block qs[16]            nb x fp16 d
//   Q4_K            per block qs[128]           per block d, dmin, scales[12]
//   Q5_K            per block qs[128], qh[32]   per block d, dmin, scales[12]
//   Q6_K            per block ql[128], qh[64]   nb x scales[16], then nb x fp16 d
// so a block type's quants are 16-byte chunks, and a warp reading consecutive
// chunks reads consecutive memory (Q8_0 rows, which sit at 2-byte offsets in
// the file, are 16-byte aligned here).
//
// Kernels walk a row in units. A unit is one 16-byte chunk of the quants (for
// Q5_K / Q6_K the qs / ql chunk; its qh bytes come from the chunk beside it),
// decoded into kRuns runs of kRunLen consecutive elements of the row:
//   value = q * scale - min     (Q4_K, Q5_K: 32 elements in 2 runs of 16)
//   value = q * scale           (Q4_0: 32 in 2 runs; Q6_K: 32 in 2; Q8_0: 16 in 1)
//   value = q                   (F16 / BF16: 8 in 1 run; F32: 4 in 1 run)
// where q is the stored integer held exactly in a float (for plain types, the
// value itself). A block's units are consecutive, so a row has
// row_length / (kRuns * kRunLen) of them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/cuda_weights.h"
#include "kernels/weight_type.h"

namespace strata::cuda_layout {

// ---------------------------------------------------------------------------
// Host and device: bytes per block of the repacked arrays.

struct RepackedBlock {
  int elems;        // elements per block; 0: no CUDA kernels for the type
  int quant_bytes;  // quants bytes per block
  int meta_bytes;   // meta bytes per block (before the row's padding to 16)
};

constexpr RepackedBlock repacked_block(WeightType type) {
  switch (type) {
    case WeightType::kF32:
      return {1, 4, 0};
    case WeightType::kF16:
      return {1, 2, 0};
    case WeightType::kBF16:
      return {1, 2, 0};
    case WeightType::kQ8_0:
      return {32, 32, 2};
    case WeightType::kQ4_0:
      return {32, 16, 2};
    case WeightType::kQ4_K:
      return {256, 128, 16};
    case WeightType::kQ5_K:
      return {256, 160, 16};
    case WeightType::kQ6_K:
      return {256, 192, 18};
    default:
      return {0, 0, 0};
  }
}

constexpr bool is_plain(WeightType type) {
  return type == WeightType::kF32 || type == WeightType::kF16 || type == WeightType::kBF16;
}

constexpr int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// ---------------------------------------------------------------------------
// Device: a matrix and one of its rows.

struct RowView {
  const uint8_t* quants;
  const uint8_t* meta;
  int n_blocks;  // blocks in the row (Q6_K's d values follow its nb scale groups)
};

struct MatrixView {
  const uint8_t* quants;  // n_rows x quant_row_bytes
  const uint8_t* meta;    // n_rows x meta_row_bytes
  int64_t quant_row_bytes;
  int64_t meta_row_bytes;
  int64_t n_rows;
  int row_length;  // elements (the host checks it fits an int)
  int n_blocks;    // row_length / block elements

  __device__ RowView row(int64_t r) const {
    return {quants + r * quant_row_bytes, meta + r * meta_row_bytes, n_blocks};
  }
};

inline MatrixView matrix_view(const CudaWeightMatrix& w) {
  return {static_cast<const uint8_t*>(w.quants()),
          static_cast<const uint8_t*>(w.meta()),
          w.quant_row_bytes(),
          w.meta_row_bytes(),
          w.n_rows(),
          static_cast<int>(w.row_length()),
          static_cast<int>(w.row_length() / repacked_block(w.type()).elems)};
}

// ---------------------------------------------------------------------------
// Device: loads and bit tricks.

// 16 bytes of quants (16-byte aligned). Weights are read once per product and
// never written while kernels run: the non-coherent path, not kept in L1 so
// that L1 holds what is reused.
__device__ __forceinline__ uint4 load_chunk(const uint8_t* at) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(at));
  return v;
}

__device__ __forceinline__ uint32_t load_u16(const uint8_t* at) {
  return __ldg(reinterpret_cast<const unsigned short*>(at));
}

__device__ __forceinline__ float fp16_bits_to_float(uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xffffu)));
}

// Byte n (0..3) of `word`, minus kBias, as an exact float: prmt puts the byte
// in the mantissa of 2^23 (0x4B000000), and 2^23 + kBias is subtracted. One
// byte permute and one add per element; an int-to-float conversion runs at a
// fraction of that rate.
template <int kBias>
__device__ __forceinline__ float byte_value(uint32_t word, int n) {
  return __int_as_float(static_cast<int>(__byte_perm(word, 0x4B000000u, 0x7540u | n))) -
         (8388608.0f + static_cast<float>(kBias));
}

// The four bytes of `word` into out[0..3].
template <int kBias>
__device__ __forceinline__ void bytes_to_floats(uint32_t word, float* out) {
#pragma unroll
  for (int n = 0; n < 4; ++n) out[n] = byte_value<kBias>(word, n);
}

__device__ __forceinline__ void chunk_words(uint4 chunk, uint32_t (&words)[4]) {
  words[0] = chunk.x;
  words[1] = chunk.y;
  words[2] = chunk.z;
  words[3] = chunk.w;
}

// ---------------------------------------------------------------------------
// Device: units. Each Unit<type> has
//   kRuns, kRunLen, kUnitsPerBlock, kHasScale, kHasMin
//   Run                            one decoded run
//   Raw load(row, u)               the unit's bytes (issue all loads first)
//   int run_offset(u, run)         row element of the run's first element
//   void decode(raw, u, run, out)  the run's exact integers q, its scale and min

template <int kRunLen_>
struct RunValues {
  static constexpr int kRunLen = kRunLen_;
  float q[kRunLen];
  float scale;  // with kHasScale: d * sub-block scale, rounded as the CPU does
  float min;    // with kHasMin: dmin * sub-block min
};

template <WeightType kType>
struct Unit;

// F32 / F16 / BF16: the unit is 16 bytes of the row as stored (the caller
// makes sure rows are a multiple of 16 bytes).
template <int kElems>
struct PlainUnit {
  static constexpr int kRuns = 1, kRunLen = kElems, kUnitsPerBlock = 1;
  static constexpr bool kHasScale = false, kHasMin = false;
  using Run = RunValues<kElems>;
  struct Raw {
    uint32_t words[4];
  };
  static __device__ Raw load(const RowView& row, int u) {
    const uint4 w = load_chunk(row.quants + 16 * u);
    return {{w.x, w.y, w.z, w.w}};
  }
  static __device__ int run_offset(int u, int /*run*/) { return kElems * u; }
};

template <>
struct Unit<WeightType::kF32> : PlainUnit<4> {
  static __device__ void decode(const Raw& raw, int /*u*/, int /*run*/, Run& v) {
#pragma unroll
    for (int i = 0; i < 4; ++i) v.q[i] = __uint_as_float(raw.words[i]);
  }
};

template <>
struct Unit<WeightType::kF16> : PlainUnit<8> {
  static __device__ void decode(const Raw& raw, int /*u*/, int /*run*/, Run& v) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v.q[2 * i] = fp16_bits_to_float(raw.words[i]);
      v.q[2 * i + 1] = fp16_bits_to_float(raw.words[i] >> 16);
    }
  }
};

template <>
struct Unit<WeightType::kBF16> : PlainUnit<8> {
  static __device__ void decode(const Raw& raw, int /*u*/, int /*run*/, Run& v) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // bf16 is the top half of a float
      v.q[2 * i] = __uint_as_float(raw.words[i] << 16);
      v.q[2 * i + 1] = __uint_as_float(raw.words[i] & 0xffff0000u);
    }
  }
};

// Q8_0: unit u is half of block u / 2; x = d * q.
template <>
struct Unit<WeightType::kQ8_0> {
  static constexpr int kRuns = 1, kRunLen = 16, kUnitsPerBlock = 2, kQuantBlockBytes = 32;
  static constexpr bool kHasScale = true, kHasMin = false;
  using Run = RunValues<kRunLen>;
  struct Raw {
    uint4 qs;
    uint32_t d;  // fp16 bits
  };
  static __device__ Raw load(const RowView& row, int u) {
    return {load_chunk(row.quants + 16 * u), load_u16(row.meta + 2 * (u / 2))};
  }
  static __device__ int run_offset(int u, int /*run*/) { return 16 * u; }
  static __device__ void decode(const Raw& raw, int /*u*/, int /*run*/, Run& v) {
    uint32_t words[4];
    chunk_words(raw.qs, words);
    // int8 q: flipping the sign bit gives q + 128 as an unsigned byte.
#pragma unroll
    for (int i = 0; i < 4; ++i) bytes_to_floats<128>(words[i] ^ 0x80808080u, &v.q[4 * i]);
    v.scale = fp16_bits_to_float(raw.d);
  }
};

// Q4_0: unit u is block u; run 0 the low nibbles (elements 0..15), run 1 the
// high nibbles (16..31); x = d * (q - 8).
template <>
struct Unit<WeightType::kQ4_0> {
  static constexpr int kRuns = 2, kRunLen = 16, kUnitsPerBlock = 1, kQuantBlockBytes = 16;
  static constexpr bool kHasScale = true, kHasMin = false;
  using Run = RunValues<kRunLen>;
  struct Raw {
    uint4 qs;
    uint32_t d;  // fp16 bits
  };
  static __device__ Raw load(const RowView& row, int u) {
    return {load_chunk(row.quants + 16 * u), load_u16(row.meta + 2 * u)};
  }
  static __device__ int run_offset(int u, int run) { return 32 * u + 16 * run; }
  static __device__ void decode(const Raw& raw, int /*u*/, int run, Run& v) {
    uint32_t words[4];
    chunk_words(raw.qs, words);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      bytes_to_floats<8>((words[i] >> (4 * run)) & 0x0f0f0f0fu, &v.q[4 * i]);
    v.scale = fp16_bits_to_float(raw.d);
  }
};

// Q4_K and Q5_K share their unit geometry: chunk k = u % 8 of a block holds
// qs bytes 16k..16k+15, i.e. l = 16 (k % 2) + i of the 32-byte group c = k / 2,
// whose low nibbles are elements 64c + l (sub-block 2c, run 0) and high
// nibbles 64c + 32 + l (sub-block 2c + 1, run 1).
struct K4Unit {
  static constexpr int kRuns = 2, kRunLen = 16, kUnitsPerBlock = 8;
  static constexpr bool kHasScale = true, kHasMin = true;
  using Run = RunValues<kRunLen>;
  static __device__ int run_offset(int u, int run) {
    const int k = u % 8;
    return 256 * (u / 8) + 64 * (k / 2) + 16 * (k % 2) + 32 * run;
  }
  // The run's scale and min: sub-block j = 2c + run of the block whose 16
  // meta bytes (d, dmin, scales[12]) are `meta`, rounded as dequantize_q4_k
  // does. unpack_k4_scale_min (quant_blocks.h) for 4 sub-blocks at once, one
  // per byte: j < 4 from bytes 0..3 (scales) and 4..7 (mins) masked to 6 bits;
  // j >= 4 the low 4 bits from bytes 8..11, the top 2 from bits 6-7 of bytes
  // 0..3 (scales) and 4..7 (mins).
  static __device__ void scale_min(uint4 meta, int u, int run, Run& v) {
    const int c = (u % 8) / 2;
    uint32_t scales, mins;  // the 6-bit values of sub-blocks 0..3 (c < 2) or 4..7
    if (c < 2) {
      scales = meta.y & 0x3f3f3f3fu;
      mins = meta.z & 0x3f3f3f3fu;
    } else {
      scales = (meta.w & 0x0f0f0f0fu) | ((meta.y >> 2) & 0x30303030u);
      mins = ((meta.w >> 4) & 0x0f0f0f0fu) | ((meta.z >> 2) & 0x30303030u);
    }
    const int n = (2 * c + run) % 4;
    v.scale = __fmul_rn(fp16_bits_to_float(meta.x), byte_value<0>(scales, n));
    v.min = __fmul_rn(fp16_bits_to_float(meta.x >> 16), byte_value<0>(mins, n));
  }
  static __device__ uint4 load_meta(const RowView& row, int u) {
    return __ldg(reinterpret_cast<const uint4*>(row.meta + 16 * (u / 8)));
  }
};

template <>
struct Unit<WeightType::kQ4_K> : K4Unit {
  static constexpr int kQuantBlockBytes = 128;
  struct Raw {
    uint4 qs;
    uint4 meta;
  };
  static __device__ Raw load(const RowView& row, int u) {
    return {load_chunk(row.quants + 16 * u), load_meta(row, u)};
  }
  static __device__ void decode(const Raw& raw, int u, int run, Run& v) {
    uint32_t words[4];
    chunk_words(raw.qs, words);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      bytes_to_floats<0>((words[i] >> (4 * run)) & 0x0f0f0f0fu, &v.q[4 * i]);
    scale_min(raw.meta, u, run, v);
  }
};

// Q5_K: as Q4_K, plus the fifth bits: for qs byte l (< 32) of group c, bit 2c
// of qh[l] (low nibble, run 0) and bit 2c + 1 (high nibble, run 1). Unit u
// needs qh bytes 16 (u % 2) .. + 15, of the qh that follows the block's qs.
template <>
struct Unit<WeightType::kQ5_K> : K4Unit {
  static constexpr int kQuantBlockBytes = 160;
  struct Raw {
    uint4 qs;
    uint4 qh;
    uint4 meta;
  };
  static __device__ Raw load(const RowView& row, int u) {
    const uint8_t* block = row.quants + kQuantBlockBytes * (u / 8);
    return {load_chunk(block + 16 * (u % 8)), load_chunk(block + 128 + 16 * (u % 2)),
            load_meta(row, u)};
  }
  static __device__ void decode(const Raw& raw, int u, int run, Run& v) {
    const int bit = 2 * ((u % 8) / 2) + run;
    uint32_t qs[4], qh[4];
    chunk_words(raw.qs, qs);
    chunk_words(raw.qh, qh);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t q =
          ((qs[i] >> (4 * run)) & 0x0f0f0f0fu) | (((qh[i] >> bit) & 0x01010101u) << 4);
      bytes_to_floats<0>(q, &v.q[4 * i]);
    }
    scale_min(raw.meta, u, run, v);
  }
};

// Q6_K: unit u is ql chunk q = u % 8 of its block: half h = q / 4, ql bytes
// j = 16 (q % 4) + i of the half, i.e. l = 16 (q % 2) + i with kk = (q % 4) / 2.
// Low nibbles (run 0) are elements 128h + 32kk + l with qh bits 2kk, high
// nibbles (run 1) 128h + 32(kk + 2) + l with qh bits 2kk + 4, of qh byte
// 32h + l: the qh chunk 2h + q % 2. Scales: sub-block 8h + 2kk + q % 2 (run 0)
// and 4 more (run 1). x = d * scale * (q - 32).
template <>
struct Unit<WeightType::kQ6_K> {
  static constexpr int kRuns = 2, kRunLen = 16, kUnitsPerBlock = 8, kQuantBlockBytes = 192;
  static constexpr bool kHasScale = true, kHasMin = false;
  using Run = RunValues<kRunLen>;
  struct Raw {
    uint4 ql;
    uint4 qh;
    int scale[2];  // the runs' int8 sub-block scales
    uint32_t d;    // fp16 bits
  };
  static __device__ Raw load(const RowView& row, int u) {
    const int b = u / 8, q = u % 8, h = q / 4, kk = (q % 4) / 2, odd = q % 2;
    const uint8_t* block = row.quants + kQuantBlockBytes * b;
    const auto* scales =
        reinterpret_cast<const signed char*>(row.meta) + 16 * b + 8 * h + 2 * kk + odd;
    return {load_chunk(block + 16 * q),
            load_chunk(block + 128 + 16 * (2 * h + odd)),
            {__ldg(scales), __ldg(scales + 4)},
            load_u16(row.meta + 16 * row.n_blocks + 2 * b)};
  }
  static __device__ int run_offset(int u, int run) {
    const int q = u % 8;
    return 256 * (u / 8) + 128 * (q / 4) + 32 * ((q % 4) / 2) + 16 * (q % 2) + 64 * run;
  }
  static __device__ void decode(const Raw& raw, int u, int run, Run& v) {
    const int shift = 2 * ((u % 4) / 2) + 4 * run;  // qh bits of the run
    uint32_t ql[4], qh[4];
    chunk_words(raw.ql, ql);
    chunk_words(raw.qh, qh);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t q =
          ((ql[i] >> (4 * run)) & 0x0f0f0f0fu) | (((qh[i] >> shift) & 0x03030303u) << 4);
      bytes_to_floats<32>(q, &v.q[4 * i]);
    }
    v.scale = __fmul_rn(fp16_bits_to_float(raw.d), static_cast<float>(raw.scale[run]));
  }
};

template <WeightType kType>
constexpr int kUnitElems = Unit<kType>::kRuns* Unit<kType>::kRunLen;

// The units' block sizes are the repacked ones.
template <WeightType kType>
constexpr bool unit_matches_block() {
  return Unit<kType>::kQuantBlockBytes == repacked_block(kType).quant_bytes &&
         kUnitElems<kType> * Unit<kType>::kUnitsPerBlock == repacked_block(kType).elems;
}
static_assert(unit_matches_block<WeightType::kQ8_0>() && unit_matches_block<WeightType::kQ4_0>() &&
              unit_matches_block<WeightType::kQ4_K>() && unit_matches_block<WeightType::kQ5_K>() &&
              unit_matches_block<WeightType::kQ6_K>());

// Element i of a run as the CPU dequantizer computes it, bit for bit: a
// product (and difference) each rounded on its own, never fused.
template <WeightType kType>
__device__ __forceinline__ float exact_value(const typename Unit<kType>::Run& v, int i) {
  if constexpr (Unit<kType>::kHasMin) {
    return __fsub_rn(__fmul_rn(v.scale, v.q[i]), v.min);
  } else if constexpr (Unit<kType>::kHasScale) {
    return __fmul_rn(v.scale, v.q[i]);
  } else {
    return v.q[i];
  }
}

// Element e of a plain (F32 / F16 / BF16) row, at any alignment of the row.
template <WeightType kType>
__device__ __forceinline__ float plain_value(const uint8_t* row, int64_t e) {
  static_assert(is_plain(kType));
  if constexpr (kType == WeightType::kF32) {
    return __ldg(reinterpret_cast<const float*>(row) + e);
  } else if constexpr (kType == WeightType::kF16) {
    return fp16_bits_to_float(load_u16(row + 2 * e));
  } else {
    return __uint_as_float(load_u16(row + 2 * e) << 16);
  }
}

}  // namespace strata::cuda_layout
