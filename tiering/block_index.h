// BlockIndex: the SQLite index of KV blocks persisted in T2's slab files. One
// row per block records where its bytes are (slab, slot), how to check them
// (byte length, XXH3 checksum), what they are (hash, parent, model, the
// block's own token ids) and when the block was last used (for LRU reclaim).
// It is what lets cached prefixes survive a restart: on start the tier manager
// loads a model's rows, verifies each against its slab, and drops bad ones.
//
// It is a cache, so the file is never precious: a database of an older or
// unknown layout is dropped and recreated, and a corrupt file (not a database,
// or any damage SQLite's integrity check finds while opening, in the table or
// its indexes) is moved aside to `<file>.corrupt` and an empty index takes its
// place, each with a warning. Only a database written by a newer Strata (a
// higher schema version) is refused, so that a downgrade does not destroy the
// newer version's cache.
//
// Every other SQLite failure becomes a std::runtime_error naming the file,
// the operation and SQLite's message. Rows whose stored values have the wrong
// shape (a hash that is not 32 bytes, a token blob that is not whole int32s,
// a slab or slot outside int32) are never returned: they are deleted when the
// index is opened and skipped if met later.
//
// Threads: every method is called by one owner thread (the DiskWorker's);
// there is no lock, and the prepared statements, kept for the object's
// lifetime, are not shareable between threads. That thread is the only
// writer. Other connections (another BlockIndex on the same file, the sqlite3
// shell) may read at the same time without blocking it, thanks to WAL; a
// second writer would wait up to kBusyTimeoutMs for the write lock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "tiering/block_hash.h"

struct sqlite3;
struct sqlite3_stmt;

namespace strata {

// One row of the index: one persisted full block.
struct IndexedBlock {
  BlockHash hash;            // identity, SHA-256 chained over the prefix; primary key
  BlockHash parent;          // the previous block's hash; all zero for a sequence's first block
  ModelFingerprint model;    // the model whose KV these are
  int32_t slab = 0;          // slab file number in the cache dir
  int32_t slot = 0;          // slot in that slab; (slab, slot) is unique
  int64_t n_bytes = 0;       // bytes of the block in its slot
  uint64_t checksum = 0;     // block_checksum() of those bytes (tiering/block_checksum.h)
  int64_t last_used_ms = 0;  // unix time in ms; LRU order for reclaim
  // The block's token ids: a hit is verified against the request's own
  // tokens, never trusted on the hash alone.
  std::vector<int32_t> tokens;

  bool operator==(const IndexedBlock&) const = default;
};

class BlockIndex {
 public:
  // PRAGMA user_version of the layout this code writes. A file with a lower
  // version (or 0 with tables in it) is dropped and recreated; a higher one is
  // refused.
  static constexpr int kSchemaVersion = 1;
  // How long a statement waits for another connection's lock before failing
  // with SQLITE_BUSY. Only a second writer or a checkpoint makes it wait.
  static constexpr int kBusyTimeoutMs = 5000;

  // Opens `file` (creating the file if need be, never its directory) or
  // recovers it as described above. Throws std::runtime_error naming the file
  // and SQLite's message when it cannot (unwritable directory, a newer schema,
  // a failure to move a corrupt file aside).
  explicit BlockIndex(const std::filesystem::path& file);
  ~BlockIndex();  // finalizes the statements and closes; never throws
  BlockIndex(const BlockIndex&) = delete;
  BlockIndex& operator=(const BlockIndex&) = delete;

  // Inserts the rows, or replaces those with the same hash, in ONE
  // transaction: the caller batches write-through completions after
  // DiskStore::sync(), so a row is committed only once its bytes are durable.
  // A row whose (slab, slot) another row holds replaces that row too: the
  // slot's bytes are the new block's now, so the old row is stale.
  // All or nothing: on an error nothing is inserted and it throws.
  void insert(std::span<const IndexedBlock> blocks);

  // The row of `hash`, or nullopt when there is none (or it is malformed).
  std::optional<IndexedBlock> find(const BlockHash& hash) const;

  // Every row of one model, least recently used first, for start-up: the tier
  // manager verifies slab, slot and checksum and erases bad rows.
  std::vector<IndexedBlock> load_model(const ModelFingerprint& model) const;

  // Deletes the rows of these hashes in one transaction; absent ones are
  // ignored.
  void erase(std::span<const BlockHash> hashes);

  // Sets last_used of these rows to now_ms (unix ms) in one transaction;
  // absent ones are ignored.
  void touch(std::span<const BlockHash> hashes, int64_t now_ms);

  // At most n rows of `model`, least recently used first (reclaim when T2 is
  // full). Rows with equal last_used come in an unspecified order.
  std::vector<IndexedBlock> least_recently_used(const ModelFingerprint& model, int64_t n) const;

  int64_t count() const;  // rows of every model
  int64_t count_model(const ModelFingerprint& model) const;
  int64_t total_bytes() const;  // sum of n_bytes; O(rows), a scan

  // Deletes every row of every model (POST /v1/cache/clear).
  void clear();

  // Whether the file has been deleted, renamed or replaced since it was
  // opened (SQLite's SQLITE_FCNTL_HAS_MOVED): its rows would then go on being
  // written to a file nobody will open again. False when SQLite cannot tell.
  bool has_moved() const;

  const std::filesystem::path& file() const { return file_; }

 private:
  // Opens db_, checks or creates the schema, purges malformed rows and
  // prepares the statements. Throws; leaves the members for close() to free.
  void open();
  // Finalizes whatever statements are prepared and closes db_; never throws.
  void close() noexcept;
  void prepare_statements();
  sqlite3_stmt* prepare(const char* sql);
  void begin_write(const char* what);  // BEGIN IMMEDIATE
  void commit_write(const char* what);
  void rollback_write() noexcept;  // after a failure; errors are ignored
  // Steps `stmt` (bound by the caller, who also resets it) to the end and
  // returns the well-formed rows, logging how many were skipped.
  std::vector<IndexedBlock> read_rows(sqlite3_stmt* stmt, const char* what) const;
  int64_t read_count(sqlite3_stmt* stmt, const char* what) const;

  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
  // Prepared once (SQLITE_PREPARE_PERSISTENT), finalized in close(). Each is
  // reset after every use so that no read transaction stays open.
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
  sqlite3_stmt* rollback_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* find_ = nullptr;
  sqlite3_stmt* load_model_ = nullptr;
  sqlite3_stmt* erase_ = nullptr;
  sqlite3_stmt* touch_ = nullptr;
  sqlite3_stmt* least_recently_used_ = nullptr;
  sqlite3_stmt* count_ = nullptr;
  sqlite3_stmt* count_model_ = nullptr;
  sqlite3_stmt* total_bytes_ = nullptr;
  sqlite3_stmt* clear_ = nullptr;
};

}  // namespace strata
