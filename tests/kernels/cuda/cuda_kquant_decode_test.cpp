// cuda_kquant_decode (Q4_K and Q6_K) against the CPU matmul, which
// quantizes x to Q8_K the same way and forms the same integer sums: only the
// order of the f32 additions differs, so the two agree to ~1e-7. One 8-bit
// quant of x off by one moves a 256-long row's result by ~5e-4 of its size:
// the tolerance below catches the staging's quantization differing from the
// CPU's. Also: a token's bits alone and in a batch (the dp4a and the mma
// kernel), x not 16-byte aligned, tokens staged in passes (rows too
// long for all of them at once), the fused SwiGLU. Skips without a GPU.
#include "kernels/cuda/cuda_kquant_decode.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/thread_pool.h"
#include "gpu/cuda_check.h"
#include "gpu/cuda_device.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/cuda_ops.h"
#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata {
namespace {

using namespace strata::testing;

constexpr double kCpuTolerance = 1e-5;
constexpr int64_t kMaxCpuMacs = int64_t{64} << 20;

constexpr WeightType kTypes[] = {WeightType::kQ4_K, WeightType::kQ6_K};

struct KQuantMatrix {
  WeightType type;
  int64_t n_rows;
  int64_t row_length;
  std::vector<std::byte> bytes;

  WeightMatrix view() const {
    return {.type = type, .data = bytes.data(), .n_rows = n_rows, .row_length = row_length};
  }
};

KQuantMatrix make_matrix(WeightType type, int64_t n_rows, int64_t row_length, std::mt19937& rng) {
  const std::vector<float> values =
      random_floats(static_cast<size_t>(n_rows * row_length), rng, 0.05f);
  return {type, n_rows, row_length, quantize(type, values)};
}

std::string describe(const KQuantMatrix& m, int64_t n_tokens) {
  return std::string(weight_type_name(m.type)) + " " + std::to_string(m.n_rows) + " x " +
         std::to_string(m.row_length) + ", " + std::to_string(n_tokens) + " tokens";
}

std::vector<float> cpu_product(const KQuantMatrix& m, const std::vector<float>& x,
                               int64_t n_tokens) {
  ThreadPool pool;
  std::vector<float> y(static_cast<size_t>(n_tokens * m.n_rows));
  matmul(m.view(), x, n_tokens, y, pool);
  return y;
}

// The product on the device (on the legacy stream), y poisoned with NaN
// first; x placed x_offset floats into its buffer (1: not 16-byte aligned).
std::vector<float> device_product(const CudaWeightMatrix& w, const std::vector<float>& x,
                                  int64_t n_tokens, size_t x_offset = 0) {
  std::vector<float> padded(x_offset, 0.0f);
  padded.insert(padded.end(), x.begin(), x.end());
  const DeviceBuffer dx = to_device(padded);
  const auto n_out = static_cast<size_t>(n_tokens * w.n_rows());
  const DeviceBuffer dy = poisoned_floats(n_out);
  cuda_kquant_decode(w, dx.as<float>() + x_offset, n_tokens, dy.as<float>(), nullptr);
  return to_host<float>(dy, n_out);
}

TEST(CudaKQuantDecodeTest, TakesQ4KAndQ6KDecodeBatches) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(1);
  for (WeightType type : kTypes) {
    const CudaWeightMatrix even = CudaWeightMatrix::upload(make_matrix(type, 64, 256, rng).view());
    const CudaWeightMatrix odd = CudaWeightMatrix::upload(make_matrix(type, 63, 256, rng).view());
    EXPECT_TRUE(cuda_kquant_decode_supports(even, 1));
    EXPECT_TRUE(cuda_kquant_decode_supports(even, kMaxKQuantDecodeTokens));
    EXPECT_FALSE(cuda_kquant_decode_supports(even, 0));
    EXPECT_FALSE(cuda_kquant_decode_supports(even, kMaxKQuantDecodeTokens + 1));
    EXPECT_TRUE(cuda_kquant_decode_swiglu_supports(even, 8));
    EXPECT_FALSE(cuda_kquant_decode_swiglu_supports(odd, 1));
    EXPECT_FALSE(cuda_kquant_decode_wants_staged_x(even, 8));  // 2,048 values: see its comment
    const CudaWeightMatrix wide = CudaWeightMatrix::upload(make_matrix(type, 8, 4096, rng).view());
    EXPECT_FALSE(cuda_kquant_decode_wants_staged_x(wide, 1));
    EXPECT_TRUE(cuda_kquant_decode_wants_staged_x(wide, 2));
  }
  const std::vector<float> values = random_floats(64 * 256, rng);
  const std::vector<std::byte> q8 = quantize(WeightType::kQ8_0, values);
  const CudaWeightMatrix other = CudaWeightMatrix::upload(
      {.type = WeightType::kQ8_0, .data = q8.data(), .n_rows = 64, .row_length = 256});
  EXPECT_FALSE(cuda_kquant_decode_supports(other, 1));
  EXPECT_GT(cuda_kquant_staged_x_bytes(4096), 4096);
  EXPECT_FALSE(cuda_kquant_decode_wants_staged_x(other, 2));
  EXPECT_DEATH(cuda_kquant_staged_x_bytes(100), "not whole Q8_K blocks");
}

class CudaKQuantDecodeTypeTest : public ::testing::TestWithParam<WeightType> {};

// Whole steps of 8 blocks (2,048, 4,096), a part step (256, 2,560: 1 and
// 10 blocks), many steps (14,336, the 8B model's FFN); rows from one to
// more than a warp each.
TEST_P(CudaKQuantDecodeTypeTest, MatchesTheCpuIntegerProducts) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(2);
  for (int64_t row_length : {256, 2048, 2560, 4096, 14336}) {
    for (int64_t n_rows : {1, 7, 33, 1000, 5000}) {
      const KQuantMatrix m = make_matrix(GetParam(), n_rows, row_length, rng);
      const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
      for (int64_t n_tokens : {1, 2, 3, 5, 8}) {
        if (n_rows * row_length * n_tokens > kMaxCpuMacs) continue;
        const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * row_length), rng);
        EXPECT_LT(relative_error(device_product(w, x, n_tokens), cpu_product(m, x, n_tokens)),
                  kCpuTolerance)
            << describe(m, n_tokens);
      }
    }
  }
}

// A block of x that is all zeros must stage scale 0 and zero quants (1 / 0
// would make the product NaN). Blocks whose largest magnitude is tied between
// a negative and a positive value ride along, but cannot tell which one the
// staging chose: the other choice negates every quant and the scale, which
// gives the same product to the bit.
TEST_P(CudaKQuantDecodeTypeTest, StagesAZeroBlockOfXAsZeros) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(3);
  const KQuantMatrix m = make_matrix(GetParam(), 7, 768, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  std::vector<float> x = random_floats(768, rng);
  std::fill(x.begin(), x.begin() + 256, 0.0f);
  x[300] = -3.0f;
  x[400] = 3.0f;
  x[600] = 2.5f;
  x[700] = -2.5f;
  EXPECT_LT(relative_error(device_product(w, x, 1), cpu_product(m, x, 1)), kCpuTolerance);
}

// A decode step's tokens must not change each other's bits (the engine's
// batch invariance rests on it), aligned x or not: one token takes the dp4a
// kernel, more the mma kernel, which must add the same terms in the same
// order. 333 rows leave the last group of 16 part empty; rows of 256 give
// the mma kernel's warps but one block, of 2,560 ten (two warps take two).
// One Q4_K token takes a block a lane, a row's blocks spread over the
// fewest lanes, a power of two, that hold them: rows of 1, 2, 8, 10 and 16
// blocks share a warp step with other rows; 33 blocks take two steps, the
// second with one block.
TEST_P(CudaKQuantDecodeTypeTest, GivesEachTokenTheSameBitsAloneAndBatched) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(4);
  for (int64_t row_length : {256, 512, 2048, 2560, 4096, 8448}) {
    const KQuantMatrix m = make_matrix(GetParam(), 333, row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    const std::vector<float> x = random_floats(static_cast<size_t>(8 * row_length), rng);
    for (int64_t n_tokens : {2, 3, 5, 8}) {
      const std::vector<float> xn(x.begin(), x.begin() + n_tokens * row_length);
      const std::vector<float> batched = device_product(w, xn, n_tokens);
      EXPECT_EQ(batched, device_product(w, xn, n_tokens, /*x_offset=*/1)) << describe(m, n_tokens);
      for (int64_t t : {int64_t{0}, n_tokens - 1}) {
        const std::vector<float> one(x.begin() + t * row_length, x.begin() + (t + 1) * row_length);
        const std::vector<float> alone = device_product(w, one, 1);
        EXPECT_EQ(
            std::memcmp(alone.data(), batched.data() + t * m.n_rows, alone.size() * sizeof(float)),
            0)
            << describe(m, n_tokens) << ", token " << t;
      }
    }
  }
}

// Rows whose 8 tokens of staged x outgrow a block's shared memory are run
// in passes of fewer tokens: the same results, the same bits per token.
TEST_P(CudaKQuantDecodeTypeTest, StagesLongRowsInPassesOfTokens) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  // More than 1/8 of the device's shared memory a token (~1.14 bytes a value).
  const int64_t row_length = (cuda_max_shared_memory_per_block() / 8 / 256 + 1) * 256;
  const KQuantMatrix m = make_matrix(GetParam(), 9, row_length, rng);
  const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
  ASSERT_TRUE(cuda_kquant_decode_supports(w, 8)) << describe(m, 8);
  const std::vector<float> x = random_floats(static_cast<size_t>(8 * row_length), rng);
  const std::vector<float> batched = device_product(w, x, 8);
  EXPECT_LT(relative_error(batched, cpu_product(m, x, 8)), kCpuTolerance) << describe(m, 8);
  const std::vector<float> last(x.end() - row_length, x.end());
  const std::vector<float> alone = device_product(w, last, 1);
  EXPECT_EQ(std::memcmp(alone.data(), batched.data() + 7 * m.n_rows, alone.size() * sizeof(float)),
            0);
}

// The fused SwiGLU of a stacked [gate | up] matrix gives the very bits of
// the product followed by cuda_silu_mul; 1,001 outputs leave warps with one
// output more than others. Rows of 2, 16 and 33 blocks: gate and up rows in
// one warp step, or (33) in steps one after the other.
TEST_P(CudaKQuantDecodeTypeTest, SwigluGivesTheBitsOfProductThenSilu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(6);
  for (int64_t n : {8, 1001}) {
    for (int64_t row_length : {256, 512, 4096, 8448}) {
      const KQuantMatrix m = make_matrix(GetParam(), 2 * n, row_length, rng);
      const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
      for (int64_t n_tokens : {1, 3, 8}) {
        const std::vector<float> x = random_floats(static_cast<size_t>(n_tokens * row_length), rng);
        const DeviceBuffer gate_up = to_device(device_product(w, x, n_tokens));
        const auto n_out = static_cast<size_t>(n_tokens * n);
        const DeviceBuffer expected = poisoned_floats(n_out);
        cuda_silu_mul(gate_up.as<float>(), gate_up.as<float>() + n, 2 * n, n_tokens, n,
                      expected.as<float>(), nullptr);
        const DeviceBuffer dx = to_device(x);
        const DeviceBuffer out = poisoned_floats(n_out);
        cuda_kquant_decode_swiglu(w, dx.as<float>(), n_tokens, out.as<float>(), nullptr);
        const std::vector<float> want = to_host<float>(expected, n_out);
        const std::vector<float> got = to_host<float>(out, n_out);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), n_out * sizeof(float)), 0)
            << describe(m, n_tokens) << ": relative error " << relative_error(got, want);
      }
    }
  }
}

// x staged by the norm before the product (cuda_add_rms_norm's and
// cuda_rms_norm's out_staged) gives the product the very bits it gets from
// quantizing the norm's output itself: rows cached in the norm's registers
// and longer ones (14,336), one to eight tokens, a token whose norm is all
// zeros, the fused SwiGLU.
TEST_P(CudaKQuantDecodeTypeTest, XStagedByTheNormGivesTheSameBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(7);
  for (int64_t row_length : {256, 4096, 14336}) {
    const KQuantMatrix m = make_matrix(GetParam(), 66, row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    const DeviceBuffer weight = to_device(random_floats(static_cast<size_t>(row_length), rng));
    for (int64_t n_tokens : {1, 3, 8}) {
      const auto n_x = static_cast<size_t>(n_tokens * row_length);
      std::vector<float> x = random_floats(n_x, rng), delta = random_floats(n_x, rng);
      for (int64_t i = 0; i < row_length; ++i) x[i] = delta[i] = 0.0f;  // token 0: zeros
      const DeviceBuffer dx = to_device(x), ddelta = to_device(delta), xn = poisoned_floats(n_x);
      const int64_t staged_bytes = n_tokens * cuda_kquant_staged_x_bytes(row_length);
      DeviceBuffer staged, staged_by_rms_norm;
      staged.reserve(static_cast<size_t>(staged_bytes));
      staged_by_rms_norm.reserve(static_cast<size_t>(staged_bytes));
      cuda_add_rms_norm(dx.as<float>(), ddelta.as<float>(), weight.as<float>(), 1e-5f, n_tokens,
                        row_length, xn.as<float>(), nullptr, staged.as<uint8_t>());
      const DeviceBuffer xn_again = poisoned_floats(n_x);
      cuda_rms_norm(dx.as<float>(), weight.as<float>(), 1e-5f, n_tokens, row_length,
                    xn_again.as<float>(), nullptr, nullptr, staged_by_rms_norm.as<uint8_t>());
      const auto n_out = static_cast<size_t>(n_tokens * m.n_rows);
      const DeviceBuffer plain = poisoned_floats(n_out), from_staged = poisoned_floats(n_out),
                         from_rms_norm = poisoned_floats(n_out);
      cuda_kquant_decode(w, xn.as<float>(), n_tokens, plain.as<float>(), nullptr);
      cuda_kquant_decode(w, xn.as<float>(), n_tokens, from_staged.as<float>(), nullptr,
                         staged.as<uint8_t>());
      cuda_kquant_decode(w, xn_again.as<float>(), n_tokens, from_rms_norm.as<float>(), nullptr,
                         staged_by_rms_norm.as<uint8_t>());
      const std::vector<float> want = to_host<float>(plain, n_out);
      for (const DeviceBuffer* got : {&from_staged, &from_rms_norm}) {
        EXPECT_EQ(
            std::memcmp(to_host<float>(*got, n_out).data(), want.data(), n_out * sizeof(float)), 0)
            << describe(m, n_tokens);
      }
      const auto n_swiglu = static_cast<size_t>(n_tokens * m.n_rows / 2);
      const DeviceBuffer swiglu = poisoned_floats(n_swiglu),
                         swiglu_staged = poisoned_floats(n_swiglu);
      cuda_kquant_decode_swiglu(w, xn.as<float>(), n_tokens, swiglu.as<float>(), nullptr);
      cuda_kquant_decode_swiglu(w, xn.as<float>(), n_tokens, swiglu_staged.as<float>(), nullptr,
                                staged.as<uint8_t>());
      EXPECT_EQ(std::memcmp(to_host<float>(swiglu_staged, n_swiglu).data(),
                            to_host<float>(swiglu, n_swiglu).data(), n_swiglu * sizeof(float)),
                0)
          << "SwiGLU, " << describe(m, n_tokens);
    }
  }
}

// x staged by a launch of its own (cuda_kquant_stage_x: the O and down
// products') gives the product the bits it gets quantizing x itself; x also
// not 16-byte aligned.
TEST_P(CudaKQuantDecodeTypeTest, XStagedByItsOwnLaunchGivesTheSameBits) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(8);
  for (int64_t row_length : {256, 4096, 14336}) {
    const KQuantMatrix m = make_matrix(GetParam(), 40, row_length, rng);
    const CudaWeightMatrix w = CudaWeightMatrix::upload(m.view());
    for (int64_t n_tokens : {1, 2, 8}) {
      for (size_t x_offset : {0, 1}) {
        const auto n_x = static_cast<size_t>(n_tokens * row_length);
        std::vector<float> padded(x_offset, 0.0f);
        const std::vector<float> x = random_floats(n_x, rng);
        padded.insert(padded.end(), x.begin(), x.end());
        const DeviceBuffer dx = to_device(padded);
        DeviceBuffer staged;
        staged.reserve(static_cast<size_t>(n_tokens * cuda_kquant_staged_x_bytes(row_length)));
        cuda_kquant_stage_x(dx.as<float>() + x_offset, n_tokens, row_length, staged.as<uint8_t>(),
                            nullptr);
        const auto n_out = static_cast<size_t>(n_tokens * m.n_rows);
        const DeviceBuffer got = poisoned_floats(n_out);
        cuda_kquant_decode(w, dx.as<float>() + x_offset, n_tokens, got.as<float>(), nullptr,
                           staged.as<uint8_t>());
        const std::vector<float> want = device_product(w, x, n_tokens);
        EXPECT_EQ(
            std::memcmp(to_host<float>(got, n_out).data(), want.data(), n_out * sizeof(float)), 0)
            << describe(m, n_tokens) << ", x offset " << x_offset;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KQuants, CudaKQuantDecodeTypeTest, ::testing::ValuesIn(kTypes),
                         [](const ::testing::TestParamInfo<WeightType>& info) {
                           return std::string(weight_type_name(info.param));
                         });

}  // namespace
}  // namespace strata
