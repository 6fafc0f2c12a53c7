// DiskWorker: the tiering thread (DESIGN.md, "Threads"). It owns the T2 tier
// — slab files of block slots (DiskStore) and their SQLite index
// (BlockIndex) — and runs the moves the engine thread asks for: write-through
// of full blocks from host memory, and loads back into it. The engine never
// waits on the disk: it queues jobs and takes completions at its next step,
// woken by the listener callback.
//
// Durability: a block's index row is committed only after its bytes are
// fdatasync'd, so after a crash every row names bytes that reached the disk.
// Still, every load checks the bytes against the row's checksum: a torn or
// flipped block is dropped and reported as a failed load, never served.
// Capacity: when the slab files are full, the least recently used rows are
// erased (committed) before their slots are reused.
// Failed writes: a write (or its sync, or its index row) that fails — a full
// disk, an I/O error, the folder gone — turns persistence off until restart,
// with one warning; loads of what is already there go on. A failure to
// record which blocks were used costs only that record.
//
// Threads: the public methods may be called from any thread (they lock
// briefly; the engine thread is the one that calls them); the I/O, the
// checksums and SQLite run on the worker's own thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tiering/block_hash.h"
#include "tiering/block_index.h"
#include "tiering/disk_store.h"

namespace strata {

struct DiskTierOptions {
  std::filesystem::path dir;  // slab files and index.sqlite; created if missing
  int64_t block_bytes = 0;    // bytes of one block (a host slot may be larger)
  int64_t capacity_bytes = 0; // cap on slot bytes in the slab files
  ModelFingerprint model{};   // only this model's blocks are served
  int32_t queue_depth = 64;   // I/Os in flight at most
  // --persist all: every full block is written through, and the blocks on
  // disk are served again after a restart. none: the disk only takes blocks
  // demoted from host memory under pressure, and starts empty every run.
  bool persist = true;
};

enum class TierEvent {
  kPersisted,      // written, synced and indexed: may be dropped from host memory
  kPersistFailed,  // not written (disk full, I/O error, persistence off)
  kLoaded,         // read into the destination and its checksum verified
  kLoadFailed,     // not loaded (gone, unreadable or corrupt): recompute
};

struct TierCompletion {
  TierEvent event = TierEvent::kLoadFailed;
  BlockHash hash;
  uint64_t tag = 0;  // the caller's, from persist() or load()
};

struct DiskTierStats {
  int64_t n_blocks = 0;       // indexed blocks of this model
  int64_t capacity_blocks = 0;
  int64_t bytes_written = 0;  // host -> disk
  int64_t bytes_read = 0;     // disk -> host
  int64_t n_in_flight = 0;    // moves queued or running
  int64_t n_loads = 0;        // verified loads
  int64_t n_load_failures = 0;
  int64_t n_dropped = 0;      // rows dropped: bad at start-up, corrupt, reclaimed
  int64_t n_write_failures = 0;  // persists that failed, refused ones (writing off) included
  bool writing = false;       // writes on (off after a write fails: full disk, I/O error)
};

class DiskWorker {
 public:
  // Opens (or creates) the index and slab files and drops rows that cannot be
  // served (missing slab file, slot out of range), then starts the thread.
  // Throws std::runtime_error naming the path when the cache directory
  // cannot be used at all.
  DiskWorker(DiskTierOptions options);
  // Finishes the moves in flight (so queued write-through is not lost on a
  // clean shutdown), then joins.
  ~DiskWorker();
  DiskWorker(const DiskWorker&) = delete;
  DiskWorker& operator=(const DiskWorker&) = delete;

  // Writes the block at `bytes` (block_bytes; 4096-aligned; unchanged and
  // alive until the completion is taken) and indexes it with its parent and
  // token ids. Completes at once with kPersistFailed when persistence is off.
  void persist(const BlockHash& hash, const BlockHash& parent, std::span<const int32_t> tokens,
               const std::byte* bytes, uint64_t tag);
  // Reads the block into `dest` (a whole host slot, 4096-aligned; untouched
  // by the caller until the completion is taken).
  void load(const BlockHash& hash, std::byte* dest, uint64_t tag);
  std::vector<TierCompletion> take_completions();
  // Called on the worker thread after each completion is queued (to wake the
  // engine); must not block. Set to nullptr before the listener goes away.
  void set_listener(std::function<void()> on_completion);

  // The number of leading blocks of `chain` that are on disk with exactly the
  // given tokens (block i holds tokens[i * n, (i + 1) * n), n = tokens per
  // block): what a load could bring back. The hash alone is never trusted.
  int64_t count_loadable(std::span<const BlockHash> chain, std::span<const int32_t> tokens) const;
  bool contains(const BlockHash& hash) const;
  bool writes_through() const { return options_.persist; }
  // Whether writes are on: off, until restart, once a write has failed
  // (full disk, I/O error, the folder gone), so that nobody retries blocks
  // that cannot be written.
  bool writing() const;
  // Drops every block of this model from the disk (after the moves in
  // flight, which may still add a few). Asynchronous.
  void clear();

  DiskTierStats stats() const;
  // Waits until nothing is queued or in flight (tests, shutdown).
  void wait_idle();

 private:
  struct Job {
    bool is_write = false;
    BlockHash hash;
    BlockHash parent;
    std::vector<int32_t> tokens;   // writes
    const std::byte* src = nullptr;  // writes
    std::byte* dest = nullptr;       // loads
    uint64_t tag = 0;
    SlotAddress slot;
    uint64_t checksum = 0;
  };
  void run();
  void start_jobs(std::deque<Job>& jobs);
  void start_persist(Job& job);
  void start_load(Job& job);
  void finish_io(uint64_t io_id, int error);
  void commit_written();
  void record_use();
  // Turns writing off, with one warning naming `why`.
  void stop_writing(const std::string& why);
  void drop_rows(std::span<const BlockHash> hashes);
  bool reclaim_one_slot();
  void complete(TierEvent event, const BlockHash& hash, uint64_t tag);
  void open_and_check();
  void clear_all();
  bool fits(SlotAddress slot) const;
  std::optional<IndexedBlock> find(const BlockHash& hash) const;

  const DiskTierOptions options_;

  // Worker thread only (after construction).
  std::unique_ptr<BlockIndex> index_;
  std::unique_ptr<DiskStore> store_;
  std::unordered_map<uint64_t, Job> running_;  // by I/O id
  int64_t n_writes_running_ = 0;
  std::vector<IndexedBlock> written_;          // written, awaiting sync + commit
  std::vector<uint64_t> pending_tags_;         // the callers' tags of written_
  std::vector<BlockHash> touched_;             // loaded: LRU time to update
  std::multiset<SlotAddress> reading_;         // slots with a read in flight: not reclaimed
  uint64_t next_io_ = 1;
  bool warned_use_ = false;  // record_use() failed and said so

  // What is on disk and indexed, by hash (the engine's lookups read it).
  std::unordered_map<BlockHash, IndexedBlock, BlockHashHasher> catalog_;  // under mutex_

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;                  // under mutex_
  std::vector<TierCompletion> completed_;  // under mutex_
  int64_t n_busy_ = 0;                     // queued + running, under mutex_
  DiskTierStats stats_;                    // under mutex_
  bool stopping_ = false;                  // under mutex_
  bool clear_requested_ = false;           // under mutex_
  std::function<void()> on_completion_;    // under mutex_
  std::thread thread_;
};

}  // namespace strata
