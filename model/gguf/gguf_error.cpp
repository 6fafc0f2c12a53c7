#include "model/gguf/gguf_error.h"

#include "common/str_cat.h"

namespace strata {

GgufError::GgufError(const std::string& problem, uint64_t offset)
    : std::runtime_error(str_cat("gguf: ", problem, " at offset ", offset)),
      problem_(problem),
      offset_(offset) {}

}  // namespace strata
