// CPU feature detection and the one-time choice of SIMD flavour.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common/check.h"

namespace strata {
namespace {

// The environment variable that overrides the choice; read here only.
constexpr const char* kSimdOverrideVariable = "STRATA_CPU_SIMD";

#if defined(__x86_64__) || defined(__i386__)
// clang's __builtin_cpu_supports does not know "f16c": ask cpuid (leaf 1,
// ECX bit 29). It needs no OS check beyond the AVX one done for "avx2".
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#endif

CpuSimd choose_cpu_simd() {
  if (const char* forced = std::getenv(kSimdOverrideVariable); forced != nullptr && *forced) {
    const std::optional<CpuSimd> simd = parse_cpu_simd(forced);
    STRATA_CHECK(simd.has_value(), kSimdOverrideVariable, "=", forced,
                 " is not a known SIMD flavour (scalar, avx2)");
    STRATA_CHECK(cpu_supports(*simd), kSimdOverrideVariable, "=", forced,
                 " is not supported by this CPU or build");
    return *simd;
  }
  return cpu_supports(CpuSimd::kAvx2) ? CpuSimd::kAvx2 : CpuSimd::kScalar;
}

}  // namespace

std::string_view cpu_simd_name(CpuSimd simd) {
  switch (simd) {
    case CpuSimd::kScalar: return "scalar";
    case CpuSimd::kAvx2: return "avx2";
  }
  return "unknown";
}

std::optional<CpuSimd> parse_cpu_simd(std::string_view name) {
  for (CpuSimd simd : {CpuSimd::kScalar, CpuSimd::kAvx2}) {
    if (name == cpu_simd_name(simd)) return simd;
  }
  return std::nullopt;
}

bool cpu_supports(CpuSimd simd) {
  switch (simd) {
    case CpuSimd::kScalar: return true;
    case CpuSimd::kAvx2:
#if defined(__x86_64__) || defined(__i386__)
      // libgcc's cpu model also checks XCR0, i.e. that the OS saves AVX state.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
#else
      return false;
#endif
  }
  return false;
}

CpuSimd selected_cpu_simd() {
  // Immutable after the first call (thread-safe static initialization).
  static const CpuSimd selected = choose_cpu_simd();
  return selected;
}

}  // namespace strata
