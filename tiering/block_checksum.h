// block_checksum: XXH3-64 (seed 0) of a KV block's bytes. It is stored in the
// block's index row when the block is written through to T2 and compared when
// the bytes are read back, so a torn write or a flipped bit on disk is found
// before the bytes are served. XXH3 rather than SHA-256 because it runs at
// memory speed: checking a 512 KiB block costs microseconds next to its NVMe
// read. It is not the block's identity: that is the SHA-256 BlockHash
// (tiering/block_hash.h), which has to be unforgeable; a checksum only has to
// catch accidents.
//
// Threads: a pure function; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace strata {

// XXH3_64bits(bytes, seed 0): the value `xxhsum -H3` prints. Empty input is
// allowed (0x2d06800538d394c2).
uint64_t block_checksum(std::span<const std::byte> bytes);

}  // namespace strata
