// CudaWeightMatrix, CudaMatmul and cuda_gather_rows against the CPU: random
// weights quantized by the CPU quantizers, every weight type, many shapes,
// every path (tensor cores from the blocks for decode batches, the f32
// matrix-vector kernel for the other types' decode batches, cuBLAS above).
//
// The reference is float64 dot products of the dequantized weights with the
// f32 inputs. The CPU matmul itself quantizes activations to 8 bits for the
// block types, so it is compared too, with that error's tolerance. Outputs
// start as NaN, so an output a kernel does not write fails the comparison.
#include "kernels/cuda/cuda_matmul.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/cuda_kquant_decode.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_quant_mma.h"
#include "kernels/cuda/cuda_weights.h"
#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata {
namespace {

using testing::cuda_available;
using testing::poisoned_floats;
using testing::random_floats;
using testing::relative_error;
using testing::to_device;
using testing::to_host;

constexpr WeightType kTypes[] = {WeightType::kF32,  WeightType::kF16,  WeightType::kBF16,
                                 WeightType::kQ8_0, WeightType::kQ4_0, WeightType::kQ4_K,
                                 WeightType::kQ5_K, WeightType::kQ6_K};

// Error bounds (scaled_error below). The matrix-vector kernel computes in f32
// from f32 x: only rounding and summation order differ from the float64
// reference. The tensor-core kernel and cuBLAS round x (and block-type
// weights) to f16 / bf16: ~7e-4 a product.
constexpr double kVectorTolerance = 1e-4;
constexpr double kMmaTolerance = 3e-3;
constexpr double kGemmF32Tolerance = 1e-4;
constexpr double kGemmHalfTolerance = 1e-2;
// Against the CPU matmul: its 8-bit activations for the block types (~7e-3);
// the same for the integer decode kernel's (cuda_kquant_decode.h) against float64.
constexpr double kCpuTolerance = 3e-2;
// Reference cost bound per case (multiply-adds), to keep the test quick.
constexpr int64_t kMaxReferenceMacs = int64_t{160} << 20;

constexpr int64_t kRowCounts[] = {1, 7, 33, 256, 1000};
constexpr int64_t kVectorTokenCounts[] = {1, 2, 3, 4, 5, 6, 7, 8};
constexpr int64_t kGemmTokenCounts[] = {9, 16, 17, 32, 33, 64, 65, 300};

bool is_k_type(WeightType type) {
  return type == WeightType::kQ4_K || type == WeightType::kQ5_K || type == WeightType::kQ6_K;
}
bool is_plain(WeightType type) {
  return type == WeightType::kF32 || type == WeightType::kF16 || type == WeightType::kBF16;
}

// Row lengths per type: whole blocks; plain types also rows that are not a
// multiple of 16 bytes (7) or of the kernel's 256-element tiles (100).
std::vector<int64_t> row_lengths(WeightType type) {
  if (is_k_type(type)) return {256, 512, 4096};
  if (is_plain(type)) return {7, 100, 256, 512, 4096};
  return {32, 96, 256, 512, 4096};
}

class Stream {
 public:
  Stream() { STRATA_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// A random matrix as a GGUF file holds it, and the floats it decodes to.
struct HostMatrix {
  WeightType type;
  int64_t n_rows;
  int64_t row_length;
  std::vector<std::byte> bytes;
  std::vector<float> decoded;  // n_rows x row_length

  WeightMatrix view() const {
    return {.type = type, .data = bytes.data(), .n_rows = n_rows, .row_length = row_length};
  }
};

HostMatrix make_matrix(WeightType type, int64_t n_rows, int64_t row_length, std::mt19937& rng) {
  HostMatrix m{type, n_rows, row_length, {}, {}};
  const std::vector<float> values =
      random_floats(static_cast<size_t>(n_rows * row_length), rng, 0.05f);
  m.bytes = quantize(type, values);
  m.decoded.resize(values.size());
  dequantize(type, m.bytes, m.decoded);
  return m;
}

// y[t][r] = decoded row r . x[t] in float64, and the size of its products,
// sqrt(sum_i (w_i x_i)^2): the scale of any rounding in the sum (a dot
// product of random rows can cancel to near zero; its rounding does not).
struct Reference {
  std::vector<float> y;      // n_tokens x n_rows
  std::vector<float> scale;  // n_tokens x n_rows
};

Reference reference(const HostMatrix& m, const std::vector<float>& x, int64_t n_tokens) {
  const auto n_out = static_cast<size_t>(n_tokens * m.n_rows);
  Reference ref{std::vector<float>(n_out), std::vector<float>(n_out)};
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x.data() + t * m.row_length;
    for (int64_t r = 0; r < m.n_rows; ++r) {
      const float* w = m.decoded.data() + r * m.row_length;
      double sum = 0.0, squares = 0.0;
      for (int64_t i = 0; i < m.row_length; ++i) {
        const double product = static_cast<double>(w[i]) * xt[i];
        sum += product;
        squares += product * product;
      }
      ref.y[t * m.n_rows + r] = static_cast<float>(sum);
      ref.scale[t * m.n_rows + r] = static_cast<float>(std::sqrt(squares));
    }
  }
  return ref;
}

// ||out - expected|| / ||ref.scale||: the relative error, each output
// weighed by the size of its products. Infinite if out holds a NaN.
double scaled_error(std::span<const float> out, std::span<const float> expected,
                    const Reference& ref) {
  if (out.size() != expected.size() || out.size() != ref.scale.size()) return INFINITY;
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i])) return INFINITY;
    const double d = static_cast<double>(out[i]) - expected[i];
    diff += d * d;
    norm += static_cast<double>(ref.scale[i]) * ref.scale[i];
  }
  return std::sqrt(diff / norm);
}

std::vector<float> cpu_matmul(const HostMatrix& m, const std::vector<float>& x, int64_t n_tokens,
                              ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n_tokens * m.n_rows));
  matmul(m.view(), x, n_tokens, y, pool);
  return y;
}

// Runs the product on the device, y poisoned with NaN first. x_offset places
// x that many floats into its buffer (1: an x that is not 16-byte aligned).
std::vector<float> cuda_matmul(CudaMatmul& mm, const CudaWeightMatrix& w,
                               const std::vector<float>& x, int64_t n_tokens, size_t x_offset = 0) {
  std::vector<float> padded(x_offset, 0.0f);
  padded.insert(padded.end(), x.begin(), x.end());
  const DeviceBuffer dx = to_device(padded);
  const auto n_out = static_cast<size_t>(n_tokens * w.n_rows());
  const DeviceBuffer dy = poisoned_floats(n_out);
  mm.run(w, dx.as<float>() + x_offset, n_tokens, dy.as<float>());
  return to_host<float>(dy, n_out);
}

double gemm_tolerance(WeightType type) {
  return type == WeightType::kF32 ? kGemmF32Tolerance : kGemmHalfTolerance;
}

// Which kernel CudaMatmul::run picks, as its tolerance.
double vector_tolerance(const CudaWeightMatrix& w, int64_t n_tokens) {
  if (cuda_kquant_decode_supports(w, n_tokens)) return kCpuTolerance;
  return cuda_mma_supports(w, n_tokens) ? kMmaTolerance : kVectorTolerance;
}

std::string describe(const HostMatrix& m, int64_t n_tokens) {
  return std::string(weight_type_name(m.type)) + " " + std::to_string(m.n_rows) + " x " +
         std::to_string(m.row_length) + ", " + std::to_string(n_tokens) + " tokens";
}

class CudaMatmulTypeTest : public ::testing::TestWithParam<WeightType> {};

// Every shape at the given token counts: against float64 and the CPU matmul.
// tolerance < 0: the decode kernels' own (vector_tolerance).
void check_products(WeightType type, std::span<const int64_t> token_counts, double tolerance,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  ThreadPool pool;
  Stream stream;
  CudaMatmul mm(stream.get());
  for (int64_t row_length : row_lengths(type)) {
    for (int64_t n_rows : kRowCounts) {
      const HostMatrix m = make_matrix(type, n_rows, row_length, rng);
      const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
      for (int64_t n_tokens : token_counts) {
        if (n_rows * row_length * n_tokens > kMaxReferenceMacs) continue;
        const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * row_length), rng);
        const std::vector<float> out = cuda_matmul(mm, w, x, n_tokens);
        const Reference ref = reference(m, x, n_tokens);
        const double bound = tolerance < 0 ? vector_tolerance(w, n_tokens) : tolerance;
        EXPECT_LT(scaled_error(out, ref.y, ref), bound) << describe(m, n_tokens);
        EXPECT_LT(scaled_error(out, cpu_matmul(m, x, n_tokens, pool), ref), kCpuTolerance)
            << describe(m, n_tokens);
      }
    }
  }
}

TEST_P(CudaMatmulTypeTest, VectorPathMatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  check_products(GetParam(), kVectorTokenCounts, -1, 1);
}

TEST_P(CudaMatmulTypeTest, GemmPathMatchesReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  check_products(GetParam(), kGemmTokenCounts, gemm_tolerance(GetParam()), 2);
}

// x at an odd float offset, so that the kernels stage it with scalar loads:
// a 33 x 512 matrix at each token count, within tolerance(w, n_tokens).
template <typename Tolerance>
void check_unaligned_x(WeightType type, std::initializer_list<int64_t> token_counts,
                       uint32_t seed, Tolerance tolerance) {
  std::mt19937 rng(seed);
  Stream stream;
  CudaMatmul mm(stream.get());
  const HostMatrix m = make_matrix(type, 33, 512, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  for (int64_t n_tokens : token_counts) {
    const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * m.row_length), rng);
    const std::vector<float> out = cuda_matmul(mm, w, x, n_tokens, /*x_offset=*/1);
    const Reference ref = reference(m, x, n_tokens);
    EXPECT_LT(scaled_error(out, ref.y, ref), tolerance(w, n_tokens)) << describe(m, n_tokens);
  }
}

TEST_P(CudaMatmulTypeTest, VectorPathTakesUnalignedX) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  check_unaligned_x(GetParam(), {1, 3}, 3, vector_tolerance);
}

// Above 8 tokens: the tensor-core kernel's many-token staging (up to 64),
// then cuBLAS.
TEST_P(CudaMatmulTypeTest, GemmPathTakesUnalignedX) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  check_unaligned_x(GetParam(), {9, 40, 70}, 4,
                    [](const CudaWeightMatrix& w, int64_t) { return gemm_tolerance(w.type()); });
}

// A decode step's tokens must not change each other's bits: on the tensor
// cores, token t's output alone equals its output in a batch of 8 (the
// engine's batch invariance rests on it). (The f32 matrix-vector kernel's x
// tile shrinks with more tokens, which reorders its sums on long rows.)
TEST_P(CudaMatmulTypeTest, DecodeTokensGetTheSameBitsAloneAndBatched) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(7);
  Stream stream;
  CudaMatmul mm(stream.get());
  for (int64_t row_length : row_lengths(GetParam())) {
    const HostMatrix m = make_matrix(GetParam(), 33, row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    if (!cuda_mma_supports(w, 8)) continue;
    const std::vector<float> x = random_floats(static_cast<size_t>(8 * row_length), rng);
    const std::vector<float> batched = cuda_matmul(mm, w, x, 8);
    for (int64_t t : {0, 5, 7}) {
      const std::vector<float> one(x.begin() + t * row_length, x.begin() + (t + 1) * row_length);
      const std::vector<float> alone = cuda_matmul(mm, w, one, 1);
      EXPECT_EQ(std::memcmp(alone.data(), batched.data() + t * m.n_rows,
                            alone.size() * sizeof(float)),
                0)
          << describe(m, 8) << ", token " << t;
    }
  }
}

// Embedding rows: the device decodes to the very floats the CPU does.
TEST_P(CudaMatmulTypeTest, GatherRowsDecodesBitExactly) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(4);
  Stream stream;
  const std::vector<int32_t> rows = {32, 0, 5, 5, 17};
  for (int64_t row_length : row_lengths(GetParam())) {
    const HostMatrix m = make_matrix(GetParam(), 33, row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    std::vector<float> expected;
    for (int32_t r : rows) {
      expected.insert(expected.end(), m.decoded.begin() + r * row_length,
                      m.decoded.begin() + (r + 1) * row_length);
    }
    const DeviceBuffer drows = to_device(rows);
    const DeviceBuffer out = poisoned_floats(expected.size());
    cuda_gather_rows(w, drows.as<int32_t>(), static_cast<int64_t>(rows.size()), out.as<float>(),
                     stream.get());
    const std::vector<float> got = to_host<float>(out, expected.size());
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), expected.size() * sizeof(float)), 0)
        << weight_type_name(GetParam()) << " rows of " << row_length << ": relative error "
        << relative_error(got, expected);
  }
}

TEST_P(CudaMatmulTypeTest, GatherRowsOutOfRangeGivesNan) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  Stream stream;
  const HostMatrix m = make_matrix(GetParam(), 4, 256, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  const DeviceBuffer drows = to_device(std::vector<int32_t>{-1, 4});
  const DeviceBuffer out = to_device(std::vector<float>(2 * 256, 0.0f));
  cuda_gather_rows(w, drows.as<int32_t>(), 2, out.as<float>(), stream.get());
  for (float v : to_host<float>(out, 2 * 256)) ASSERT_TRUE(std::isnan(v));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CudaMatmulTypeTest, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<WeightType>& info) {
                           return std::string(weight_type_name(info.param));
                         });

// Quantized weights above the f16 scratch tile (32 MiB: 4096 rows of 4096)
// are multiplied a tile of rows at a time; 4100 rows make a second, short tile.
TEST(CudaMatmulTest, GemmPathTilesLargeBlockMatrices) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(6);
  Stream stream;
  CudaMatmul mm(stream.get());
  const HostMatrix m = make_matrix(WeightType::kQ8_0, 4100, 4096, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  const std::vector<float> x = random_floats(9 * 4096, rng);
  const Reference ref = reference(m, x, 9);
  EXPECT_LT(scaled_error(cuda_matmul(mm, w, x, 9), ref.y, ref), kGemmHalfTolerance);
}

// The repacked layout's sizes (cuda_weights_layout.cuh): quants per block
// Q8_0 32, Q4_0 16, Q4_K 128, Q5_K 160, Q6_K 192 bytes; meta per block 2, 2,
// 16, 16, 18 bytes, each row's padded to 16; plain types unchanged.
TEST(CudaMatmulTest, UploadKeepsShapeAndCountsBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  struct Expected {
    WeightType type;
    int64_t row_length;
    int64_t quant_row_bytes;
    int64_t meta_row_bytes;
  };
  const Expected cases[] = {
      {WeightType::kF32, 512, 2048, 0},  {WeightType::kF16, 512, 1024, 0},
      {WeightType::kBF16, 512, 1024, 0}, {WeightType::kF16, 7, 14, 0},
      {WeightType::kQ8_0, 512, 512, 32}, {WeightType::kQ8_0, 96, 96, 16},
      {WeightType::kQ4_0, 512, 256, 32}, {WeightType::kQ4_0, 32, 16, 16},
      {WeightType::kQ4_K, 512, 256, 32}, {WeightType::kQ5_K, 512, 320, 32},
      {WeightType::kQ6_K, 512, 384, 48}, {WeightType::kQ6_K, 256, 192, 32},
  };
  std::mt19937 rng(7);
  for (const Expected& e : cases) {
    const HostMatrix m = make_matrix(e.type, 3, e.row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    const std::string what =
        std::string(weight_type_name(e.type)) + " x " + std::to_string(e.row_length);
    EXPECT_EQ(w.type(), e.type) << what;
    EXPECT_EQ(w.n_rows(), 3) << what;
    EXPECT_EQ(w.row_length(), e.row_length) << what;
    EXPECT_EQ(w.quant_row_bytes(), e.quant_row_bytes) << what;
    EXPECT_EQ(w.meta_row_bytes(), e.meta_row_bytes) << what;
    EXPECT_EQ(w.device_bytes(),
              3 * (e.quant_row_bytes + e.meta_row_bytes) + cuda_layout::kQuantsTailBytes)
        << what;
    if (is_plain(e.type)) {  // copied as the file has it
      std::vector<std::byte> quants(m.bytes.size());
      STRATA_CUDA_CHECK(
          cudaMemcpy(quants.data(), w.quants(), quants.size(), cudaMemcpyDeviceToHost));
      EXPECT_EQ(quants, m.bytes) << what;
    }
    // The tail that kernels read past the last row (and never use) is zeros.
    std::vector<std::byte> tail(static_cast<size_t>(cuda_layout::kQuantsTailBytes), std::byte{1});
    STRATA_CUDA_CHECK(cudaMemcpy(tail.data(),
                                 static_cast<const std::byte*>(w.quants()) + 3 * e.quant_row_bytes,
                                 tail.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(std::count(tail.begin(), tail.end(), std::byte{0}), cuda_layout::kQuantsTailBytes)
        << what;
  }
}

// The fused SwiGLU of a stacked [gate | up] matrix gives the very bits of
// the product followed by cuda_silu_mul (the engine's outputs must not
// change with it), for every type and decode token count it takes; 1,001
// outputs leave the last block rows past the end.
TEST_P(CudaMatmulTypeTest, SwigluGivesTheBitsOfProductThenSilu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(13);
  Stream stream;
  CudaMatmul mm(stream.get());
  for (int64_t n : {8, 24, 1001}) {
    for (int64_t row_length : {row_lengths(GetParam()).front(), int64_t{4096}}) {
      const HostMatrix m = make_matrix(GetParam(), 2 * n, row_length, rng);
      const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
      for (int64_t n_tokens : {1, 3, 8}) {
        if (!mm.fuses_swiglu(w, n_tokens)) {
          EXPECT_FALSE(cuda_mma_supports(w, n_tokens)) << describe(m, n_tokens);
          continue;
        }
        const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * row_length), rng);
        const DeviceBuffer gate_up = to_device(cuda_matmul(mm, w, x, n_tokens));
        const auto n_out = static_cast<size_t>(n_tokens * n);
        const DeviceBuffer expected = poisoned_floats(n_out);
        cuda_silu_mul(gate_up.as<float>(), gate_up.as<float>() + n, 2 * n, n_tokens, n,
                      expected.as<float>(), stream.get());
        const DeviceBuffer dx = to_device(x);
        const DeviceBuffer out = poisoned_floats(n_out);
        mm.run_swiglu(w, dx.as<float>(), n_tokens, out.as<float>());
        STRATA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const std::vector<float> want = to_host<float>(expected, n_out);
        const std::vector<float> got = to_host<float>(out, n_out);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), n_out * sizeof(float)), 0)
            << describe(m, n_tokens) << ": relative error " << relative_error(got, want);
      }
    }
  }
}

// Rows [first, first + count) of m as a matrix of their own.
HostMatrix rows_of(const HostMatrix& m, int64_t first, int64_t count) {
  const auto row_bytes = static_cast<int64_t>(m.bytes.size()) / m.n_rows;
  HostMatrix part{m.type, count, m.row_length, {}, {}};
  part.bytes.assign(m.bytes.begin() + first * row_bytes,
                    m.bytes.begin() + (first + count) * row_bytes);
  part.decoded.assign(m.decoded.begin() + first * m.row_length,
                      m.decoded.begin() + (first + count) * m.row_length);
  return part;
}

// Decode products with more row blocks than fit the GPU at once run in
// resident blocks that walk several row blocks each (three here, so both
// buffers of warp sums are reused). Every row must get the bits the
// one-row-block kernel gives it, which runs the first and last 40 rows as
// matrices of their own; the fused SwiGLU must still give the bits of the
// product then cuda_silu_mul.
// The types whose one-token products run on the tensor-core decode kernel
// (F32 and BF16 take the f32 kernels, Q4_K and Q6_K the integer ones).
constexpr WeightType kTensorCoreDecodeTypes[] = {WeightType::kF16, WeightType::kQ8_0,
                                                 WeightType::kQ4_0, WeightType::kQ5_K};
class CudaResidentDecodeTest : public ::testing::TestWithParam<WeightType> {};

TEST_P(CudaResidentDecodeTest, ResidentDecodeGivesTheBitsOfOneBlockARowBlock) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  const WeightType type = GetParam();
  std::mt19937 rng(19);
  Stream stream;
  CudaMatmul mm(stream.get());
  // F16 rows of 4,096 do not fit one staged x tile with their padding.
  const int64_t row_length = type == WeightType::kF16 ? 2048 : 4096;
  const int64_t n = 8 * 5 * int64_t{cuda_multiprocessor_count()} + 3;  // SwiGLU outputs
  const HostMatrix m = make_matrix(type, 2 * n, row_length, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  ASSERT_TRUE(cuda_mma_supports(w, 1) && !cuda_kquant_decode_supports(w, 1))
      << weight_type_name(type) << " no longer decodes on the tensor-core kernel";
  ASSERT_TRUE(cuda_mma_walks_resident(w, 1)) << describe(m, 1);
  // Parts of more row blocks than SMs (so not paired in clusters) that still
  // fit one wave (so not resident).
  const int64_t kFew = 16 * (int64_t{cuda_multiprocessor_count()} + 8);
  for (int64_t first : {int64_t{0}, m.n_rows - kFew}) {
    const HostMatrix part = rows_of(m, first, kFew);
    const CudaWeightMatrix wp = CudaWeightMatrix::upload(part.view());
    ASSERT_FALSE(cuda_mma_walks_resident(wp, 1));
    ASSERT_FALSE(cuda_mma_pairs_blocks(wp, 1));
    for (int64_t n_tokens : {1, 3, 8}) {
      const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * row_length), rng);
      const std::vector<float> whole = cuda_matmul(mm, w, x, n_tokens);
      const std::vector<float> alone = cuda_matmul(mm, wp, x, n_tokens);
      for (int64_t t = 0; t < n_tokens; ++t) {
        EXPECT_EQ(std::memcmp(whole.data() + t * m.n_rows + first, alone.data() + t * kFew,
                              kFew * sizeof(float)),
                  0)
            << describe(m, n_tokens) << ", rows from " << first << ", token " << t;
      }
    }
  }

  const std::vector<float> x = random_floats(static_cast<size_t>(3 * row_length), rng);
  const std::vector<float> product = cuda_matmul(mm, w, x, 3);
  const Reference ref = reference(m, x, 3);
  EXPECT_LT(scaled_error(product, ref.y, ref), kMmaTolerance) << describe(m, 3);

  ASSERT_TRUE(mm.fuses_swiglu(w, 3));
  const DeviceBuffer gate_up = to_device(product);
  const DeviceBuffer expected = poisoned_floats(static_cast<size_t>(3 * n));
  cuda_silu_mul(gate_up.as<float>(), gate_up.as<float>() + n, 2 * n, 3, n, expected.as<float>(),
                stream.get());
  const DeviceBuffer dx = to_device(x);
  const DeviceBuffer out = poisoned_floats(static_cast<size_t>(3 * n));
  mm.run_swiglu(w, dx.as<float>(), 3, out.as<float>());
  STRATA_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const std::vector<float> want = to_host<float>(expected, static_cast<size_t>(3 * n));
  const std::vector<float> got = to_host<float>(out, static_cast<size_t>(3 * n));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
      << describe(m, 3) << ": relative error " << relative_error(got, want);
}

INSTANTIATE_TEST_SUITE_P(TensorCoreDecodeTypes, CudaResidentDecodeTest,
                         ::testing::ValuesIn(kTensorCoreDecodeTypes),
                         [](const ::testing::TestParamInfo<WeightType>& info) {
                           return std::string(weight_type_name(info.param));
                         });

// Decode products of at most one row block an SM run each row block in a
// cluster of two blocks (sm_90) that split the row: against the reference,
// and each token's bits alone and batched.
TEST(CudaMatmulTest, FewRowBlocksPairInClusters) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(23);
  Stream stream;
  CudaMatmul mm(stream.get());
  for (WeightType type : {WeightType::kF16, WeightType::kQ8_0}) {
    const HostMatrix m = make_matrix(type, 1000, 4096, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    EXPECT_EQ(cuda_mma_pairs_blocks(w, 1), cuda_dependent_launch_supported());
    const std::vector<float> x = random_floats(8 * 4096, rng);
    const std::vector<float> batched = cuda_matmul(mm, w, x, 8);
    const Reference ref = reference(m, x, 8);
    EXPECT_LT(scaled_error(batched, ref.y, ref), kMmaTolerance) << describe(m, 8);
    const std::vector<float> last(x.end() - 4096, x.end());
    const std::vector<float> alone = cuda_matmul(mm, w, last, 1);
    EXPECT_EQ(std::memcmp(alone.data(), batched.data() + 7 * m.n_rows, alone.size() * 4), 0)
        << describe(m, 8);
  }
}

TEST(CudaMatmulTest, SwigluIsFusedForDecodeBatchesOfEvenRows) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(17);
  Stream stream;
  CudaMatmul mm(stream.get());
  const CudaWeightMatrix even =
      CudaWeightMatrix::upload(make_matrix(WeightType::kQ4_K, 64, 256, rng).view());
  const CudaWeightMatrix odd =
      CudaWeightMatrix::upload(make_matrix(WeightType::kQ4_K, 63, 256, rng).view());
  const CudaWeightMatrix f32 =
      CudaWeightMatrix::upload(make_matrix(WeightType::kF32, 64, 256, rng).view());
  EXPECT_TRUE(mm.fuses_swiglu(even, 1));
  EXPECT_TRUE(mm.fuses_swiglu(even, 8));
  EXPECT_FALSE(mm.fuses_swiglu(even, 9));
  EXPECT_FALSE(mm.fuses_swiglu(odd, 1));
  EXPECT_FALSE(mm.fuses_swiglu(f32, 1));
}

}  // namespace
}  // namespace strata
