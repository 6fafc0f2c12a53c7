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
// disk, an I/O error, a read-only folder — turns writing off, with one
// warning; loads of what is already there go on. Before each commit the
// worker also checks that the folder at the path is still the one its files
// are in (the kernel takes writes into deleted files without a word): a
// folder deleted or replaced while serving turns writing off the same way.
// Writing comes back by itself: once a back-off has passed (retry_min,
// doubling while it keeps failing, at most retry_max), the next block the
// engine offers is written as a probe, alone. If it is durable and indexed,
// writing is on again (one info line); if not, the back-off doubles, with
// no line of its own (at most one "still off" line every few minutes). A
// probe that finds the folder deleted or replaced first opens a fresh store
// and index in the folder at the path, as at start-up, dropping the catalog
// of the blocks it can no longer reach. Nothing wakes an idle engine to
// probe: the probe rides on the next block it offers.
// Logs: a failure that can repeat per block (a load that fails, a row that
// cannot be erased) is logged a bounded number of times (common/log_limiter.h).
// A failure to record which blocks were used costs only that record.
//
// Threads: the public methods may be called from any thread (they lock
// briefly; the engine thread is the one that calls them); the I/O, the
// checksums and SQLite run on the worker's own thread.
#pragma once

#include <chrono>
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

#include "common/log_limiter.h"
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
  // After a failed write, the first probe write comes retry_min later; each
  // probe that fails doubles the wait, up to retry_max. retry_min is taken
  // as at most retry_max.
  std::chrono::milliseconds retry_min = std::chrono::seconds(1);
  std::chrono::milliseconds retry_max = std::chrono::minutes(1);
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
  int64_t n_reopens = 0;      // times the folder, deleted or replaced, was opened afresh
  bool writing = false;       // writes on (off from a failed write until a probe succeeds)
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
  // token ids. With writing off, it is the probe when one is due
  // (takes_writes()); otherwise it completes at once with kPersistFailed.
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
  // Whether writes are on: off from a failed write (full disk, I/O error,
  // a read-only, deleted or replaced folder) until a probe write succeeds.
  bool writing() const;
  // Whether a persist() now would be tried: writing is on, or it is off and
  // a probe is due (the back-off has passed and no probe is under way). The
  // engine offers blocks only then, so that it never spins re-offering
  // blocks that cannot be written, while the next block it offers after the
  // back-off finds out whether writing works again.
  bool takes_writes() const;
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
    bool is_probe = false;  // writes: the one that finds out whether writing works again
  };
  enum class FolderState {
    kInPlace,     // the store's files are the folder's, and it can be written
    kGone,        // deleted or replaced (or no store is open): reopen before writing
    kUnwritable,  // read-only, no permission, I/O errors
  };
  void run();
  void start_jobs(std::deque<Job>& jobs);
  void start_persist(Job& job);
  void start_load(Job& job);
  void finish_io(uint64_t io_id, int error);
  void commit_written();
  void record_use();
  // Turns writing off, with a warning naming `why` (rate-limited should
  // writing keep coming back and failing again); the first probe is due
  // retry_min later. Nothing more when writing is off already (a write
  // started before it went off).
  void stop_writing(const std::string& why);
  // The probe's outcome: writing back on, or a back-off twice as long.
  void probe_succeeded();
  void probe_failed(const std::string& why);
  void release_probe();  // ended without an outcome: the next write probes
  FolderState check_folder(std::string& why) const;
  // Before a probe writes: "" when it may, else why not.
  std::string prepare_probe(Job& job);
  std::string reopen();  // "" when a fresh store and index are open
  void drop_rows(std::span<const BlockHash> hashes);
  bool reclaim_one_slot();
  void complete(TierEvent event, const BlockHash& hash, uint64_t tag);
  void open_and_check();
  void clear_all();
  bool fits(SlotAddress slot) const;
  std::optional<IndexedBlock> find(const BlockHash& hash) const;

  const DiskTierOptions options_;

  // Worker thread only (after construction). Both null after a reopen that
  // failed, until a probe opens them.
  std::unique_ptr<BlockIndex> index_;
  std::unique_ptr<DiskStore> store_;
  std::unordered_map<uint64_t, Job> running_;  // by I/O id
  int64_t n_writes_running_ = 0;
  std::vector<IndexedBlock> written_;          // written, awaiting sync + commit
  std::vector<uint64_t> pending_tags_;         // the callers' tags of written_
  std::vector<BlockHash> touched_;             // loaded: LRU time to update
  std::multiset<SlotAddress> reading_;         // slots with a read in flight: not reclaimed
  uint64_t next_io_ = 1;
  // A probe that must reopen the folder waits for the I/O in flight (on the
  // old store) to end; loads fail at once meanwhile.
  std::optional<Job> deferred_probe_;
  bool probe_written_ = false;  // the probe's block is in written_
  // Writing off: whether its warning was logged (then so is the line that it
  // is back on), since when, and the failed probes since then.
  bool off_logged_ = false;
  std::chrono::steady_clock::time_point still_off_logged_at_{};
  int64_t n_failed_probes_ = 0;
  // Lines that could repeat per block or per flap, bounded.
  LogLimiter off_log_;
  LogLimiter load_failure_log_;
  LogLimiter erase_failure_log_;
  LogLimiter reclaim_failure_log_;
  LogLimiter use_failure_log_;

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
  // Writing off: a probe may start at probe_at_ unless one is claimed (by
  // persist(), until its outcome); retry_delay_ is the current back-off.
  std::chrono::steady_clock::time_point probe_at_{};  // under mutex_
  std::chrono::milliseconds retry_delay_{0};           // under mutex_
  bool probe_claimed_ = false;                         // under mutex_
  std::thread thread_;
};

}  // namespace strata
