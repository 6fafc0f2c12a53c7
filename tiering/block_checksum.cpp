#include "tiering/block_checksum.h"

// Header-only: XXH_INLINE_ALL compiles xxhash's functions static into this
// file, so no libxxhash is linked and none is needed where Strata runs.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace strata {

uint64_t block_checksum(std::span<const std::byte> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace strata
