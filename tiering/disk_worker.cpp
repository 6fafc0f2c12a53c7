#include "tiering/disk_worker.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/check.h"
#include "common/crash_point.h"
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
// While writing stays off, at most one line says so per this interval.
constexpr auto kStillOffInterval = std::chrono::minutes(5);

using Clock = std::chrono::steady_clock;

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
  STRATA_CHECK(options_.retry_min.count() > 0 && options_.retry_max.count() > 0, "retry_min ",
               options_.retry_min.count(), " ms, retry_max ", options_.retry_max.count(), " ms");
  open_and_check();
  stats_.writing = true;
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

// At start-up, and on the worker thread when a probe reopens the folder
// (the engine may be reading the catalog: it is swapped in under the lock).
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
  std::unordered_map<BlockHash, IndexedBlock, BlockHashHasher> catalog;
  std::vector<BlockHash> bad;
  for (IndexedBlock& row : index_->load_model(options_.model)) {
    const SlotAddress slot{.slab = row.slab, .slot = row.slot};
    if (row.n_bytes != options_.block_bytes || !fits(slot) || store_->is_used(slot)) {
      bad.push_back(row.hash);
      continue;
    }
    store_->mark_used(slot);
    const BlockHash hash = row.hash;
    catalog.emplace(hash, std::move(row));
  }
  if (!bad.empty()) {
    log_warning("KV cache index: dropped ", bad.size(), " rows whose slot is invalid");
    index_->erase(bad);
  }
  {
    std::lock_guard lock(mutex_);
    catalog_ = std::move(catalog);
    stats_.n_blocks = static_cast<int64_t>(catalog_.size());
    stats_.capacity_blocks = store_->capacity_slots();
    stats_.n_dropped += static_cast<int64_t>(bad.size());
  }
  crash_point("disk.opened");
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
    // The one write let through while writing is off: see takes_writes().
    job.is_probe = !stats_.writing && !probe_claimed_ && Clock::now() >= probe_at_;
    if (job.is_probe) probe_claimed_ = true;
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

bool DiskWorker::takes_writes() const {
  std::lock_guard lock(mutex_);
  return stats_.writing || (!probe_claimed_ && Clock::now() >= probe_at_);
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
    if (deferred_probe_ && running_.empty() && written_.empty()) {
      Job probe = std::move(*deferred_probe_);
      deferred_probe_.reset();
      start_persist(probe);
    }
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
    if (store_) store_->submit();  // none after a reopen that failed
    if (n_writes_running_ > 0) crash_point("disk.write_in_flight");
    if (!reading_.empty()) crash_point("disk.load_in_flight");
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
  if (present) {
    if (job.is_probe) release_probe();  // it finds out nothing
    return complete(TierEvent::kPersisted, job.hash, job.tag);  // already durable
  }
  if (job.is_probe) {
    const std::string problem = prepare_probe(job);
    if (deferred_probe_) return;  // started again once the I/O in flight is done
    if (!problem.empty()) {
      probe_failed(problem);
      return complete(TierEvent::kPersistFailed, job.hash, job.tag);
    }
  } else if (!persisting) {
    return complete(TierEvent::kPersistFailed, job.hash, job.tag);
  }
  std::optional<SlotAddress> slot = store_->allocate_slot();
  if (!slot && reclaim_one_slot()) slot = store_->allocate_slot();
  if (!slot) {
    if (job.is_probe) probe_failed("no slot is free and none can be reclaimed");
    return complete(TierEvent::kPersistFailed, job.hash, job.tag);
  }
  job.slot = *slot;
  job.checksum = block_checksum(std::span(job.src, static_cast<size_t>(options_.block_bytes)));
  const uint64_t id = next_io_++;
  store_->enqueue_write(job.slot, job.src, id);
  ++n_writes_running_;
  running_.emplace(id, std::move(job));
}

void DiskWorker::start_load(Job& job) {
  // A probe waits to reopen the folder: what the old one holds is going.
  if (deferred_probe_) return complete(TierEvent::kLoadFailed, job.hash, job.tag);
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
      const std::string why = str_cat("cannot write a block to ", options_.dir.string(), ": ",
                                      std::strerror(error));
      job.is_probe ? probe_failed(why) : stop_writing(why);
      return complete(TierEvent::kPersistFailed, job.hash, job.tag);
    }
    if (job.is_probe) probe_written_ = true;
    written_.push_back(IndexedBlock{.hash = job.hash, .parent = job.parent,
                                    .model = options_.model, .slab = job.slot.slab,
                                    .slot = job.slot.slot, .n_bytes = options_.block_bytes,
                                    .checksum = job.checksum, .last_used_ms = now_ms(),
                                    .tokens = std::move(job.tokens)});
    pending_tags_.push_back(job.tag);
    crash_point("disk.write_done");
    return;
  }
  reading_.erase(reading_.find(job.slot));
  crash_point("disk.load_read");
  const bool intact =
      error == 0 && block_checksum(std::span<const std::byte>(
                        job.dest, static_cast<size_t>(options_.block_bytes))) == job.checksum;
  if (!intact) {
    // An I/O error storm fails every load: a few lines, then one a minute.
    if (const std::optional<int64_t> held = load_failure_log_.admit()) {
      log_warning("KV cache: block ", job.hash.to_hex().substr(0, 16), " in ",
                  options_.dir.string(), error != 0 ? " is unreadable (" : " fails its checksum",
                  error != 0 ? std::strerror(error) : "", error != 0 ? ")" : "",
                  "; dropped, it will be recomputed", LogLimiter::held_back_note(*held));
    }
    const BlockHash hash = job.hash;
    drop_rows(std::span(&hash, 1));
    {
      std::lock_guard lock(mutex_);
      ++stats_.n_load_failures;
    }
    return complete(TierEvent::kLoadFailed, job.hash, job.tag);
  }
  crash_point("disk.load_verified");
  touched_.push_back(job.hash);
  {
    std::lock_guard lock(mutex_);
    ++stats_.n_loads;
    stats_.bytes_read += options_.block_bytes;
  }
  complete(TierEvent::kLoaded, job.hash, job.tag);
}

// Makes the written blocks durable, then indexes them: a row never names
// bytes that might not be on the disk, nor a folder nobody will open again.
void DiskWorker::commit_written() {
  if (!touched_.empty()) record_use();
  if (written_.empty()) return;
  std::vector<IndexedBlock> rows = std::exchange(written_, {});
  std::vector<uint64_t> tags = std::exchange(pending_tags_, {});
  const bool probe = std::exchange(probe_written_, false);
  std::string failure;  // set by check_folder() when the folder is not in place
  crash_point("disk.before_sync");
  if (check_folder(failure) == FolderState::kInPlace) {
    if (const int error = store_->sync(); error != 0) {
      failure = str_cat("fdatasync failed: ", std::strerror(error));
    } else {
      crash_point("disk.after_sync");
      try {
        index_->insert(rows);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
  }
  if (!failure.empty()) {
    const std::string why = str_cat(rows.size(), " blocks not persisted: ", failure);
    probe ? probe_failed(why) : stop_writing(why);
    for (size_t i = 0; i < rows.size(); ++i) {
      store_->free_slot(SlotAddress{.slab = rows[i].slab, .slot = rows[i].slot});
      complete(TierEvent::kPersistFailed, rows[i].hash, tags[i]);
    }
    return;
  }
  crash_point("disk.after_index_commit");
  {
    std::lock_guard lock(mutex_);
    for (IndexedBlock& row : rows) {
      stats_.bytes_written += options_.block_bytes;
      const BlockHash hash = row.hash;
      catalog_.insert_or_assign(hash, std::move(row));
    }
    stats_.n_blocks = static_cast<int64_t>(catalog_.size());
  }
  if (probe) probe_succeeded();
  for (size_t i = 0; i < rows.size(); ++i) complete(TierEvent::kPersisted, rows[i].hash, tags[i]);
  crash_point("disk.write_acknowledged");
}

// Records when the loaded blocks were last used (their LRU place). A failure
// (a full disk: SQLITE_FULL) costs only that record, and a bounded number of
// lines.
void DiskWorker::record_use() {
  try {
    if (index_) index_->touch(touched_, now_ms());
  } catch (const std::exception& e) {
    if (const std::optional<int64_t> held = use_failure_log_.admit()) {
      log_warning("KV cache: cannot record which blocks were used: ", e.what(),
                  "; they may be reclaimed sooner", LogLimiter::held_back_note(*held));
    }
  }
  touched_.clear();
}

// A write that failed will most likely fail again for a while (full disk,
// read-only or vanished folder, I/O errors): retrying every block would flood
// the log and keep the engine busy re-queueing them. So writing stops and is
// probed with one block at a time, ever less often. Reading what is on disk
// goes on.
void DiskWorker::stop_writing(const std::string& why) {
  bool was_writing = false;
  {
    std::lock_guard lock(mutex_);
    was_writing = stats_.writing;
    stats_.writing = false;
    if (was_writing) {
      retry_delay_ = std::min(options_.retry_min, options_.retry_max);
      probe_at_ = Clock::now() + retry_delay_;
    }
  }
  if (!was_writing) return;
  still_off_logged_at_ = Clock::now();
  n_failed_probes_ = 0;
  // A disk that keeps coming back and failing again: a few lines, then one a minute.
  const std::optional<int64_t> held = off_log_.admit();
  off_logged_ = held.has_value();
  if (off_logged_) {
    log_warning("KV cache: ", why, "; persistence is off until a write there works again (",
                "tried again from time to time, at most ",
                std::chrono::duration<double>(options_.retry_max).count(), " s apart)",
                LogLimiter::held_back_note(*held));
  }
}

void DiskWorker::probe_succeeded() {
  {
    std::lock_guard lock(mutex_);
    stats_.writing = true;
    probe_claimed_ = false;
  }
  if (off_logged_) {
    log_info("KV cache: writing to ", options_.dir.string(), " works again; persistence is back on");
  }
}

// No line of its own: the warning said writing is off, and the metrics say
// it still is. At most one reminder every kStillOffInterval.
void DiskWorker::probe_failed(const std::string& why) {
  const auto now = Clock::now();
  {
    std::lock_guard lock(mutex_);
    probe_claimed_ = false;
    retry_delay_ = std::min(retry_delay_ * 2, options_.retry_max);
    probe_at_ = now + retry_delay_;
  }
  ++n_failed_probes_;
  if (now - still_off_logged_at_ >= kStillOffInterval) {
    still_off_logged_at_ = now;
    log_warning("KV cache: persistence is still off: ", why, " (", n_failed_probes_,
                " tries since it went off)");
  }
}

void DiskWorker::release_probe() {
  std::lock_guard lock(mutex_);
  probe_claimed_ = false;
}

DiskWorker::FolderState DiskWorker::check_folder(std::string& why) const {
  if (!store_ || !index_) {
    why = str_cat("no cache is open in ", options_.dir.string());
    return FolderState::kGone;
  }
  const int status = store_->folder_status();
  if (status == ESTALE || index_->has_moved()) {
    why = str_cat(options_.dir.string(), " was deleted or replaced while serving");
    return FolderState::kGone;
  }
  if (status != 0) {
    why = str_cat(options_.dir.string(), " cannot be written: ", std::strerror(status));
    return FolderState::kUnwritable;
  }
  return FolderState::kInPlace;
}

// The probe writes into the folder at the path: if that is no longer the
// folder the store has open, a fresh one is opened there first, once the I/O
// on the old one is done (the probe is deferred until then).
std::string DiskWorker::prepare_probe(Job& job) {
  std::string why;
  const FolderState state = check_folder(why);
  if (state != FolderState::kGone) return state == FolderState::kInPlace ? "" : why;
  if (!running_.empty() || !written_.empty()) {
    deferred_probe_ = std::move(job);
    return "";
  }
  return reopen();
}

// The folder at the path is not the one the store has open: deleted, renamed
// or replaced while serving. What the old one holds is out of reach (a
// restart would not find it either), so its blocks leave the catalog and the
// folder at the path is opened as at start-up. Nothing is in flight. On a
// failure both stay closed (loads then fail at once) and the next probe tries
// again.
std::string DiskWorker::reopen() {
  touched_.clear();
  {
    std::lock_guard lock(mutex_);
    stats_.n_dropped += static_cast<int64_t>(catalog_.size());
    catalog_.clear();
    stats_.n_blocks = 0;
  }
  store_.reset();  // unlocks the old folder first: the path may name the same one
  index_.reset();
  try {
    open_and_check();
  } catch (const std::exception& e) {
    store_.reset();
    index_.reset();
    return e.what();
  }
  {
    std::lock_guard lock(mutex_);
    ++stats_.n_reopens;
  }
  log_info("KV cache: ", options_.dir.string(), " was deleted or replaced while serving; ",
           "opened a new cache there");
  return "";
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

// Erases rows (committed) before their slots can be written again. Where the
// index cannot erase them (an I/O error), the blocks still leave the catalog,
// so that they are neither served nor tried again, but their slots stay
// taken until the next start: a slot that a row names is never overwritten.
void DiskWorker::drop_rows(std::span<const BlockHash> hashes) {
  if (hashes.empty() || !index_) return;
  bool erased = false;
  try {
    index_->erase(hashes);
    erased = true;
  } catch (const std::exception& e) {
    if (const std::optional<int64_t> held = erase_failure_log_.admit()) {
      log_warning("KV cache: cannot erase index rows: ", e.what(),
                  "; their slots stay taken until restart", LogLimiter::held_back_note(*held));
    }
  }
  std::lock_guard lock(mutex_);
  for (const BlockHash& hash : hashes) {
    auto it = catalog_.find(hash);
    if (it == catalog_.end()) continue;
    if (erased) store_->free_slot(SlotAddress{.slab = it->second.slab, .slot = it->second.slot});
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
    if (const std::optional<int64_t> held = reclaim_failure_log_.admit()) {
      log_warning("KV cache: cannot find a block to reclaim: ", e.what(),
                  LogLimiter::held_back_note(*held));
    }
    return false;  // the write fails; nothing is overwritten
  }
  for (const IndexedBlock& row : candidates) {
    const SlotAddress slot{.slab = row.slab, .slot = row.slot};
    if (reading_.contains(slot)) continue;
    crash_point("disk.reclaim_chosen");
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
