// DiskStore: the T2 tier's I/O layer. Fixed-size block slots in slab files in
// one directory, for one model fingerprint, read and written with O_DIRECT
// through io_uring. It knows nothing of hashes or SQLite: the index
// (DESIGN.md, "The SQLite index") records which slot holds which block and
// tells the store, on start, which slots are taken (mark_used). The store
// only hands out slots and moves slot_bytes bytes between a slot and a
// caller's page-aligned buffer.
//
// On disk: `slab-000000.bin`, `slab-000001.bin`, ... in options.dir. Slab s
// holds slots [s * slots_per_slab, (s + 1) * slots_per_slab) of the global
// slot numbering: one 4096-byte header page, then its slots back to back,
// slot i at byte 4096 + i * slot_bytes. The header page, native byte order,
// zero-padded: char magic[16] "STRATASLAB"; uint32 version (1); uint32 0;
// int64 slot_bytes; int64 slots_per_slab; uint8 fingerprint[32]. A slab file
// is created (header written, space reserved) when its first slot is
// allocated or marked used; slots are handed out lowest first, so files fill
// in order and the last ones are created only when needed.
//
// Failures, all of them return values, never exceptions after construction:
//  - A full disk (ENOSPC), a file-size limit (EFBIG), EIO, ...: the error of
//    the write's (or read's) DiskCompletion. Creating a slab reserves its
//    whole size with fallocate(FALLOC_FL_KEEP_SIZE), so a full disk usually
//    shows up there, once per slab rather than mid-slot; a slab that
//    could not be created is retried on each later I/O to it, and until then
//    every read and write to it completes at once with the creation's errno.
//    The caller decides: on ENOSPC it turns persistence off and keeps serving
//    (reads of what is already on disk still work).
//  - A slot never written: a read that runs into the end of its slab file
//    completes with ENODATA. (Space is reserved without growing the file, so
//    slots above the highest written one are past EOF. A never-written slot
//    below a written one reads as zeros: the index's checksum catches that.)
//  - An existing slab file whose header does not match this store (magic,
//    format version, slot_bytes, slots_per_slab, fingerprint), or is too
//    short to hold one: it is never read as ours. It is renamed aside to
//    `slab-NNNNNN.bin.rejected` (kept, not deleted: it may be another model's
//    data put in the wrong directory; one such file per slab, the next
//    rejection replaces it), a log_warning says so, and a fresh slab takes its
//    place, so reads of slots the index believed were there fail (ENODATA).
//  - A filesystem that refuses O_DIRECT (EINVAL at open, e.g. tmpfs on old
//    kernels): buffered I/O instead, with one log_warning per store.
//
// Threads: one thread (the tiering thread) owns a DiskStore and calls every
// method; no locks. Another process (or DiskStore) using the same directory
// is refused at construction (flock on the directory).
#pragma once

#include <array>
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace strata {

class UringQueue;

struct SlotAddress {
  int32_t slab = 0;  // slab file number
  int32_t slot = 0;  // slot within the slab, in [0, slots_per_slab)
  auto operator<=>(const SlotAddress&) const = default;
};

struct DiskStoreOptions {
  std::filesystem::path dir;     // created if missing
  int64_t slot_bytes = 0;        // > 0, multiple of 4096 (BlockPool::kSlotAlignment), <= 1 GiB
  int64_t max_slots = 0;         // capacity cap (the --disk-cache-size in slots), > 0
  int64_t slots_per_slab = 256;  // slab file = header page + slots_per_slab slots
  int32_t queue_depth = 64;      // io_uring entries = max I/Os in flight (<= 4096)
  std::array<uint8_t, 32> fingerprint{};  // model fingerprint, written in every slab header
  // False: plain buffered I/O through the page cache (tests; filesystems
  // where O_DIRECT opens but misbehaves). True falls back by itself where
  // open() refuses O_DIRECT.
  bool direct_io = true;
};

struct DiskCompletion {
  uint64_t tag = 0;  // the caller's tag from enqueue_read / enqueue_write
  int error = 0;     // 0 (all slot_bytes moved) or a positive errno
};

class DiskStore {
 public:
  static constexpr int64_t kHeaderBytes = 4096;  // header page at the start of each slab file
  static constexpr int64_t kAlignment = 4096;    // of buffers, slot_bytes and file offsets
  static constexpr uint32_t kFormatVersion = 1;
  // io_uring allows more; past this, batching gains nothing and the ring's
  // memory (locked) grows.
  static constexpr int32_t kMaxQueueDepth = 4096;
  // Zero-progress resubmissions (-EAGAIN, a write of 0 bytes) of one
  // operation before it fails, so that a stuck device cannot spin forever.
  static constexpr int kMaxRetries = 32;

  // Cumulative since construction; read by /metrics.
  struct Counters {
    int64_t reads = 0;   // completed without error
    int64_t writes = 0;  // completed without error
    int64_t bytes_read = 0;
    int64_t bytes_written = 0;
    int64_t errors = 0;     // completions with error != 0
    int64_t resubmits = 0;  // short transfers and -EAGAIN sent again for the remainder
    int64_t fixed_ops = 0;  // submissions that used a registered buffer
    int64_t slabs_created = 0;
    int64_t slabs_rejected = 0;  // renamed aside for a header mismatch
  };

  // Creates options.dir if missing, locks it, and sets up an io_uring of
  // queue_depth entries; opens no slab yet. Throws std::system_error (a
  // std::runtime_error) whose what() names the path or call and strerror:
  // the directory cannot be created or opened, is locked by another store,
  // or io_uring is unavailable ("io_uring_queue_init", ENOSYS / EPERM).
  // Bad options are a bug (check failure): config validates them first.
  explicit DiskStore(DiskStoreOptions options);
  // Waits for the I/O in flight (the kernel may still be writing into the
  // callers' buffers, so it must finish before they can be freed); queued
  // operations that were never submitted are dropped.
  ~DiskStore();
  DiskStore(const DiskStore&) = delete;
  DiskStore& operator=(const DiskStore&) = delete;

  // --- slots (in memory; the index tells which slots hold data on start) ---

  // The lowest free slot, now used; nullopt when max_slots are in use (an
  // expected outcome: the index evicts its LRU rows and frees their slots).
  // Creates the slot's slab file if it has none yet; a creation failure is
  // not reported here but by the slot's I/O (see the top comment).
  std::optional<SlotAddress> allocate_slot();
  // At start-up, for each slot the index says holds a block. The slot must
  // be free; its slab file is opened (and its header checked) now.
  void mark_used(SlotAddress slot);
  // The slot must be used, and no I/O on it queued or in flight.
  void free_slot(SlotAddress slot);
  bool is_used(SlotAddress slot) const;
  int64_t n_used_slots() const { return n_used_; }
  int64_t capacity_slots() const { return options_.max_slots; }

  // --- asynchronous I/O ----------------------------------------------------

  // Queue one write or read of a whole used slot. `buffer` holds slot_bytes
  // bytes, is 4096-aligned, and must stay valid (and, for a write, unchanged)
  // until the operation's completion is reaped. `tag` comes back in the
  // completion. Nothing is submitted until submit().
  void enqueue_write(SlotAddress slot, const std::byte* buffer, uint64_t tag);
  void enqueue_read(SlotAddress slot, std::byte* buffer, uint64_t tag);
  // Submits queued operations in order, at most queue_depth in flight (the
  // rest stay queued and reap() sends them as completions free room), with
  // one io_uring_submit per call.
  void submit();
  // Completions of finished operations, each operation exactly once. When
  // wait is true and none is ready, waits up to `timeout` for one (returns
  // at once, empty, if nothing is in flight). Short reads and writes and
  // -EAGAIN are resubmitted for the remainder, not reported. Also submits
  // queued operations into the room that completions free.
  std::vector<DiskCompletion> reap(bool wait, std::chrono::milliseconds timeout);
  int64_t n_in_flight() const;  // submitted to the kernel, not yet reaped; <= queue_depth
  int64_t n_queued() const { return static_cast<int64_t>(queued_.size()); }

  // Makes completed writes durable: fdatasync on every slab file written
  // (or created) since the last call, and fsync of the directory when a slab
  // was created. 0 or the first errno; on an error the index must not commit
  // the rows of those writes (the kernel reports a writeback error once, so a
  // retry returning 0 proves nothing). Called before the index commits rows.
  int sync();

  // 0 when writes to this store still land in options.dir: the directory at
  // that path, and the name of each slab file written since the last sync(),
  // are still the ones this store opened, and the directory can be written.
  // Otherwise ESTALE when they are not (the folder or a slab file was
  // deleted, renamed or replaced, or another filesystem mounted over it:
  // writes would go to files nobody will open again), or the errno of
  // access(W_OK) (EROFS: a read-only filesystem or mount; EACCES). The kernel
  // does not report writes into unlinked files, so the caller asks before
  // sync() and its commit. A few stat calls, two per slab written.
  int folder_status() const;

  // Registers a host arena (e.g. BlockPool's) as io_uring fixed buffers, in
  // pieces of at most 1 GiB (a whole number of slots each, so a slot-aligned
  // arena never has a slot across two), so that reads and writes whose
  // buffer lies inside one piece use READ_FIXED / WRITE_FIXED and skip the
  // per-I/O page pinning. Registration pins (and so commits) the whole
  // arena. If it fails (RLIMIT_MEMLOCK, ...) the store falls back to plain
  // operations, which work for any buffer; a log_info says so. Replaces any
  // earlier arena; an empty span unregisters. Only while nothing is in
  // flight. The arena must stay mapped while registered.
  void register_buffers(std::span<std::byte> arena);
  bool buffers_registered() const { return !registered_.empty(); }

  // --- observation ---------------------------------------------------------

  const DiskStoreOptions& options() const { return options_; }
  bool direct_io() const { return direct_io_; }  // false after the O_DIRECT fallback
  const Counters& counters() const { return counters_; }
  std::filesystem::path slab_path(int32_t slab) const;
  // Aborts unless the used bitmap and n_used agree, in-flight operations and
  // free operation ids add up to queue_depth, and every queued or in-flight
  // operation names a used slot inside its slab. O(max_slots / 64 +
  // queue_depth + n_queued); for tests and debug builds.
  void check_integrity() const;

 private:
  struct Slab {
    int fd = -1;         // the open slab file, or -1: not created yet, or creation failed
    int open_error = 0;  // errno of the last failed open / creation; 0 if none
    bool dirty = false;  // written (or created) since the last sync()
  };

  // One read or write of a slot, queued or in flight.
  struct Op {
    uint64_t tag = 0;
    bool is_write = false;
    int64_t global_slot = 0;      // slab * slots_per_slab + slot
    std::byte* buffer = nullptr;  // slot_bytes bytes
    int64_t n_done = 0;           // bytes already transferred (short transfers)
    int n_retries = 0;            // zero-progress resubmissions so far
  };

  int64_t global_slot(SlotAddress slot) const;  // checks the address is inside capacity
  SlotAddress address(int64_t global_slot) const;
  int64_t n_slabs() const;
  void set_used(int64_t global_slot, bool used);

  // Slab files: open (validating or creating) on first use.
  int ensure_slab_open(int32_t slab);                     // 0 or errno
  int open_or_create_slab(int32_t slab);                  // fd or -errno
  int open_slab_file(const std::filesystem::path& path);  // fd or -errno; O_DIRECT fallback
  int initialize_slab(int fd, int32_t slab);              // header + space reservation; 0 or errno
  std::array<std::byte, kHeaderBytes> expected_header() const;
  bool header_matches(int fd) const;
  int reject_slab(int32_t slab);  // 0 or errno

  void enqueue(SlotAddress slot, std::byte* buffer, uint64_t tag, bool is_write);
  bool prepare(const Op& op, uint32_t op_id);
  void handle_result(uint32_t op_id, int32_t result, std::vector<DiskCompletion>& out);
  void complete(const Op& op, int error, std::vector<DiskCompletion>& out);
  void reap_ready(std::vector<DiskCompletion>& out);
  int registered_index(const std::byte* buffer, int64_t length) const;  // or -1

  DiskStoreOptions options_;
  // Open slab files with O_DIRECT; cleared (once, with a warning) on EINVAL.
  bool direct_io_ = true;
  int dir_fd_ = -1;         // options_.dir, held open for the flock and for fsync
  bool dir_dirty_ = false;  // a slab file was created since the last sync()
  std::unique_ptr<UringQueue> ring_;

  // Bit g of used_bits_ is set exactly when global slot g is used, or
  // g >= max_slots (the last word's padding, so that any clear bit is a free
  // slot); n_used_ counts the used slots. Every word below
  // first_maybe_free_word_ is full.
  std::vector<uint64_t> used_bits_;
  int64_t n_used_ = 0;
  size_t first_maybe_free_word_ = 0;

  std::vector<Slab> slabs_;  // indexed by slab number, size n_slabs()

  std::deque<Op> queued_;  // waiting for room in the ring; resubmissions go first
  // Operations in flight, indexed by op id (the io_uring user_data), size
  // queue_depth; in_flight_[id] is meaningful while id is not in free_op_ids_.
  std::vector<Op> in_flight_;
  std::vector<uint32_t> free_op_ids_;
  std::vector<DiskCompletion> ready_;  // finished without reaching the kernel (slab open failed)

  // Registered arena pieces: registered_[i] is fixed buffer i, each
  // registered_piece_bytes_ long except perhaps the last, back to back.
  std::vector<std::span<std::byte>> registered_;
  int64_t registered_piece_bytes_ = 0;

  Counters counters_;
};

}  // namespace strata
