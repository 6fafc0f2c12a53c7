// matmul(): indexing (each output is exactly the vec_dot of its row and
// token), SIMD vs scalar, agreement with a dequantize-then-f32 reference,
// and identical bits for any number of threads.
#include "kernels/cpu/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "kernels/cpu/activation_quant.h"
#include "kernels/cpu/vec_dot.h"
#include "tests/kernels/dot_reference.h"

namespace strata {
namespace {

using testing::ActivationRow;
using testing::dot_double;
using testing::kMatmulTypes;
using testing::make_activation_row;
using testing::norm2;
using testing::random_row;

struct Shape {
  int64_t n_rows;
  int64_t row_length;
  int64_t n_tokens;
};

// A random weight matrix of `type` and its decoded floats.
struct Matrix {
  WeightMatrix w;
  std::vector<std::byte> bytes;
  std::vector<float> decoded;  // n_rows x row_length
};

Matrix make_matrix(WeightType type, int64_t n_rows, int64_t row_length, uint32_t seed) {
  Matrix m;
  const std::vector<float> values =
      random_row(static_cast<size_t>(n_rows * row_length), 0.02f, seed);
  m.bytes = quantize(type, values);
  m.decoded.resize(values.size());
  dequantize(type, m.bytes, m.decoded);
  m.w = {.type = type, .data = m.bytes.data(), .n_rows = n_rows, .row_length = row_length};
  return m;
}

std::vector<float> run_matmul(const Matrix& m, const std::vector<float>& x, int64_t n_tokens,
                              ThreadPool& pool, CpuSimd simd) {
  std::vector<float> y(static_cast<size_t>(n_tokens * m.w.n_rows), NAN);
  matmul(m.w, x, n_tokens, y, pool, simd);
  return y;
}

// Seeded random shapes: row lengths multiples of 256, odd row counts, 1..9 tokens.
std::vector<Shape> random_shapes(uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t row_counts[] = {1, 2, 3, 7, 16, 33, 100, 129};
  std::vector<Shape> shapes;
  for (int i = 0; i < 6; ++i) {
    shapes.push_back({.n_rows = row_counts[rng() % 8],
                      .row_length = 256 * (1 + static_cast<int64_t>(rng() % 12)),
                      .n_tokens = 1 + static_cast<int64_t>(rng() % 9)});
  }
  shapes.push_back({.n_rows = 5, .row_length = 8192, .n_tokens = 9});  // several token tiles
  return shapes;
}

using testing::activation_error_bound;
using testing::kRoundingTolerance;

TEST(MatmulTest, MatchesReferences) {
  ThreadPool pool(3);
  uint32_t seed = 100;
  for (WeightType type : kMatmulTypes) {
    for (const Shape& shape : random_shapes(static_cast<uint32_t>(type))) {
      ++seed;
      SCOPED_TRACE(std::string(weight_type_name(type)) + " rows=" + std::to_string(shape.n_rows) +
                   " len=" + std::to_string(shape.row_length) +
                   " tokens=" + std::to_string(shape.n_tokens));
      const Matrix m = make_matrix(type, shape.n_rows, shape.row_length, seed);
      const std::vector<float> x =
          random_row(static_cast<size_t>(shape.n_tokens * shape.row_length), 1.0f, seed + 1);
      const std::vector<float> y_scalar = run_matmul(m, x, shape.n_tokens, pool, CpuSimd::kScalar);
      std::vector<float> y_simd;
      if (cpu_supports(CpuSimd::kAvx2))
        y_simd = run_matmul(m, x, shape.n_tokens, pool, CpuSimd::kAvx2);

      const auto len = static_cast<size_t>(shape.row_length);
      for (int64_t t = 0; t < shape.n_tokens; ++t) {
        const std::span<const float> x_t(x.data() + t * shape.row_length, len);
        const ActivationRow a = make_activation_row(type, x_t);
        for (int64_t r = 0; r < shape.n_rows; ++r) {
          const size_t out = static_cast<size_t>(t * shape.n_rows + r);
          const std::span<const float> w_r(m.decoded.data() + r * shape.row_length, len);
          const std::byte* row_bytes =
              m.bytes.data() + r * static_cast<int64_t>(m.bytes.size()) / shape.n_rows;
          // Exactly the scalar kernel on this row and token.
          ASSERT_EQ(y_scalar[out], vec_dot_kernel(type, CpuSimd::kScalar)(
                                       shape.row_length, row_bytes, a.bytes.data()))
              << "row " << r << " token " << t;
          const double float_ref = dot_double(w_r, x_t);
          EXPECT_LE(std::fabs(y_scalar[out] - float_ref),
                    activation_error_bound(type) * norm2(w_r) * norm2(x_t))
              << "row " << r << " token " << t;
          if (!y_simd.empty()) {
            EXPECT_LE(std::fabs(y_simd[out] - y_scalar[out]),
                      kRoundingTolerance * testing::abs_dot(w_r, a.decoded))
                << "row " << r << " token " << t;
          }
        }
      }
    }
  }
}

TEST(MatmulTest, ThreadCountDoesNotChangeBits) {
  ThreadPool one(1), two(2), four(4);
  for (WeightType type : kMatmulTypes) {
    for (CpuSimd simd : {CpuSimd::kScalar, CpuSimd::kAvx2}) {
      if (!cpu_supports(simd)) continue;
      SCOPED_TRACE(std::string(weight_type_name(type)) + " " + std::string(cpu_simd_name(simd)));
      const Matrix m = make_matrix(type, 77, 1024, 7);
      const std::vector<float> x = random_row(5 * 1024, 1.0f, 8);
      const std::vector<float> y1 = run_matmul(m, x, 5, one, simd);
      const std::vector<float> y2 = run_matmul(m, x, 5, two, simd);
      const std::vector<float> y4 = run_matmul(m, x, 5, four, simd);
      EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(y1.data(), y4.data(), y1.size() * sizeof(float)), 0);
    }
  }
}

TEST(MatmulTest, DefaultPathIsTheSelectedOne) {
  ThreadPool pool(2);
  const Matrix m = make_matrix(WeightType::kQ4_K, 9, 512, 9);
  const std::vector<float> x = random_row(2 * 512, 1.0f, 10);
  std::vector<float> y(2 * 9);
  matmul(m.w, x, 2, y, pool);
  EXPECT_EQ(y, run_matmul(m, x, 2, pool, selected_cpu_simd()));
}

TEST(MatmulTest, EmptyShapes) {
  ThreadPool pool(2);
  const Matrix m = make_matrix(WeightType::kQ8_0, 4, 64, 11);
  std::vector<float> y;
  matmul(m.w, {}, 0, y, pool);  // no tokens
  WeightMatrix no_rows = m.w;
  no_rows.n_rows = 0;
  const std::vector<float> x(64, 1.0f);
  matmul(no_rows, x, 1, y, pool);
}

TEST(MatmulDeathTest, BadShapesAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ThreadPool pool(1);
  const Matrix m = make_matrix(WeightType::kQ4_K, 4, 256, 12);
  std::vector<float> x(256), y(4);
  EXPECT_DEATH(matmul(m.w, std::span<const float>(x).first(255), 1, y, pool), "x has");
  EXPECT_DEATH(matmul(m.w, x, 1, std::span<float>(y).first(3), pool), "y has");
  WeightMatrix ragged = m.w;
  ragged.row_length = 128;  // half a K block
  EXPECT_DEATH(matmul(ragged, std::span<const float>(x).first(128), 1, y, pool), "whole number");
}

}  // namespace
}  // namespace strata
