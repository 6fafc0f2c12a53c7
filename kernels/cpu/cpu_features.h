// Which SIMD flavour of the CPU kernels this machine runs. Chosen once per
// process: the first call to selected_cpu_simd() reads the CPU (cpuid) and
// the STRATA_CPU_SIMD environment variable, and the answer never changes
// afterwards. Any thread.
#pragma once

#include <optional>
#include <string_view>

namespace strata {

enum class CpuSimd {
  kScalar,  // portable C++; runs everywhere (the reference)
  kAvx2,    // x86-64 with AVX2 + FMA + F16C (Haswell, Zen and later)
};

std::string_view cpu_simd_name(CpuSimd simd);  // "scalar", "avx2"
// Accepts the names cpu_simd_name returns; nullopt for anything else.
std::optional<CpuSimd> parse_cpu_simd(std::string_view name);

// Whether this CPU (and OS: the AVX state must be enabled) can run `simd`,
// and this build holds kernels for it.
bool cpu_supports(CpuSimd simd);

// The best flavour cpu_supports(), unless STRATA_CPU_SIMD names another one
// ("scalar" forces the reference path, for testing and comparisons); a name
// that is unknown or unsupported here aborts at first use, since running a
// different path than asked would make a comparison silently meaningless.
CpuSimd selected_cpu_simd();

}  // namespace strata
