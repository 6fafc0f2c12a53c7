#include "model/rope_scaling.h"

#include <cmath>
#include <numbers>

namespace strata {

std::vector<float> llama3_rope_factors(const Llama3RopeScaling& s, int64_t head_dim,
                                       float freq_base) {
  const double low_freq_wavelen = s.original_context_length / s.low_freq_factor;
  const double high_freq_wavelen = s.original_context_length / s.high_freq_factor;
  std::vector<float> factors;
  factors.reserve(static_cast<size_t>(head_dim / 2));
  for (int64_t i = 0; i < head_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(freq_base),
                                       static_cast<double>(i) / static_cast<double>(head_dim));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double factor;
    if (wavelen < high_freq_wavelen) {
      factor = 1.0;
    } else if (wavelen > low_freq_wavelen) {
      factor = s.factor;
    } else {
      const double smooth = (s.original_context_length / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      factor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    factors.push_back(static_cast<float>(factor));
  }
  return factors;
}

}  // namespace strata
