// What a successfully parsed GgufFile promises (see gguf_file.h), checked from
// the outside, and every byte it points at touched, so that a sanitizer build
// catches a tensor span reaching outside the input.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "model/gguf/gguf_file.h"

namespace strata {

// "" when all promises hold, else the first broken one.
std::string gguf_invariant_violation(const GgufFile& file, std::span<const std::byte> bytes);

}  // namespace strata
