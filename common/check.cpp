#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace strata {

void check_failed(const char* expression, const std::string& message, const char* file,
                  int line) {
  std::fprintf(stderr, "%s:%d: check failed: %s%s%s\n", file, line, expression,
               message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata
