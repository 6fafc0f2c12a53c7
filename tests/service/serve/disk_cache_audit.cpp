#include "tests/service/serve/disk_cache_audit.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <set>
#include <utility>

#include "tiering/block_checksum.h"
#include "tiering/disk_store.h"

namespace strata::testing {
namespace {

struct Row {
  int32_t slab = 0;
  int32_t slot = 0;
  int64_t n_bytes = 0;
  uint64_t checksum = 0;
};

// Every row of one index file; a problem line when it cannot be read.
std::vector<Row> read_rows(const std::filesystem::path& file, std::vector<std::string>& problems) {
  std::vector<Row> rows;
  sqlite3* db = nullptr;
  const std::string uri = "file:" + file.string() + "?mode=ro";
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    problems.push_back(file.string() + ": cannot open: " + sqlite3_errmsg(db));
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT slab, slot, n_bytes, checksum FROM blocks", -1, &stmt,
                         nullptr) != SQLITE_OK) {
    problems.push_back(file.string() + ": cannot read: " + sqlite3_errmsg(db));
  } else {
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      rows.push_back(Row{.slab = sqlite3_column_int(stmt, 0),
                         .slot = sqlite3_column_int(stmt, 1),
                         .n_bytes = sqlite3_column_int64(stmt, 2),
                         .checksum = std::bit_cast<uint64_t>(sqlite3_column_int64(stmt, 3))});
    }
    if (rc != SQLITE_DONE) problems.push_back(file.string() + ": " + sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

std::string slab_name(int32_t slab) {
  char name[32];
  std::snprintf(name, sizeof name, "slab-%06d.bin", slab);
  return name;
}

// The problem with one row's bytes, or "".
std::string check_row(const std::filesystem::path& dir, const Row& row, int64_t block_bytes) {
  const int64_t slot_bytes = (block_bytes + 4095) / 4096 * 4096;
  const std::filesystem::path slab = dir / slab_name(row.slab);
  if (row.n_bytes != block_bytes) return "n_bytes " + std::to_string(row.n_bytes);
  const int fd = open(slab.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return slab.string() + " is missing";
  std::vector<std::byte> bytes(static_cast<size_t>(block_bytes));
  const off_t offset = DiskStore::kHeaderBytes + off_t{row.slot} * slot_bytes;
  const ssize_t n = pread(fd, bytes.data(), bytes.size(), offset);
  close(fd);
  if (n != static_cast<ssize_t>(bytes.size())) return slab.string() + ": short read";
  if (block_checksum(bytes) != row.checksum) return "bytes fail the checksum";
  return "";
}

}  // namespace

DiskCacheAudit audit_disk_cache(const std::filesystem::path& cache_dir, int64_t block_bytes) {
  DiskCacheAudit audit;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, error)) {
    const std::filesystem::path index = entry.path() / "index.sqlite";
    if (!entry.is_directory() || !std::filesystem::exists(index)) continue;
    std::set<std::pair<int32_t, int32_t>> slots;
    for (const Row& row : read_rows(index, audit.problems)) {
      ++audit.n_rows;
      const std::string where = entry.path().filename().string() + " slab " +
                                std::to_string(row.slab) + " slot " + std::to_string(row.slot);
      if (!slots.emplace(row.slab, row.slot).second) {
        audit.problems.push_back(where + ": named by two rows");
      }
      if (std::string problem = check_row(entry.path(), row, block_bytes); !problem.empty()) {
        audit.problems.push_back(where + ": " + problem);
      }
    }
  }
  return audit;
}

}  // namespace strata::testing
