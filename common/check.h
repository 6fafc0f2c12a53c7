// STRATA_CHECK: a broken invariant is a bug, so it aborts with file:line.
// Expected failures (bad input, I/O errors, full caches) are return values or
// exceptions at API boundaries, never checks.
#pragma once

#include <string>

#include "common/str_cat.h"

namespace strata {

// (File and line rather than std::source_location: clang 14 with libstdc++ 12,
// our sanitizer build, has no usable std::source_location.)
[[noreturn]] void check_failed(const char* expression, const std::string& message,
                               const char* file, int line);

}  // namespace strata

// STRATA_CHECK(cond) or STRATA_CHECK(cond, "context ", value, ...).
#define STRATA_CHECK(cond, ...)                                                           \
  do {                                                                                    \
    if (!(cond)) [[unlikely]] {                                                           \
      ::strata::check_failed(#cond, ::strata::str_cat("" __VA_OPT__(, ) __VA_ARGS__),     \
                             __FILE__, __LINE__);                                         \
    }                                                                                     \
  } while (0)
