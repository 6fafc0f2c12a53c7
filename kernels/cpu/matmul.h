// Matrix products straight from quantized weights: the CPU backend's hot path.
// Never dequantizes a whole matrix: each row is dotted in its own format
// (8-bit quantized activations for the integer dot products, as ggml does;
// f32 activations for F32 / F16 / BF16 weights). See kernels/cpu/vec_dot.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/cpu/cpu_features.h"
#include "kernels/weight_type.h"

namespace strata {

class ThreadPool;

// A weight matrix as GGUF stores it: n_rows rows of row_length elements,
// each row weight_bytes(type, row_length) bytes, rows contiguous. `data` may
// sit at any address (an mmap'd file).
struct WeightMatrix {
  WeightType type = WeightType::kF32;
  const std::byte* data = nullptr;
  int64_t n_rows = 0;      // output features
  int64_t row_length = 0;  // input features
};

// y[t * w.n_rows + r] = dot(row r of w, x[t * w.row_length ...]) for every
// token t in [0, n_tokens). x: n_tokens x row_length f32, y: n_tokens x n_rows.
//
// w.type must have a CPU kernel (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K,
// Q6_K) and row_length must be a whole number of its blocks (32 for Q8_0 /
// Q4_0, 256 for the K types); spans must have exactly those sizes; x and y
// must not overlap. Anything else is a bug and aborts.
//
// Runs on `pool` (call from the thread that owns it). Results do not depend
// on the number of threads: each output is computed by the same code whichever
// thread runs it, so 1 and N threads give identical bits.
void matmul(const WeightMatrix& w, std::span<const float> x, int64_t n_tokens,
            std::span<float> y, ThreadPool& pool);

// As above on an explicit SIMD path (cpu_supports(simd) must hold); the
// overload above uses selected_cpu_simd(). For tests and benchmarks.
void matmul(const WeightMatrix& w, std::span<const float> x, int64_t n_tokens,
            std::span<float> y, ThreadPool& pool, CpuSimd simd);

}  // namespace strata
