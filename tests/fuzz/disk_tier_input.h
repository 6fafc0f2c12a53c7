// The input of disk_tier_fuzzer: the files a KV cache folder holds at start-up
// (one slab file and the SQLite index), in a compact form that keeps the
// mostly-zero slab small enough to mutate:
//
//   byte 0      flags: bit 0 the slab file exists; bit 1 its header is padded
//               with zeros to one 4096-byte page (else the header bytes are
//               the file's start, as given); bit 2 index.sqlite exists; bit 3
//               the tier runs with --persist none
//   u16 LE n    then n bytes: the slab file's header (at most 4096)
//   u16 LE m    then m bytes: index.sqlite
//   then up to kSlots slots until the input ends, each a u16 LE k and k bytes
//   (at most 4096): the slot's first bytes, the rest of its 4096 zeros.
// Whatever the input lacks reads as zero (or absent).
//
// Shared by the fuzzer, which parses it, and disk_write_seeds, which builds
// the committed seeds from a folder the real DiskWorker wrote.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tiering/block_hash.h"

namespace strata {

struct DiskTierInput {
  static constexpr int64_t kBlockBytes = 4096;   // one block, one slot
  static constexpr int64_t kSlots = 8;           // the tier's capacity
  static constexpr size_t kHeaderPage = 4096;

  bool has_slab = false;
  bool pad_header = false;
  bool has_index = false;
  bool persist = true;
  std::string header;              // the slab file's first bytes
  std::string index;               // index.sqlite
  std::vector<std::string> slots;  // each slot's leading bytes (the rest zero)

  static DiskTierInput parse(std::span<const uint8_t> bytes);
  std::vector<uint8_t> serialize() const;
  // The slab file these describe: the header (padded when asked), then each
  // slot's kBlockBytes.
  std::string slab_file() const;
};

// The model every fuzzed tier serves: rows of other models are not its own.
ModelFingerprint disk_tier_fuzz_model();

}  // namespace strata
