// audit_disk_cache: whether a disk KV cache folder's index and slab files
// agree, read from outside the server (after it crashed, before it restarts):
// every row of every kv-*/index.sqlite names a slot inside a slab file whose
// bytes match the row's checksum, and no two rows share a slot. The index is
// opened read-only, so the audit changes nothing a restart would see.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace strata::testing {

struct DiskCacheAudit {
  int64_t n_rows = 0;                 // index rows of every model
  std::vector<std::string> problems;  // one line each; empty when they agree
};

// `block_bytes`: the bytes of one block (a slot is that, rounded up to 4 KiB).
DiskCacheAudit audit_disk_cache(const std::filesystem::path& cache_dir, int64_t block_bytes);

}  // namespace strata::testing
