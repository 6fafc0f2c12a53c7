#include "kernels/sampling/xoshiro256.h"

namespace strata {
namespace {

uint64_t rotate_left(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// splitmix64: spreads one 64-bit seed into well-mixed state words.
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Xoshiro256::Xoshiro256(uint64_t seed) {
  for (uint64_t& word : state_) word = splitmix64(seed);
}

uint64_t Xoshiro256::next() {
  const uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotate_left(state_[3], 45);
  return result;
}

double Xoshiro256::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

}  // namespace strata
