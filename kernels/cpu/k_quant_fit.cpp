#include "kernels/cpu/k_quant_fit.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"

namespace strata {
namespace {

// Groups whose largest magnitude is below this are treated as all zero (ggml's GROUP_MAX_EPS).
constexpr float kZeroGroup = 1e-15f;

// Weighted sums over (x, weight, level) for a least-squares fit.
struct LevelSums {
  float w = 0, x = 0, l = 0, l2 = 0, xl = 0;
};

float weighted_affine_error(std::span<const float> x, std::span<const float> weights,
                            std::span<const uint8_t> levels, float scale, float offset) {
  float error = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float diff = scale * levels[i] + offset - x[i];
    error += weights[i] * diff * diff;
  }
  return error;
}

}  // namespace

AffineFit fit_affine_levels(std::span<const float> x, std::span<const float> weights, int q_max,
                            ScaleGrid grid) {
  STRATA_CHECK(x.size() == weights.size() && !x.empty() && x.size() <= kMaxFitGroup);
  const size_t n = x.size();

  // The offset is min(x) but never above 0: the format subtracts a
  // non-negative min, so all-positive groups start at zero.
  float lo = std::min(*std::min_element(x.begin(), x.end()), 0.0f);
  const float hi = *std::max_element(x.begin(), x.end());
  if (hi == lo) return {0.0f, -lo};

  float sum_w = 0, sum_wx = 0;
  for (size_t i = 0; i < n; ++i) {
    sum_w += weights[i];
    sum_wx += weights[i] * x[i];
  }

  uint8_t levels[kMaxFitGroup];
  auto set_levels = [&](float inv_scale, float offset) {
    for (size_t i = 0; i < n; ++i) {
      levels[i] =
          static_cast<uint8_t>(std::clamp(nearest_int(inv_scale * (x[i] - offset)), 0, q_max));
    }
  };

  // Start from the plain min/max mapping.
  float best_scale = (hi - lo) / static_cast<float>(q_max);
  float best_offset = lo;
  set_levels(1.0f / best_scale, lo);
  float best_error = weighted_affine_error(x, weights, {levels, n}, best_scale, best_offset);

  for (int k = 0; k <= grid.n_steps; ++k) {
    const float inv_scale =
        (static_cast<float>(q_max) + grid.first + grid.step * static_cast<float>(k)) / (hi - lo);
    set_levels(inv_scale, lo);
    LevelSums s;
    for (size_t i = 0; i < n; ++i) {
      const float w = weights[i], l = levels[i];
      s.l += w * l;
      s.l2 += w * l * l;
      s.xl += w * l * x[i];
    }
    s.w = sum_w;
    s.x = sum_wx;
    // Normal equations of min over (scale, offset) of sum w (scale*l + offset - x)^2.
    const float det = s.w * s.l2 - s.l * s.l;
    if (!(det > 0)) continue;
    float scale = (s.w * s.xl - s.x * s.l) / det;
    float offset = (s.l2 * s.x - s.l * s.xl) / det;
    if (offset > 0) {  // the format cannot add: pin the offset at 0 and refit the scale
      offset = 0;
      scale = s.xl / s.l2;
    }
    const float error = weighted_affine_error(x, weights, {levels, n}, scale, offset);
    if (error < best_error) {
      best_error = error;
      best_scale = scale;
      best_offset = offset;
    }
  }
  return {std::max(best_scale, 0.0f), -best_offset};
}

float fit_symmetric_levels(std::span<const float> x, int n_half) {
  STRATA_CHECK(!x.empty() && x.size() <= kMaxFitGroup);
  float max = 0, amax = 0;  // the value of largest magnitude, and its magnitude
  for (float v : x) {
    if (std::fabs(v) > amax) {
      amax = std::fabs(v);
      max = v;
    }
  }
  if (amax < kZeroGroup) return 0.0f;

  // For levels l, the best scale is sum(w x l) / sum(w l^2) and it removes
  // sum(w x l)^2 / sum(w l^2) from the squared error: maximize that ratio.
  auto score = [&](float inv_scale, float& sum_xl, float& sum_l2) {
    sum_xl = 0;
    sum_l2 = 0;
    for (float v : x) {
      const float l =
          static_cast<float>(std::clamp(nearest_int(inv_scale * v), -n_half, n_half - 1));
      const float w = v * v;
      sum_xl += w * v * l;
      sum_l2 += w * l * l;
    }
  };

  float sum_xl, sum_l2;
  score(-static_cast<float>(n_half) / max, sum_xl, sum_l2);
  float best_scale = sum_l2 > 0 ? sum_xl / sum_l2 : 0.0f;
  float best_gain = best_scale * sum_xl;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0) continue;
    score(-(static_cast<float>(n_half) + 0.1f * static_cast<float>(k)) / max, sum_xl, sum_l2);
    if (sum_l2 > 0 && sum_xl * sum_xl > best_gain * sum_l2) {
      best_scale = sum_xl / sum_l2;
      best_gain = best_scale * sum_xl;
    }
  }
  return best_scale;
}

}  // namespace strata
