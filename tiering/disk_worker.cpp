#include "tiering/disk_worker.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/check.h"
#include "common/log.h"
#include "common/str_cat.h"
#include "tiering/block_checksum.h"

namespace strata {
namespace {

constexpr int64_t kSlotAlignment = 4096;
// Written blocks are committed to the index in batches: one fdatasync and one
// transaction for many blocks, and at once when the writes pause.
constexpr size_t kCommitBatch = 64;
constexpr auto kReapTimeout = std::chrono::milliseconds(2);

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// Inside the store's capacity (which may have shrunk since the row was written).
bool DiskWorker::fits(SlotAddress slot) const {
  const int64_t per_slab = store_->options().slots_per_slab;
  return slot.slab >= 0 && slot.slot >= 0 && slot.slot < per_slab &&
         slot.slab * per_slab + slot.slot < store_->capacity_slots();
}

DiskWorker::DiskWorker(DiskTierOptions options) : options_(std::move(options)) {
  STRATA_CHECK(options_.block_bytes > 0, "block_bytes ", options_.block_bytes);
  open_and_check();
  thread_ = std::thread([this] { run(); });
}

DiskWorker::~DiskWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DiskWorker::open_and_check() {
  std::error_code error;
  std::filesystem::create_directories(options_.dir, error);
  if (error) {
    throw std::runtime_error(str_cat("cannot create the cache directory ", options_.dir.string(),
                                     ": ", error.message()));
  }
  const int64_t slot_bytes = round_up(options_.block_bytes, kSlotAlignment);
  index_ = std::make_unique<BlockIndex>(options_.dir / "index.sqlite");
  store_ = std::make_unique<DiskStore>(DiskStoreOptions{
      .dir = options_.dir,
      .slot_bytes = slot_bytes,
      .max_slots = std::max<int64_t>(1, options_.capacity_bytes / slot_bytes),
      .queue_depth = options_.queue_depth,
      .fingerprint = options_.model.bytes});
  // Rows that cannot be served are dropped now; the bytes of the rest are
  // checked against their checksums on every load.
  if (!options_.persist) index_->clear();  // --persist none: this run's blocks only
  std::vector<BlockHash> bad;
  for (IndexedBlock& row : index_->load_model(options_.model)) {
    const SlotAddress slot{.slab = row.slab, .slot = row.slot};
    if (row.n_bytes != options_.block_bytes || !fits(slot) || store_->is_used(slot)) {
      bad.push_back(row.hash);
      continue;
    }
    store_->mark_used(slot);
    const BlockHash hash = row.hash;
    catalog_.emplace(hash, std::move(row));
  }
  if (!bad.empty()) {
    log_warning("KV cache index: dropped ", bad.size(), " rows whose slot is invalid");
    index_->erase(bad);
  }
  stats_.n_blocks = static_cast<int64_t>(catalog_.size());
  stats_.capacity_blocks = store_->capacity_slots();
  stats_.n_dropped = static_cast<int64_t>(bad.size());
  stats_.writing = true;
}

// --- engine thread -----------------------------------------------------------

void DiskWorker::persist(const BlockHash& hash, const BlockHash& parent,
                         std::span<const int32_t> tokens, const std::byte* bytes, uint64_t tag) {
  {
    std::lock_guard lock(mutex_);
    Job& job = queue_.emplace_back();
    job.is_write = true;
    job.hash = hash;
    job.parent = parent;
    job.tokens.assign(tokens.begin(), tokens.end());
    job.src = bytes;
    job.tag = tag;
    ++n_busy_;
  }
  wake_.notify_one();
}

void DiskWorker::load(const BlockHash& hash, std::byte* dest, uint64_t tag) {
  {
    std::lock_guard lock(mutex_);
    Job& job = queue_.emplace_back();
    job.hash = hash;
    job.dest = dest;
    job.tag = tag;
    ++n_busy_;
  }
  wake_.notify_one();
}

std::vector<TierCompletion> DiskWorker::take_completions() {
  std::lock_guard lock(mutex_);
  return std::exchange(completed_, {});
}

int64_t DiskWorker::count_loadable(std::span<const BlockHash> chain,
                                   std::span<const int32_t> tokens) const {
  if (chain.empty()) return 0;
  const size_t per_block = tokens.size() / chain.size();
  std::lock_guard lock(mutex_);
  int64_t n = 0;
  for (const BlockHash& hash : chain) {
    auto it = catalog_.find(hash);
    if (it == catalog_.end()) break;
    const std::span<const int32_t> want = tokens.subspan(static_cast<size_t>(n) * per_block,
                                                         per_block);
    if (!std::ranges::equal(it->second.tokens, want)) break;
    ++n;
  }
  return n;
}

bool DiskWorker::contains(const BlockHash& hash) const {
  std::lock_guard lock(mutex_);
  return catalog_.contains(hash);
}

bool DiskWorker::writing() const {
  std::lock_guard lock(mutex_);
  return stats_.writing;
}

DiskTierStats DiskWorker::stats() const {
  std::lock_guard lock(mutex_);
  DiskTierStats stats = stats_;
  stats.n_in_flight = n_busy_;
  return stats;
}

void DiskWorker::clear() {
  {
    std::lock_guard lock(mutex_);
    clear_requested_ = true;
    ++n_busy_;
  }
  wake_.notify_one();
}

void DiskWorker::wait_idle() {
  std::unique_lock lock(mutex_);
  wake_.wait(lock, [&] { return n_busy_ == 0; });
}

// --- worker thread -------------------------------------------------------------

void DiskWorker::run() {
  for (;;) {
    std::deque<Job> jobs;
    {
      std::unique_lock lock(mutex_);
      const bool idle = running_.empty() && written_.empty();
      if (idle) wake_.wait(lock, [&] { return stopping_ || clear_requested_ || !queue_.empty(); });
      if (stopping_ && idle && queue_.empty() && !clear_requested_) return;
      jobs.swap(queue_);
    }
    if (running_.empty() && written_.empty()) clear_all();  // if asked: nothing is in flight
    start_jobs(jobs);
    store_->submit();
    if (!running_.empty()) {
      for (const DiskCompletion& done : store_->reap(/*wait=*/true, kReapTimeout)) {
        finish_io(done.tag, done.error);
      }
    }
    if (n_writes_running_ == 0 || written_.size() >= kCommitBatch) commit_written();
  }
}

void DiskWorker::start_jobs(std::deque<Job>& jobs) {
  for (Job& job : jobs) {
    if (job.is_write) {
      start_persist(job);
    } else {
      start_load(job);
    }
  }
}

void DiskWorker::start_persist(Job& job) {
  bool persisting = false;
  bool present = false;
  {
    std::lock_guard lock(mutex_);
    persisting = stats_.writing;
    present = catalog_.contains(job.hash);
  }
  if (present) return complete(TierEvent::kPersisted, job.hash, job.tag);  // already durable
  if (!persisting) return complete(TierEvent::kPersistFailed, job.hash, job.tag);
  std::optional<SlotAddress> slot = store_->allocate_slot();
  if (!slot && reclaim_one_slot()) slot = store_->allocate_slot();
  if (!slot) return complete(TierEvent::kPersistFailed, job.hash, job.tag);
  job.slot = *slot;
  job.checksum = block_checksum(std::span(job.src, static_cast<size_t>(options_.block_bytes)));
  const uint64_t id = next_io_++;
  store_->enqueue_write(job.slot, job.src, id);
  ++n_writes_running_;
  running_.emplace(id, std::move(job));
}

void DiskWorker::start_load(Job& job) {
  std::optional<IndexedBlock> row = find(job.hash);
  if (!row) return complete(TierEvent::kLoadFailed, job.hash, job.tag);
  job.slot = SlotAddress{.slab = row->slab, .slot = row->slot};
  job.checksum = row->checksum;
  reading_.insert(job.slot);
  const uint64_t id = next_io_++;
  store_->enqueue_read(job.slot, job.dest, id);
  running_.emplace(id, std::move(job));
}

void DiskWorker::finish_io(uint64_t io_id, int error) {
  auto it = running_.find(io_id);
  STRATA_CHECK(it != running_.end(), "unknown I/O ", io_id);
  Job job = std::move(it->second);
  running_.erase(it);
  if (job.is_write) {
    --n_writes_running_;
    if (error != 0) {
      store_->free_slot(job.slot);
      stop_writing(str_cat("cannot write a block to ", options_.dir.string(), ": ",
                           std::strerror(error)));
      return complete(TierEvent::kPersistFailed, job.hash, job.tag);
    }
    written_.push_back(IndexedBlock{.hash = job.hash, .parent = job.parent,
                                    .model = options_.model, .slab = job.slot.slab,
                                    .slot = job.slot.slot, .n_bytes = options_.block_bytes,
                                    .checksum = job.checksum, .last_used_ms = now_ms(),
                                    .tokens = std::move(job.tokens)});
    pending_tags_.push_back(job.tag);
    return;
  }
  reading_.erase(reading_.find(job.slot));
  const bool intact =
      error == 0 && block_checksum(std::span<const std::byte>(
                        job.dest, static_cast<size_t>(options_.block_bytes))) == job.checksum;
  if (!intact) {
    log_warning("KV cache: block ", job.hash.to_hex().substr(0, 16), " in ",
                options_.dir.string(), error != 0 ? " is unreadable (" : " fails its checksum",
                error != 0 ? std::strerror(error) : "", error != 0 ? ")" : "",
                "; dropped, it will be recomputed");
    const BlockHash hash = job.hash;
    drop_rows(std::span(&hash, 1));
    {
      std::lock_guard lock(mutex_);
      ++stats_.n_load_failures;
    }
    return complete(TierEvent::kLoadFailed, job.hash, job.tag);
  }
  touched_.push_back(job.hash);
  {
    std::lock_guard lock(mutex_);
    ++stats_.n_loads;
    stats_.bytes_read += options_.block_bytes;
  }
  complete(TierEvent::kLoaded, job.hash, job.tag);
}

// Makes the written blocks durable, then indexes them: a row never names
// bytes that might not be on the disk.
void DiskWorker::commit_written() {
  if (!touched_.empty()) record_use();
  if (written_.empty()) return;
  std::vector<IndexedBlock> rows = std::exchange(written_, {});
  std::vector<uint64_t> tags = std::exchange(pending_tags_, {});
  std::string failure;
  if (const int error = store_->sync(); error != 0) {
    failure = str_cat("fdatasync failed: ", std::strerror(error));
  } else {
    try {
      index_->insert(rows);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  if (!failure.empty()) {
    stop_writing(str_cat(rows.size(), " blocks not persisted: ", failure));
    for (size_t i = 0; i < rows.size(); ++i) {
      store_->free_slot(SlotAddress{.slab = rows[i].slab, .slot = rows[i].slot});
      complete(TierEvent::kPersistFailed, rows[i].hash, tags[i]);
    }
    return;
  }
  {
    std::lock_guard lock(mutex_);
    for (IndexedBlock& row : rows) {
      stats_.bytes_written += options_.block_bytes;
      const BlockHash hash = row.hash;
      catalog_.insert_or_assign(hash, std::move(row));
    }
    stats_.n_blocks = static_cast<int64_t>(catalog_.size());
  }
  for (size_t i = 0; i < rows.size(); ++i) complete(TierEvent::kPersisted, rows[i].hash, tags[i]);
}

// Records when the loaded blocks were last used (their LRU place). A failure
// (a full disk: SQLITE_FULL) costs only that record: warned once, until a
// record succeeds again.
void DiskWorker::record_use() {
  try {
    index_->touch(touched_, now_ms());
    warned_use_ = false;
  } catch (const std::exception& e) {
    if (!warned_use_) {
      log_warning("KV cache: cannot record which blocks were used: ", e.what(),
                  "; they may be reclaimed sooner");
    }
    warned_use_ = true;
  }
  touched_.clear();
}

// A write that failed will fail again (full disk, read-only or vanished
// folder, I/O errors): retrying every block would flood the log and keep the
// engine busy re-queueing them. Reading what is on disk goes on.
void DiskWorker::stop_writing(const std::string& why) {
  bool was_writing = false;
  {
    std::lock_guard lock(mutex_);
    was_writing = stats_.writing;
    stats_.writing = false;
  }
  if (was_writing) log_warning("KV cache: ", why, "; persistence is off until restart");
}

void DiskWorker::clear_all() {
  {
    std::lock_guard lock(mutex_);
    if (!clear_requested_) return;
    clear_requested_ = false;
  }
  std::vector<BlockHash> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& entry : catalog_) all.push_back(entry.first);
  }
  drop_rows(all);
  std::lock_guard lock(mutex_);
  --n_busy_;
  wake_.notify_all();
}

// Erases rows (committed) before their slots can be written again.
void DiskWorker::drop_rows(std::span<const BlockHash> hashes) {
  try {
    index_->erase(hashes);
  } catch (const std::exception& e) {
    log_warning("KV cache: cannot erase index rows: ", e.what());
    return;  // the slots stay taken: never overwrite what a row names
  }
  std::lock_guard lock(mutex_);
  for (const BlockHash& hash : hashes) {
    auto it = catalog_.find(hash);
    if (it == catalog_.end()) continue;
    store_->free_slot(SlotAddress{.slab = it->second.slab, .slot = it->second.slot});
    catalog_.erase(it);
    ++stats_.n_dropped;
  }
  stats_.n_blocks = static_cast<int64_t>(catalog_.size());
}

// Frees the slot of the least recently used block not being read.
bool DiskWorker::reclaim_one_slot() {
  constexpr int64_t kCandidates = 16;
  std::vector<IndexedBlock> candidates;
  try {
    candidates = index_->least_recently_used(options_.model, kCandidates);
  } catch (const std::exception& e) {
    log_warning("KV cache: cannot find a block to reclaim: ", e.what());
    return false;  // the write fails; nothing is overwritten
  }
  for (const IndexedBlock& row : candidates) {
    const SlotAddress slot{.slab = row.slab, .slot = row.slot};
    if (reading_.contains(slot)) continue;
    drop_rows(std::span(&row.hash, 1));
    return true;
  }
  return false;
}

std::optional<IndexedBlock> DiskWorker::find(const BlockHash& hash) const {
  std::lock_guard lock(mutex_);
  auto it = catalog_.find(hash);
  if (it == catalog_.end()) return std::nullopt;
  return it->second;
}

void DiskWorker::set_listener(std::function<void()> on_completion) {
  std::lock_guard lock(mutex_);
  on_completion_ = std::move(on_completion);
}

// Under the lock, so that set_listener(nullptr) returns only once the old
// listener can no longer be running.
void DiskWorker::complete(TierEvent event, const BlockHash& hash, uint64_t tag) {
  std::lock_guard lock(mutex_);
  completed_.push_back(TierCompletion{.event = event, .hash = hash, .tag = tag});
  if (event == TierEvent::kPersistFailed) ++stats_.n_write_failures;
  --n_busy_;
  wake_.notify_all();  // wait_idle()
  if (on_completion_) on_completion_();
}

}  // namespace strata
