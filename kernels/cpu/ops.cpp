#include "kernels/cpu/ops.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace strata {

void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out) {
  const size_t n = weight.size();
  STRATA_CHECK(n > 0 && x.size() % n == 0 && out.size() == x.size(), "x ", x.size(), " weight ", n,
               " out ", out.size());
  for (size_t row = 0; row < x.size(); row += n) {
    // The sum of squares in double: rows are a few thousand values and this
    // keeps the mean exact to float precision whatever the row length.
    double sum_squares = 0.0;
    for (size_t i = 0; i < n; ++i) sum_squares += double{x[row + i]} * x[row + i];
    const float mean = static_cast<float>(sum_squares / static_cast<double>(n));
    const float inv_rms = 1.0f / std::sqrt(mean + eps);
    for (size_t i = 0; i < n; ++i) out[row + i] = x[row + i] * inv_rms * weight[i];
  }
}

std::vector<float> rope_inv_freqs(int64_t head_dim, float freq_base,
                                  std::span<const float> freq_factors) {
  STRATA_CHECK(head_dim > 0 && head_dim % 2 == 0, "head_dim ", head_dim);
  const int64_t n_pairs = head_dim / 2;
  STRATA_CHECK(freq_factors.empty() || static_cast<int64_t>(freq_factors.size()) == n_pairs,
               "freq_factors ", freq_factors.size(), " for ", n_pairs, " pairs");
  std::vector<float> inv_freqs(static_cast<size_t>(n_pairs));
  for (int64_t i = 0; i < n_pairs; ++i) {
    const double exponent = static_cast<double>(2 * i) / static_cast<double>(head_dim);
    double inv_freq = std::pow(static_cast<double>(freq_base), -exponent);
    if (!freq_factors.empty()) inv_freq /= freq_factors[static_cast<size_t>(i)];
    inv_freqs[static_cast<size_t>(i)] = static_cast<float>(inv_freq);
  }
  return inv_freqs;
}

void rope_cos_sin(int64_t position, std::span<const float> inv_freqs, std::span<float> cos,
                  std::span<float> sin) {
  STRATA_CHECK(cos.size() == inv_freqs.size() && sin.size() == inv_freqs.size());
  const float pos = static_cast<float>(position);
  for (size_t i = 0; i < inv_freqs.size(); ++i) {
    const float angle = pos * inv_freqs[i];
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
  }
}

void rope(std::span<float> x, std::span<const float> cos, std::span<const float> sin,
          RopeStyle style) {
  const size_t n_pairs = cos.size();
  const size_t head_dim = 2 * n_pairs;
  STRATA_CHECK(n_pairs > 0 && sin.size() == n_pairs && x.size() % head_dim == 0, "x ", x.size(),
               " pairs ", n_pairs);
  // Element offsets of pair i's two members within a head.
  const size_t first_step = style == RopeStyle::kNormal ? 2 : 1;
  const size_t second_offset = style == RopeStyle::kNormal ? 1 : n_pairs;
  for (size_t head = 0; head < x.size(); head += head_dim) {
    float* h = x.data() + head;
    for (size_t i = 0; i < n_pairs; ++i) {
      float& a = h[i * first_step];
      float& b = h[i * first_step + second_offset];
      const float a0 = a;
      const float b0 = b;
      a = a0 * cos[i] - b0 * sin[i];
      b = a0 * sin[i] + b0 * cos[i];
    }
  }
}

void silu_mul(std::span<const float> gate, std::span<const float> up, std::span<float> out) {
  STRATA_CHECK(gate.size() == up.size() && out.size() == gate.size());
  for (size_t i = 0; i < gate.size(); ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void softmax(std::span<float> x) {
  if (x.empty()) return;
  const float max = *std::max_element(x.begin(), x.end());
  double sum = 0.0;
  for (float& v : x) {
    v = std::exp(v - max);
    sum += v;
  }
  const float inv_sum = static_cast<float>(1.0 / sum);
  for (float& v : x) v *= inv_sum;
}

void add_in_place(std::span<float> acc, std::span<const float> x) {
  STRATA_CHECK(acc.size() == x.size());
  for (size_t i = 0; i < acc.size(); ++i) acc[i] += x[i];
}

}  // namespace strata
