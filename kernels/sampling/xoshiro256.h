// Xoshiro256: the xoshiro256** generator (Blackman & Vigna, 2018), seeded through
// splitmix64 as its authors recommend. Small, fast, and fully specified, so a seed gives
// the same stream on every compiler and standard library (std::mt19937 would too, but
// std::uniform_real_distribution's output is implementation-defined; uniform01() is ours).
//
// One generator per sequence, used by one thread at a time.
#pragma once

#include <cstdint>

namespace strata {

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed);

  // The next 64 random bits.
  uint64_t next();

  // Uniform in [0, 1): the top 53 bits of next() scaled by 2^-53, so every value is a
  // multiple of 2^-53 and 1.0 is never returned.
  double uniform01();

 private:
  uint64_t state_[4];  // never all zero (splitmix64 cannot produce four zero words)
};

}  // namespace strata
