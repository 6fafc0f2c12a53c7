#include "tiering/block_index.h"

#include <sqlite3.h>

#include <bit>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/crash_point.h"
#include "common/log.h"
#include "common/str_cat.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Version 1. Column types are SQLite's affinities, not constraints: what a
// read accepts is decided by parse_row() (and kDeleteMalformedRows, which
// must agree with it).
constexpr const char* kCreateSchema = R"sql(
CREATE TABLE blocks (
  hash              BLOB NOT NULL PRIMARY KEY,  -- 32 bytes, SHA-256 block hash
  parent_hash       BLOB NOT NULL,              -- 32 bytes
  model_fingerprint BLOB NOT NULL,              -- 32 bytes
  slab              INTEGER NOT NULL,           -- int32
  slot              INTEGER NOT NULL,           -- int32
  n_bytes           INTEGER NOT NULL,
  checksum          INTEGER NOT NULL,           -- uint64 XXH3 as its int64 bit pattern
  last_used         INTEGER NOT NULL,           -- unix ms
  tokens            BLOB NOT NULL,              -- token ids, little-endian int32
  UNIQUE (slab, slot)
);
-- LRU reclaim and start-up load walk one model's rows in last_used order.
CREATE INDEX blocks_model_last_used ON blocks (model_fingerprint, last_used);
PRAGMA user_version = 1;
)sql";

// Rows parse_row() would skip. Deleted on open so that count() and
// total_bytes() do not include rows nobody can ever see or erase.
constexpr const char* kDeleteMalformedRows = R"sql(
DELETE FROM blocks WHERE NOT (
  typeof(hash) = 'blob' AND length(hash) = 32 AND
  typeof(parent_hash) = 'blob' AND length(parent_hash) = 32 AND
  typeof(model_fingerprint) = 'blob' AND length(model_fingerprint) = 32 AND
  typeof(slab) = 'integer' AND slab BETWEEN -2147483648 AND 2147483647 AND
  typeof(slot) = 'integer' AND slot BETWEEN -2147483648 AND 2147483647 AND
  typeof(n_bytes) = 'integer' AND typeof(checksum) = 'integer' AND
  typeof(last_used) = 'integer' AND
  typeof(tokens) = 'blob' AND length(tokens) % 4 = 0)
)sql";

// The column list every SELECT returns, in parse_row()'s order.
#define STRATA_BLOCK_COLUMNS \
  "hash, parent_hash, model_fingerprint, slab, slot, n_bytes, checksum, last_used, tokens"

// A failed SQLite call. Carries the result code so that the constructor can
// tell a corrupt file (move it aside, start empty) from every other failure.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// Whether a failure while opening says the file's content is unusable, so
// that it is moved aside: damaged (CORRUPT), not a database (NOTADB), or a
// file SQLite or this code cannot use as it stands (ERROR: "unsupported file
// format" from a header's format numbers, a table of ours without its
// columns). Failures of the environment (CANTOPEN, IOERR, READONLY, FULL,
// BUSY: another connection's lock) leave the file alone.
bool is_corrupt(int code) {
  const int primary = code & 0xff;  // extended codes carry the primary in the low byte
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_ERROR;
}

[[noreturn]] void fail(sqlite3* db, const fs::path& file, int rc, std::string_view what) {
  // sqlite3_errmsg names the most recent failure on this connection, which is
  // more specific ("file is not a database", "UNIQUE constraint failed: ...")
  // than the code's generic text.
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(rc, str_cat("block index ", file.string(), ": ", what, ": ", message,
                                " (sqlite code ", rc, ")"));
}

void check(sqlite3* db, const fs::path& file, int rc, std::string_view what) {
  if (rc != SQLITE_OK) fail(db, file, rc, what);
}

// True for a row, false when the statement is done; throws on an error.
bool step(sqlite3* db, const fs::path& file, sqlite3_stmt* stmt, std::string_view what) {
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db, file, rc, what);
}

void exec(sqlite3* db, const fs::path& file, const char* sql, std::string_view what) {
  check(db, file, sqlite3_exec(db, sql, nullptr, nullptr, nullptr), what);
}

struct Finalize {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using OwnedStatement = std::unique_ptr<sqlite3_stmt, Finalize>;

// A one-off statement for the set-up queries (pragmas, the schema table).
OwnedStatement prepare_once(sqlite3* db, const fs::path& file, const char* sql,
                            std::string_view what) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  OwnedStatement owned(stmt);
  check(db, file, rc, what);
  return owned;
}

// Throws a corrupt SqliteError with SQLite's first finding unless PRAGMA
// integrity_check finds the database sound: every page of the table and its
// indexes, and every index entry against its row. O(rows log rows): about a
// second for 200,000 rows (a 100 GiB cache of 512 KiB blocks).
void check_integrity(sqlite3* db, const fs::path& file) {
  constexpr std::string_view kWhat = "check integrity";
  OwnedStatement stmt = prepare_once(db, file, "PRAGMA integrity_check(1)", kWhat);
  if (!step(db, file, stmt.get(), kWhat)) fail(nullptr, file, SQLITE_CORRUPT, kWhat);
  const auto* finding = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
  if (finding == nullptr || std::string_view(finding) != "ok") {
    throw SqliteError(SQLITE_CORRUPT, str_cat("block index ", file.string(), ": ", kWhat, ": ",
                                              finding != nullptr ? finding : "no answer"));
  }
}

int64_t query_int(sqlite3* db, const fs::path& file, const char* sql, std::string_view what) {
  OwnedStatement stmt = prepare_once(db, file, sql, what);
  if (!step(db, file, stmt.get(), what))
    fail(nullptr, file, SQLITE_ERROR, str_cat(what, ": no row"));
  return sqlite3_column_int64(stmt.get(), 0);
}

// Resets a statement and clears its bindings when a use ends, exceptions
// included: a SELECT left un-reset holds its read transaction open, which
// pins old WAL frames and keeps checkpoints from finishing; and blobs are
// bound SQLITE_STATIC, so no pointer may outlive the caller's buffer.
class StatementUse {
 public:
  explicit StatementUse(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~StatementUse() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

void bind_hash(sqlite3* db, const fs::path& file, sqlite3_stmt* stmt, int index,
               const BlockHash& hash) {
  check(db, file,
        sqlite3_bind_blob(stmt, index, hash.bytes.data(), static_cast<int>(hash.bytes.size()),
                          SQLITE_STATIC),
        "bind a hash");
}

// Token ids as little-endian int32, the same bytes on every host (and the
// layout hash_block() hashes).
void encode_tokens(std::span<const int32_t> tokens, std::vector<uint8_t>& out) {
  out.resize(tokens.size() * 4);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const uint32_t v = static_cast<uint32_t>(tokens[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<uint8_t>(v >> (8 * b));
  }
}

std::optional<BlockHash> column_hash(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) != SQLITE_BLOB) return std::nullopt;
  // sqlite3_column_blob before sqlite3_column_bytes, as SQLite's docs ask.
  const void* data = sqlite3_column_blob(stmt, column);
  BlockHash hash;
  if (sqlite3_column_bytes(stmt, column) != static_cast<int>(hash.bytes.size())) {
    return std::nullopt;
  }
  std::memcpy(hash.bytes.data(), data, hash.bytes.size());
  return hash;
}

std::optional<int64_t> column_int(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) != SQLITE_INTEGER) return std::nullopt;
  return sqlite3_column_int64(stmt, column);
}

std::optional<int32_t> column_int32(sqlite3_stmt* stmt, int column) {
  std::optional<int64_t> v = column_int(stmt, column);
  if (!v || *v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(*v);
}

// One row in STRATA_BLOCK_COLUMNS order, or nullopt when any value has the
// wrong type or size: such a row is never trusted.
std::optional<IndexedBlock> parse_row(sqlite3_stmt* stmt) {
  std::optional<BlockHash> hash = column_hash(stmt, 0);
  std::optional<BlockHash> parent = column_hash(stmt, 1);
  std::optional<BlockHash> model = column_hash(stmt, 2);
  std::optional<int32_t> slab = column_int32(stmt, 3);
  std::optional<int32_t> slot = column_int32(stmt, 4);
  std::optional<int64_t> n_bytes = column_int(stmt, 5);
  std::optional<int64_t> checksum = column_int(stmt, 6);
  std::optional<int64_t> last_used = column_int(stmt, 7);
  if (!hash || !parent || !model || !slab || !slot || !n_bytes || !checksum || !last_used ||
      sqlite3_column_type(stmt, 8) != SQLITE_BLOB) {
    return std::nullopt;
  }
  const auto* bytes = static_cast<const uint8_t*>(sqlite3_column_blob(stmt, 8));
  const int n_token_bytes = sqlite3_column_bytes(stmt, 8);  // a 0-byte blob gives nullptr
  if (n_token_bytes % 4 != 0) return std::nullopt;

  IndexedBlock block{.hash = *hash,
                     .parent = *parent,
                     .model = *model,
                     .slab = *slab,
                     .slot = *slot,
                     .n_bytes = *n_bytes,
                     .checksum = std::bit_cast<uint64_t>(*checksum),
                     .last_used_ms = *last_used,
                     .tokens = std::vector<int32_t>(n_token_bytes / 4)};
  for (size_t i = 0; i < block.tokens.size(); ++i) {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= static_cast<uint32_t>(bytes[i * 4 + b]) << (8 * b);
    block.tokens[i] = static_cast<int32_t>(v);
  }
  return block;
}

// Renames `file` and its -wal and -shm to `<file>.corrupt`, `<file>.corrupt-wal`
// and `<file>.corrupt-shm`: kept as a pair that the sqlite3 shell can open for a
// post-mortem, and out of the way. The WAL must go too: left behind, it would
// be replayed into the fresh database. Throws when a rename fails.
void move_aside(const fs::path& file) {
  fs::path aside = file;
  aside += ".corrupt";
  for (const char* suffix : {"-wal", "-shm", ""}) {
    fs::path from = file;
    from += suffix;
    fs::path to = aside;
    to += suffix;
    std::error_code ec;
    fs::remove(to, ec);  // a stale side file from an earlier recovery must not pair with this one
    fs::rename(from, to, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
      throw std::runtime_error(str_cat("block index ", file.string(), ": cannot move corrupt ",
                                       from.string(), " aside to ", to.string(), ": ",
                                       ec.message()));
    }
  }
}

}  // namespace

BlockIndex::BlockIndex(const fs::path& file) : file_(file) {
  try {
    open();
  } catch (const SqliteError& e) {
    close();
    if (!is_corrupt(e.code())) throw;
    // A cache: losing it costs recomputation, never correctness.
    log_warning(e.what(), "; moving it aside to ", file_.string(),
                ".corrupt and starting an empty index");
    move_aside(file_);
    try {
      open();
    } catch (...) {
      close();
      throw;
    }
  } catch (...) {
    close();
    throw;
  }
}

BlockIndex::~BlockIndex() { close(); }

void BlockIndex::open() {
  const int rc =
      sqlite3_open_v2(file_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  // On failure db_ may still hold a handle (for its message); close() frees it.
  check(db_, file_, rc, "open");
  sqlite3_extended_result_codes(db_, 1);
  check(db_, file_, sqlite3_busy_timeout(db_, kBusyTimeoutMs), "set busy_timeout");

  // The first read of the file: a file that is not a database fails here with
  // SQLITE_NOTADB. A newer schema is refused before this connection changes
  // anything in it (not even its journal mode).
  const char* kReadVersion = "PRAGMA user_version";
  int64_t version = query_int(db_, file_, kReadVersion, "read user_version");
  auto refuse_newer = [&] {
    throw std::runtime_error(str_cat("block index ", file_.string(), ": schema version ", version,
                                     " is newer than this Strata's (", kSchemaVersion,
                                     "); refusing to open it. Run the newer Strata, or delete the "
                                     "file to start an empty cache"));
  };
  if (version > kSchemaVersion) refuse_newer();

  // WAL: readers never block the writer, and a commit is one append.
  // synchronous=NORMAL syncs the WAL only at checkpoints, so a power loss may
  // roll back the last few commits, but never corrupts the database. That is
  // safe here because a row is committed only after its slab bytes were
  // fdatasync'd (DiskStore::sync()): a lost commit loses cache entries, and no
  // row can name bytes that never reached the disk. (A lost erase can bring
  // back a row whose slot was since rewritten; its checksum and tokens no
  // longer match, so start-up verification drops it.)
  {
    OwnedStatement stmt = prepare_once(db_, file_, "PRAGMA journal_mode = WAL", "set WAL mode");
    if (!step(db_, file_, stmt.get(), "set WAL mode")) {
      fail(nullptr, file_, SQLITE_ERROR, "set WAL mode: no row");
    }
    const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0));
    if (mode == nullptr || std::string_view(mode) != "wal") {
      log_warning("block index ", file_.string(), ": WAL mode unavailable (journal mode is ",
                  mode != nullptr ? mode : "unknown", "); readers will block the writer");
    }
  }
  exec(db_, file_, "PRAGMA synchronous = NORMAL", "set synchronous");

  // Check and migrate under the write lock, so two openers of a new file do
  // not both create the schema.
  exec(db_, file_, "BEGIN IMMEDIATE", "begin the schema check");
  try {
    version = query_int(db_, file_, kReadVersion, "read user_version");
    if (version > kSchemaVersion) refuse_newer();
    if (version != kSchemaVersion) {
      // An older or unknown layout: drop everything and recreate. No data is
      // migrated: it is a cache.
      std::vector<std::pair<std::string, std::string>> objects;  // (type, name)
      {
        OwnedStatement stmt =
            prepare_once(db_, file_,
                         "SELECT type, name FROM sqlite_master "
                         "WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'",
                         "list the old schema");
        while (step(db_, file_, stmt.get(), "list the old schema")) {
          objects.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 0)),
                               reinterpret_cast<const char*>(sqlite3_column_text(stmt.get(), 1)));
        }
      }
      if (version != 0 || !objects.empty()) {
        log_warning("block index ", file_.string(), ": schema version ", version,
                    " is not this Strata's (", kSchemaVersion,
                    "); dropping the old index and starting an empty one");
      }
      for (const auto& [type, name] : objects) {
        std::string quoted;  // an identifier in double quotes, inner quotes doubled
        for (char c : name) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
        const std::string sql =
            str_cat("DROP ", type == "view" ? "VIEW" : "TABLE", " IF EXISTS \"", quoted, "\"");
        exec(db_, file_, sql.c_str(), str_cat("drop old ", type, " ", name));
      }
      exec(db_, file_, kCreateSchema, "create the schema");
    }
    // Damage anywhere (the indexes' pages too, which no scan of the table
    // reads, and index entries that disagree with their rows) surfaces now,
    // while the file can still be moved aside, rather than in the first
    // query that needs those pages: start-up would fail there.
    check_integrity(db_, file_);
    exec(db_, file_, kDeleteMalformedRows, "delete malformed rows");
    const int n_malformed = sqlite3_changes(db_);
    if (n_malformed > 0) {
      log_warning("block index ", file_.string(), ": deleted ", n_malformed,
                  " malformed rows (wrong blob sizes or types)");
    }
    exec(db_, file_, "COMMIT", "commit the schema check");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }

  prepare_statements();
}

void BlockIndex::close() noexcept {
  for (sqlite3_stmt** stmt :
       {&begin_, &commit_, &rollback_, &insert_, &find_, &load_model_, &erase_, &touch_,
        &least_recently_used_, &count_, &count_model_, &total_bytes_, &clear_}) {
    sqlite3_finalize(*stmt);  // a no-op on nullptr
    *stmt = nullptr;
  }
  if (db_ != nullptr) {
    crash_point("index.closing");
    // Every statement is finalized, so this closes now; as the last
    // connection it also checkpoints the WAL into the file and deletes it.
    const int rc = sqlite3_close(db_);
    if (rc != SQLITE_OK) {
      log_warning("block index ", file_.string(), ": close: ", sqlite3_errstr(rc));
    }
    db_ = nullptr;
  }
}

sqlite3_stmt* BlockIndex::prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    fail(db_, file_, rc, str_cat("prepare \"", sql, "\""));
  }
  return stmt;
}

void BlockIndex::prepare_statements() {
  begin_ = prepare("BEGIN IMMEDIATE");  // take the write lock now, not at the first write
  commit_ = prepare("COMMIT");
  rollback_ = prepare("ROLLBACK");
  insert_ = prepare("INSERT OR REPLACE INTO blocks (" STRATA_BLOCK_COLUMNS
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  find_ = prepare("SELECT " STRATA_BLOCK_COLUMNS " FROM blocks WHERE hash = ?1");
  load_model_ = prepare("SELECT " STRATA_BLOCK_COLUMNS
                        " FROM blocks WHERE model_fingerprint = ?1 ORDER BY last_used");
  erase_ = prepare("DELETE FROM blocks WHERE hash = ?1");
  touch_ = prepare("UPDATE blocks SET last_used = ?2 WHERE hash = ?1");
  least_recently_used_ = prepare("SELECT " STRATA_BLOCK_COLUMNS
                                 " FROM blocks WHERE model_fingerprint = ?1"
                                 " ORDER BY last_used LIMIT ?2");
  count_ = prepare("SELECT count(*) FROM blocks");
  count_model_ = prepare("SELECT count(*) FROM blocks WHERE model_fingerprint = ?1");
  total_bytes_ = prepare("SELECT coalesce(sum(n_bytes), 0) FROM blocks");
  clear_ = prepare("DELETE FROM blocks");
}

void BlockIndex::begin_write(const char* what) {
  StatementUse use(begin_);
  step(db_, file_, begin_, str_cat(what, ": begin"));
}

void BlockIndex::commit_write(const char* what) {
  StatementUse use(commit_);
  step(db_, file_, commit_, str_cat(what, ": commit"));
}

void BlockIndex::rollback_write() noexcept {
  // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) roll the transaction back
  // themselves; then there is nothing left to roll back.
  if (sqlite3_get_autocommit(db_) != 0) return;
  sqlite3_step(rollback_);
  sqlite3_reset(rollback_);
}

std::vector<IndexedBlock> BlockIndex::read_rows(sqlite3_stmt* stmt, const char* what) const {
  std::vector<IndexedBlock> rows;
  int64_t n_skipped = 0;
  while (step(db_, file_, stmt, what)) {
    std::optional<IndexedBlock> row = parse_row(stmt);
    if (row) {
      rows.push_back(std::move(*row));
    } else {
      ++n_skipped;
    }
  }
  if (n_skipped > 0) {
    log_warning("block index ", file_.string(), ": ", what, ": skipped ", n_skipped,
                " malformed rows");
  }
  return rows;
}

int64_t BlockIndex::read_count(sqlite3_stmt* stmt, const char* what) const {
  if (!step(db_, file_, stmt, what)) fail(nullptr, file_, SQLITE_ERROR, str_cat(what, ": no row"));
  return sqlite3_column_int64(stmt, 0);
}

void BlockIndex::insert(std::span<const IndexedBlock> blocks) {
  if (blocks.empty()) return;
  constexpr const char* kWhat = "insert blocks";
  begin_write(kWhat);
  crash_point("index.insert_begun");
  try {
    std::vector<uint8_t> tokens;  // the current row's token bytes, bound SQLITE_STATIC
    for (const IndexedBlock& block : blocks) {
      encode_tokens(block.tokens, tokens);
      StatementUse use(insert_);
      bind_hash(db_, file_, insert_, 1, block.hash);
      bind_hash(db_, file_, insert_, 2, block.parent);
      bind_hash(db_, file_, insert_, 3, block.model);
      check(db_, file_, sqlite3_bind_int(insert_, 4, block.slab), "bind slab");
      check(db_, file_, sqlite3_bind_int(insert_, 5, block.slot), "bind slot");
      check(db_, file_, sqlite3_bind_int64(insert_, 6, block.n_bytes), "bind n_bytes");
      check(db_, file_, sqlite3_bind_int64(insert_, 7, std::bit_cast<int64_t>(block.checksum)),
            "bind checksum");
      check(db_, file_, sqlite3_bind_int64(insert_, 8, block.last_used_ms), "bind last_used");
      // A null pointer would bind NULL, not an empty blob (an empty vector's
      // data() may be null).
      const int rc = tokens.empty()
                         ? sqlite3_bind_zeroblob(insert_, 9, 0)
                         : sqlite3_bind_blob(insert_, 9, tokens.data(),
                                             static_cast<int>(tokens.size()), SQLITE_STATIC);
      check(db_, file_, rc, "bind tokens");
      step(db_, file_, insert_, kWhat);
      crash_point("index.insert_row");
    }
    crash_point("index.insert_before_commit");
    commit_write(kWhat);
  } catch (...) {
    rollback_write();
    throw;
  }
}

std::optional<IndexedBlock> BlockIndex::find(const BlockHash& hash) const {
  StatementUse use(find_);
  bind_hash(db_, file_, find_, 1, hash);
  std::vector<IndexedBlock> rows = read_rows(find_, "find a block");
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::vector<IndexedBlock> BlockIndex::load_model(const ModelFingerprint& model) const {
  StatementUse use(load_model_);
  bind_hash(db_, file_, load_model_, 1, model);
  return read_rows(load_model_, "load a model's blocks");
}

void BlockIndex::erase(std::span<const BlockHash> hashes) {
  if (hashes.empty()) return;
  constexpr const char* kWhat = "erase blocks";
  begin_write(kWhat);
  try {
    for (const BlockHash& hash : hashes) {
      StatementUse use(erase_);
      bind_hash(db_, file_, erase_, 1, hash);
      step(db_, file_, erase_, kWhat);
    }
    crash_point("index.erase_in_transaction");
    commit_write(kWhat);
  } catch (...) {
    rollback_write();
    throw;
  }
}

void BlockIndex::touch(std::span<const BlockHash> hashes, int64_t now_ms) {
  if (hashes.empty()) return;
  constexpr const char* kWhat = "touch blocks";
  begin_write(kWhat);
  try {
    for (const BlockHash& hash : hashes) {
      StatementUse use(touch_);
      bind_hash(db_, file_, touch_, 1, hash);
      check(db_, file_, sqlite3_bind_int64(touch_, 2, now_ms), "bind last_used");
      step(db_, file_, touch_, kWhat);
    }
    crash_point("index.touch_in_transaction");
    commit_write(kWhat);
  } catch (...) {
    rollback_write();
    throw;
  }
}

std::vector<IndexedBlock> BlockIndex::least_recently_used(const ModelFingerprint& model,
                                                          int64_t n) const {
  if (n <= 0) return {};  // SQLite reads a negative LIMIT as no limit
  StatementUse use(least_recently_used_);
  bind_hash(db_, file_, least_recently_used_, 1, model);
  check(db_, file_, sqlite3_bind_int64(least_recently_used_, 2, n), "bind the limit");
  return read_rows(least_recently_used_, "list least recently used blocks");
}

bool BlockIndex::has_moved() const {
  int moved = 0;
  const int rc = sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved);
  return rc == SQLITE_OK && moved != 0;
}

int64_t BlockIndex::count() const {
  StatementUse use(count_);
  return read_count(count_, "count blocks");
}

int64_t BlockIndex::count_model(const ModelFingerprint& model) const {
  StatementUse use(count_model_);
  bind_hash(db_, file_, count_model_, 1, model);
  return read_count(count_model_, "count a model's blocks");
}

int64_t BlockIndex::total_bytes() const {
  StatementUse use(total_bytes_);
  return read_count(total_bytes_, "sum block bytes");
}

void BlockIndex::clear() {
  StatementUse use(clear_);
  step(db_, file_, clear_, "clear the index");  // one statement: its own transaction
}

}  // namespace strata

#undef STRATA_BLOCK_COLUMNS
