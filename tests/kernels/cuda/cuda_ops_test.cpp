// The CUDA element-wise ops against their CPU counterparts (kernels/cpu/ops.h)
// on random inputs; each test skips without a CUDA device.
#include "kernels/cuda/cuda_ops.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

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
  // Rows held in registers (short, exactly full) and longer ones whose tail is read again.
  for (const int64_t n : {1000, 8192, 10000}) {
    SCOPED_TRACE(n);
    const int64_t n_rows = 5;
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
    cuda_add_rms_norm(dx.as<float>(), dd.as<float>(), nullptr, 1e-5f, n_rows, n, nullptr,
                      nullptr);
    add_in_place(x, delta);
    EXPECT_LT(relative_error(to_host<float>(dx, x.size()), x), 1e-7);
  }
}

// Bias, per-head norm and RoPE as the CPU backend applies them to one row's
// heads (norm and rope empty for V).
std::vector<float> finish_on_cpu(std::vector<float> x, int64_t n_rows, int64_t width,
                                 int64_t head_dim, const std::vector<float>& bias,
                                 const std::vector<float>& head_norm,
                                 const std::vector<int32_t>& positions,
                                 const std::vector<float>& inv_freqs, RopeStyle style,
                                 bool rotate) {
  std::vector<float> cos(head_dim / 2), sin(head_dim / 2);
  for (int64_t r = 0; r < n_rows; ++r) {
    std::span<float> row(x.data() + r * width, static_cast<size_t>(width));
    if (!bias.empty()) add_in_place(row, bias);
    if (!rotate) continue;
    if (!head_norm.empty()) rms_norm(row, head_norm, 1e-6f, row);
    rope_cos_sin(positions[static_cast<size_t>(r)], inv_freqs, cos, sin);
    rope(row, cos, sin, style);
  }
  return x;
}

// Q, K and V from one fused [rows][q|k|v] projection, and in place from three
// compact ones, against the CPU backend's steps; GQA 6 query / 2 kv heads.
TEST(CudaOpsTest, FinishQkvMatchesCpuBiasNormAndRope) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(4);
  for (RopeStyle style : {RopeStyle::kNormal, RopeStyle::kNeox}) {
    for (int64_t head_dim : {64, 128, 96}) {
      for (bool qwen : {false, true}) {
        for (bool fused : {true, false}) {
          const int64_t n_rows = 9, n_heads = 6, n_kv = 2;
          const int64_t q_dim = n_heads * head_dim, kv_dim = n_kv * head_dim;
          const auto q = random_floats(n_rows * q_dim, rng);
          const auto k = random_floats(n_rows * kv_dim, rng);
          const auto v = random_floats(n_rows * kv_dim, rng);
          auto maybe = [&](int64_t n) {
            return qwen ? random_floats(n, rng) : std::vector<float>{};
          };
          const auto bq = maybe(q_dim), bk = maybe(kv_dim), bv = maybe(kv_dim);
          const auto q_norm = maybe(head_dim), k_norm = maybe(head_dim);
          std::vector<int32_t> positions;
          for (int64_t r = 0; r < n_rows; ++r) positions.push_back(static_cast<int32_t>(r * 977));
          const auto inv_freqs = rope_inv_freqs(head_dim, 500000.0f, {});
          const auto want_q = finish_on_cpu(q, n_rows, q_dim, head_dim, bq, q_norm, positions,
                                            inv_freqs, style, true);
          const auto want_k = finish_on_cpu(k, n_rows, kv_dim, head_dim, bk, k_norm, positions,
                                            inv_freqs, style, true);
          const auto want_v = finish_on_cpu(v, n_rows, kv_dim, head_dim, bv, {}, positions,
                                            inv_freqs, style, false);

          std::vector<float> qkv;  // [rows][q | k | v]
          for (int64_t r = 0; r < n_rows; ++r) {
            qkv.insert(qkv.end(), q.begin() + r * q_dim, q.begin() + (r + 1) * q_dim);
            qkv.insert(qkv.end(), k.begin() + r * kv_dim, k.begin() + (r + 1) * kv_dim);
            qkv.insert(qkv.end(), v.begin() + r * kv_dim, v.begin() + (r + 1) * kv_dim);
          }
          DeviceBuffer dqkv = to_device(qkv);
          DeviceBuffer dq = fused ? poisoned_floats(q.size()) : to_device(q);
          DeviceBuffer dk = fused ? poisoned_floats(k.size()) : to_device(k);
          DeviceBuffer dv = fused ? poisoned_floats(v.size()) : to_device(v);
          DeviceBuffer dpos = to_device(positions), dfreq = to_device(inv_freqs);
          DeviceBuffer dbq = to_device(bq), dbk = to_device(bk), dbv = to_device(bv);
          DeviceBuffer dqn = to_device(q_norm), dkn = to_device(k_norm);
          const int64_t width = q_dim + 2 * kv_dim;
          const QkvInput in =
              fused ? QkvInput{.q = dqkv.as<float>(), .k = dqkv.as<float>() + q_dim,
                               .v = dqkv.as<float>() + q_dim + kv_dim, .q_stride = width,
                               .k_stride = width, .v_stride = width}
                    : QkvInput{.q = dq.as<float>(), .k = dk.as<float>(), .v = dv.as<float>(),
                               .q_stride = q_dim, .k_stride = kv_dim, .v_stride = kv_dim};
          cuda_finish_qkv(in,
                          {.n_rows = n_rows, .n_heads = n_heads, .n_kv_heads = n_kv,
                           .head_dim = head_dim, .bq = dbq.as<float>(), .bk = dbk.as<float>(),
                           .bv = dbv.as<float>(), .q_norm = dqn.as<float>(),
                           .k_norm = dkn.as<float>(), .eps = 1e-6f, .positions = dpos.as<int32_t>(),
                           .inv_freqs = dfreq.as<float>(), .style = style, .kv_out = {}},
                          dq.as<float>(), dk.as<float>(), dv.as<float>(), nullptr);
          const std::string what = "head_dim " + std::to_string(head_dim) + " neox " +
                                   std::to_string(style == RopeStyle::kNeox) + " qwen " +
                                   std::to_string(qwen) + " fused " + std::to_string(fused);
          EXPECT_LT(relative_error(to_host<float>(dq, q.size()), want_q), kTolerance) << what;
          EXPECT_LT(relative_error(to_host<float>(dk, k.size()), want_k), kTolerance) << what;
          EXPECT_LT(relative_error(to_host<float>(dv, v.size()), want_v), 1e-7) << what;
        }
      }
    }
  }
}

// From a fused [rows][gate | up] projection into a compact output, and in place.
TEST(CudaOpsTest, SiluMulOfFusedAndSeparateGateUp) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  const int64_t n_rows = 7, n = 1001;
  const auto gate = random_floats(n_rows * n, rng, 4.0f);
  const auto up = random_floats(n_rows * n, rng);
  std::vector<float> want(gate.size());
  silu_mul(gate, up, want);

  std::vector<float> gate_up;
  for (int64_t r = 0; r < n_rows; ++r) {
    gate_up.insert(gate_up.end(), gate.begin() + r * n, gate.begin() + (r + 1) * n);
    gate_up.insert(gate_up.end(), up.begin() + r * n, up.begin() + (r + 1) * n);
  }
  DeviceBuffer dgu = to_device(gate_up), out = poisoned_floats(gate.size());
  cuda_silu_mul(dgu.as<float>(), dgu.as<float>() + n, 2 * n, n_rows, n, out.as<float>(), nullptr);
  EXPECT_LT(relative_error(to_host<float>(out, gate.size()), want), kTolerance);

  DeviceBuffer dg = to_device(gate), du = to_device(up);
  cuda_silu_mul(dg.as<float>(), du.as<float>(), n, n_rows, n, dg.as<float>(), nullptr);
  EXPECT_LT(relative_error(to_host<float>(dg, gate.size()), want), kTolerance);
}

}  // namespace
}  // namespace strata
