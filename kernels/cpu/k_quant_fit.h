// Scale searches used by the K-quant encoders: given a small group of values,
// find the scale (and min) whose rounded levels reconstruct them best. They
// follow the ideas of ggml's make_qkx2_quants and make_qx_quants: try a grid
// of candidate scales, and for each candidate's levels solve the weighted
// least-squares scale (and min) in closed form.
#pragma once

#include <bit>
#include <cstdint>
#include <span>

namespace strata {

inline constexpr int kMaxFitGroup = 32;  // largest group the fits accept

// Round to nearest, ties to even, as the FPU does by default. Adding 1.5 * 2^23
// moves the integer into the low mantissa bits; |x| is clamped below 2^22 so
// that stays exact.
inline int nearest_int(float x) {
  constexpr float kLimit = 4194303.0f;
  x = x < -kLimit ? -kLimit : (x > kLimit ? kLimit : x);
  const float shifted = x + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(shifted) & 0x7fffffu) - 0x400000;
}

// Candidate reciprocal scales (q_max + first + step * k) / (max - min), k = 0..n_steps.
struct ScaleGrid {
  float first;  // offset of the first candidate, in levels (negative: coarser)
  float step;   // levels between candidates
  int n_steps;
};

// x[i] ~= scale * q[i] - min, q[i] in 0..q_max, scale >= 0, min >= 0.
struct AffineFit {
  float scale;
  float min;
};

// Minimizes sum weights[i] * (scale * q[i] - min - x[i])^2 over the grid.
// x.size() == weights.size() <= kMaxFitGroup. A group with max == min
// (constant, or all zero) gets scale 0 and min = -min(x, 0).
AffineFit fit_affine_levels(std::span<const float> x, std::span<const float> weights, int q_max,
                            ScaleGrid grid);

// x[i] ~= scale * q[i], q[i] in -n_half..n_half-1, weighting each value by x^2.
// The scale's sign is chosen so the value of largest magnitude maps to
// -n_half, the side with the extra level. Returns 0 for an all-zero group.
float fit_symmetric_levels(std::span<const float> x, int n_half);

}  // namespace strata
