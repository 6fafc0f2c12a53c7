// The CUDA element-wise ops against their CPU counterparts (kernels/cpu/ops.h)
// on random inputs; each test skips without a CUDA device.
#include "kernels/cuda/cuda_ops.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/kernels/cuda/cuda_test_support.h"

namespace strata {
namespace {

using testing::cuda_available;
using testing::poisoned_floats;
using testing::random_floats;
using testing::relative_error;
using testing::to_device;
using testing::to_host;

constexpr double kTolerance = 1e-5;  // f32 on both sides; only summation order differs

std::vector<float> slice(const std::vector<float>& v, int64_t row, int64_t n) {
  return {v.begin() + row * n, v.begin() + (row + 1) * n};
}

TEST(CudaOpsTest, RmsNormMatchesCpuForEveryRowLength) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(1);
  for (int64_t n : {1, 31, 64, 257, 2048, 5120}) {
    const int64_t n_rows = 7;
    const auto x = random_floats(static_cast<size_t>(n_rows * n), rng, 3.0f);
    const auto weight = random_floats(static_cast<size_t>(n), rng);
    std::vector<float> expected(x.size());
    rms_norm(x, weight, 1e-5f, expected);
    DeviceBuffer dx = to_device(x), dw = to_device(weight), out = poisoned_floats(x.size());
    cuda_rms_norm(dx.as<float>(), dw.as<float>(), 1e-5f, n_rows, n, out.as<float>(), nullptr);
    EXPECT_LT(relative_error(to_host<float>(out, x.size()), expected), kTolerance) << n;
  }
}

TEST(CudaOpsTest, RmsNormOfChosenRowsGathersThem) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(2);
  const int64_t n = 96;
  const auto x = random_floats(10 * n, rng);
  const auto weight = random_floats(n, rng);
  const std::vector<int32_t> rows = {9, 0, 4};
  std::vector<float> expected;
  for (int32_t r : rows) {
    std::vector<float> one(n);
    rms_norm(slice(x, r, n), weight, 1e-6f, one);
    expected.insert(expected.end(), one.begin(), one.end());
  }
  DeviceBuffer dx = to_device(x), dw = to_device(weight), drows = to_device(rows);
  DeviceBuffer out = poisoned_floats(expected.size());
  cuda_rms_norm(dx.as<float>(), dw.as<float>(), 1e-6f, 3, n, out.as<float>(), nullptr,
                drows.as<int32_t>());
  EXPECT_LT(relative_error(to_host<float>(out, expected.size()), expected), kTolerance);
}

TEST(CudaOpsTest, AddRmsNormAddsTheResidualThenNorms) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(3);
  const int64_t n = 1000, n_rows = 5;
  auto x = random_floats(n_rows * n, rng);
  const auto delta = random_floats(n_rows * n, rng);
  const auto weight = random_floats(n, rng);
  DeviceBuffer dx = to_device(x), dd = to_device(delta), dw = to_device(weight);
  DeviceBuffer out = poisoned_floats(x.size());
  cuda_add_rms_norm(dx.as<float>(), dd.as<float>(), dw.as<float>(), 1e-5f, n_rows, n,
                    out.as<float>(), nullptr);
  add_in_place(x, delta);
  std::vector<float> expected(x.size());
  rms_norm(x, weight, 1e-5f, expected);
  EXPECT_LT(relative_error(to_host<float>(dx, x.size()), x), 1e-7);
  EXPECT_LT(relative_error(to_host<float>(out, x.size()), expected), kTolerance);

  // Without a weight: only the add.
  cuda_add_rms_norm(dx.as<float>(), dd.as<float>(), nullptr, 1e-5f, n_rows, n, nullptr, nullptr);
  add_in_place(x, delta);
  EXPECT_LT(relative_error(to_host<float>(dx, x.size()), x), 1e-7);
}

// Bias, per-head norm and RoPE as the CPU backend applies them to one row.
std::vector<float> finish_on_cpu(std::vector<float> x, int64_t n_rows, int64_t n_heads,
                                 int64_t head_dim, const std::vector<float>& bias,
                                 const std::vector<float>& head_norm,
                                 const std::vector<int32_t>& positions,
                                 const std::vector<float>& inv_freqs, RopeStyle style) {
  const int64_t width = n_heads * head_dim;
  std::vector<float> cos(head_dim / 2), sin(head_dim / 2);
  for (int64_t r = 0; r < n_rows; ++r) {
    std::span<float> row(x.data() + r * width, static_cast<size_t>(width));
    if (!bias.empty()) add_in_place(row, bias);
    if (!head_norm.empty()) rms_norm(row, head_norm, 1e-6f, row);
    rope_cos_sin(positions[static_cast<size_t>(r)], inv_freqs, cos, sin);
    rope(row, cos, sin, style);
  }
  return x;
}

TEST(CudaOpsTest, FinishQkMatchesCpuBiasNormAndRope) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(4);
  for (RopeStyle style : {RopeStyle::kNormal, RopeStyle::kNeox}) {
    for (int64_t head_dim : {64, 128, 96}) {
      for (bool qwen : {false, true}) {
        const int64_t n_rows = 9, n_heads = 6;
        const auto x = random_floats(n_rows * n_heads * head_dim, rng);
        const auto bias = qwen ? random_floats(n_heads * head_dim, rng) : std::vector<float>{};
        const auto norm = qwen ? random_floats(head_dim, rng) : std::vector<float>{};
        std::vector<int32_t> positions;
        for (int64_t r = 0; r < n_rows; ++r) positions.push_back(static_cast<int32_t>(r * 977));
        const auto inv_freqs = rope_inv_freqs(head_dim, 500000.0f, {});
        const auto expected =
            finish_on_cpu(x, n_rows, n_heads, head_dim, bias, norm, positions, inv_freqs, style);
        DeviceBuffer dx = to_device(x), dpos = to_device(positions), dfreq = to_device(inv_freqs);
        DeviceBuffer dbias = to_device(bias), dnorm = to_device(norm);
        cuda_finish_qk(dx.as<float>(), n_rows, n_heads, head_dim,
                       qwen ? dbias.as<float>() : nullptr, qwen ? dnorm.as<float>() : nullptr,
                       1e-6f, dpos.as<int32_t>(), dfreq.as<float>(), style, nullptr);
        EXPECT_LT(relative_error(to_host<float>(dx, x.size()), expected), kTolerance)
            << head_dim << " neox " << (style == RopeStyle::kNeox) << " qwen " << qwen;
      }
    }
  }
}

TEST(CudaOpsTest, SiluMulAndBias) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  auto gate = random_floats(10001, rng, 4.0f);
  const auto up = random_floats(gate.size(), rng);
  DeviceBuffer dg = to_device(gate), du = to_device(up);
  cuda_silu_mul(dg.as<float>(), du.as<float>(), static_cast<int64_t>(gate.size()), nullptr);
  silu_mul(gate, up, gate);
  EXPECT_LT(relative_error(to_host<float>(dg, gate.size()), gate), kTolerance);

  auto x = random_floats(3 * 100, rng);
  const auto bias = random_floats(100, rng);
  DeviceBuffer dx = to_device(x), db = to_device(bias);
  cuda_add_bias(dx.as<float>(), db.as<float>(), 3, 100, nullptr);
  for (size_t i = 0; i < x.size(); ++i) x[i] += bias[i % 100];
  EXPECT_LT(relative_error(to_host<float>(dx, x.size()), x), 1e-7);
}

}  // namespace
}  // namespace strata
