#include "tiering/disk_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <utility>

#include "common/check.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "tiering/uring_queue.h"

namespace strata {
namespace {

// io_uring takes at most 1 GiB per registered buffer.
constexpr int64_t kMaxPieceBytes = int64_t{1} << 30;
constexpr uint64_t kFullWord = ~uint64_t{0};

// The first bytes of a slab's header page; the rest of the page is zero.
struct SlabHeader {
  char magic[16] = "STRATASLAB";  // NUL-padded
  uint32_t version = DiskStore::kFormatVersion;
  uint32_t reserved = 0;
  int64_t slot_bytes = 0;
  int64_t slots_per_slab = 0;
  std::array<uint8_t, 32> fingerprint{};
};
static_assert(sizeof(SlabHeader) == 72, "the on-disk header layout changed: bump kFormatVersion");

// One header page, aligned for O_DIRECT pread/pwrite.
struct alignas(DiskStore::kAlignment) HeaderPage {
  std::array<std::byte, DiskStore::kHeaderBytes> bytes{};
};

std::system_error os_error(int error, const std::string& what) {
  return std::system_error(error, std::system_category(), what);
}

}  // namespace

DiskStore::DiskStore(DiskStoreOptions options)
    : options_(std::move(options)), direct_io_(options_.direct_io) {
  const DiskStoreOptions& o = options_;
  STRATA_CHECK(o.slot_bytes > 0 && o.slot_bytes % kAlignment == 0 && o.slot_bytes <= kMaxPieceBytes,
               "slot_bytes ", o.slot_bytes);
  STRATA_CHECK(o.max_slots > 0 && o.slots_per_slab > 0, "max_slots ", o.max_slots,
               " slots_per_slab ", o.slots_per_slab);
  STRATA_CHECK(o.slots_per_slab <= INT32_MAX && n_slabs() <= INT32_MAX, "slot numbers are int32");
  STRATA_CHECK(o.queue_depth > 0 && o.queue_depth <= kMaxQueueDepth, "queue_depth ", o.queue_depth);

  ring_ = std::make_unique<UringQueue>(static_cast<unsigned>(o.queue_depth));
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) throw std::system_error(ec, "create directory " + o.dir.string());
  dir_fd_ = open(o.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) throw os_error(errno, "open directory " + o.dir.string());
  // Two stores writing the same slab files would corrupt each other's blocks.
  if (flock(dir_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    close(dir_fd_);
    throw os_error(error, "lock " + o.dir.string() + " (is another server using it?)");
  }

  // Bits past max_slots in the last word are set, so that any clear bit is a free slot.
  used_bits_.assign(static_cast<size_t>((o.max_slots + 63) / 64), 0);
  if (o.max_slots % 64 != 0) used_bits_.back() = kFullWord << (o.max_slots % 64);
  slabs_.resize(static_cast<size_t>(n_slabs()));
  in_flight_.resize(static_cast<size_t>(o.queue_depth));
  // Pushed in reverse so that ids are handed out 0, 1, 2, ...
  for (int32_t id = o.queue_depth - 1; id >= 0; --id) {
    free_op_ids_.push_back(static_cast<uint32_t>(id));
  }
}

DiskStore::~DiskStore() {
  // The kernel may still be moving bytes to or from callers' buffers.
  std::vector<DiskCompletion> dropped;
  while (n_in_flight() > 0) {
    reap_ready(dropped);
    queued_.clear();  // resubmissions too: nobody is left to reap them
    if (n_in_flight() > 0) ring_->wait(std::chrono::seconds(1));
  }
  for (const Slab& slab : slabs_) {
    if (slab.fd >= 0) close(slab.fd);
  }
  close(dir_fd_);  // releases the flock
}

// --- slots ------------------------------------------------------------------

std::optional<SlotAddress> DiskStore::allocate_slot() {
  if (n_used_ == options_.max_slots) return std::nullopt;
  size_t word = first_maybe_free_word_;
  while (used_bits_[word] == kFullWord) ++word;  // n_used_ < max_slots: a clear bit exists
  first_maybe_free_word_ = word;
  const int64_t global = static_cast<int64_t>(word) * 64 + std::countr_one(used_bits_[word]);
  set_used(global, true);
  const SlotAddress slot = address(global);
  ensure_slab_open(slot.slab);  // a failure is reported by the slot's I/O
  return slot;
}

void DiskStore::mark_used(SlotAddress slot) {
  const int64_t global = global_slot(slot);
  STRATA_CHECK(!is_used(slot), "mark_used of used slot ", slot.slab, ":", slot.slot);
  set_used(global, true);
  ensure_slab_open(slot.slab);
}

void DiskStore::free_slot(SlotAddress slot) {
  STRATA_CHECK(is_used(slot), "free_slot of free slot ", slot.slab, ":", slot.slot);
  set_used(global_slot(slot), false);
}

bool DiskStore::is_used(SlotAddress slot) const {
  const int64_t global = global_slot(slot);
  return (used_bits_[static_cast<size_t>(global / 64)] >> (global % 64) & 1) != 0;
}

void DiskStore::set_used(int64_t global, bool used) {
  const size_t word = static_cast<size_t>(global / 64);
  const uint64_t bit = uint64_t{1} << (global % 64);
  if (used) {
    used_bits_[word] |= bit;
    ++n_used_;
  } else {
    used_bits_[word] &= ~bit;
    --n_used_;
    first_maybe_free_word_ = std::min(first_maybe_free_word_, word);
  }
}

int64_t DiskStore::global_slot(SlotAddress slot) const {
  const int64_t global = int64_t{slot.slab} * options_.slots_per_slab + slot.slot;
  STRATA_CHECK(slot.slab >= 0 && slot.slot >= 0 && slot.slot < options_.slots_per_slab &&
                   global < options_.max_slots,
               "slot ", slot.slab, ":", slot.slot, " outside the store");
  return global;
}

SlotAddress DiskStore::address(int64_t global) const {
  return {static_cast<int32_t>(global / options_.slots_per_slab),
          static_cast<int32_t>(global % options_.slots_per_slab)};
}

int64_t DiskStore::n_slabs() const {
  return (options_.max_slots + options_.slots_per_slab - 1) / options_.slots_per_slab;
}

// --- slab files -------------------------------------------------------------

std::filesystem::path DiskStore::slab_path(int32_t slab) const {
  char name[32];
  std::snprintf(name, sizeof name, "slab-%06d.bin", slab);
  return options_.dir / name;
}

int DiskStore::ensure_slab_open(int32_t slab) {
  Slab& state = slabs_[static_cast<size_t>(slab)];
  if (state.fd >= 0) return 0;
  const int fd = open_or_create_slab(slab);
  if (fd < 0) {
    // Logged once per distinct error, not on every I/O that retries it.
    if (state.open_error != -fd) {
      log_warning("DiskStore: cannot create or open ", slab_path(slab).string(), ": ",
                  std::strerror(-fd));
    }
    state.open_error = -fd;
    return -fd;
  }
  state.fd = fd;
  state.open_error = 0;
  return 0;
}

int DiskStore::open_or_create_slab(int32_t slab) {
  const std::filesystem::path path = slab_path(slab);
  int fd = open_slab_file(path);
  if (fd < 0) return fd;
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return -error;
  }
  if (st.st_size > 0) {
    if (header_matches(fd)) return fd;
    close(fd);
    if (const int error = reject_slab(slab); error != 0) return -error;
    fd = open_slab_file(path);
    if (fd < 0) return fd;
  }
  // Empty: new, or left by a crash between creation and header.
  if (const int error = initialize_slab(fd, slab); error != 0) {
    close(fd);
    unlink(path.c_str());  // so that a retry starts from nothing
    return -error;
  }
  slabs_[static_cast<size_t>(slab)].dirty = true;  // its header and size, for sync()
  dir_dirty_ = true;
  ++counters_.slabs_created;
  crash_point("disk.slab_created");
  return fd;
}

int DiskStore::open_slab_file(const std::filesystem::path& path) {
  constexpr int kFlags = O_RDWR | O_CREAT | O_CLOEXEC;
  if (direct_io_) {
    const int fd = open(path.c_str(), kFlags | O_DIRECT, 0644);
    if (fd >= 0 || errno != EINVAL) return fd >= 0 ? fd : -errno;
    direct_io_ = false;
    log_warning("DiskStore: ", options_.dir.string(), " refuses O_DIRECT; using buffered I/O ",
                "(through the page cache)");
  }
  const int fd = open(path.c_str(), kFlags, 0644);
  return fd >= 0 ? fd : -errno;
}

int DiskStore::initialize_slab(int fd, int32_t slab) {
  HeaderPage page;
  page.bytes = expected_header();
  for (int64_t done = 0; done < kHeaderBytes;) {
    const ssize_t n =
        pwrite(fd, page.bytes.data() + done, static_cast<size_t>(kHeaderBytes - done), done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += n;
  }
  // Reserve the slab's slots (only those under max_slots) without growing
  // the file, so that a full disk fails here and unwritten slots stay past EOF.
  const int64_t n_slots = std::min(options_.slots_per_slab,
                                   options_.max_slots - int64_t{slab} * options_.slots_per_slab);
  if (fallocate(fd, FALLOC_FL_KEEP_SIZE, kHeaderBytes, n_slots * options_.slot_bytes) != 0 &&
      errno != EOPNOTSUPP) {
    return errno;
  }
  return 0;
}

std::array<std::byte, DiskStore::kHeaderBytes> DiskStore::expected_header() const {
  SlabHeader header;
  header.slot_bytes = options_.slot_bytes;
  header.slots_per_slab = options_.slots_per_slab;
  header.fingerprint = options_.fingerprint;
  std::array<std::byte, kHeaderBytes> bytes{};
  std::memcpy(bytes.data(), &header, sizeof header);
  return bytes;
}

bool DiskStore::header_matches(int fd) const {
  HeaderPage page;
  const ssize_t n = pread(fd, page.bytes.data(), page.bytes.size(), 0);
  return n == kHeaderBytes && page.bytes == expected_header();
}

int DiskStore::reject_slab(int32_t slab) {
  const std::filesystem::path path = slab_path(slab);
  const std::string aside = path.string() + ".rejected";
  if (rename(path.c_str(), aside.c_str()) != 0) return errno;
  ++counters_.slabs_rejected;
  log_warning("DiskStore: ", path.string(), " has another store's header (model, slot size or ",
              "format) or none; moved aside to ", aside, " and starting an empty slab");
  return 0;
}

// --- asynchronous I/O -------------------------------------------------------

void DiskStore::enqueue_write(SlotAddress slot, const std::byte* buffer, uint64_t tag) {
  // Writes only read the buffer; Op keeps one pointer type for both directions.
  enqueue(slot, const_cast<std::byte*>(buffer), tag, /*is_write=*/true);
}

void DiskStore::enqueue_read(SlotAddress slot, std::byte* buffer, uint64_t tag) {
  enqueue(slot, buffer, tag, /*is_write=*/false);
}

void DiskStore::enqueue(SlotAddress slot, std::byte* buffer, uint64_t tag, bool is_write) {
  STRATA_CHECK(is_used(slot), "I/O on free slot ", slot.slab, ":", slot.slot);
  STRATA_CHECK(buffer != nullptr && reinterpret_cast<uintptr_t>(buffer) % kAlignment == 0,
               "buffer is not ", kAlignment, "-aligned");
  const Op op{.tag = tag, .is_write = is_write, .global_slot = global_slot(slot), .buffer = buffer};
  if (const int error = ensure_slab_open(slot.slab); error != 0) {
    complete(op, error, ready_);
    return;
  }
  queued_.push_back(op);
}

void DiskStore::submit() {
  int n_prepared = 0;
  while (!queued_.empty() && !free_op_ids_.empty()) {
    const uint32_t id = free_op_ids_.back();
    if (!prepare(queued_.front(), id)) break;
    in_flight_[id] = queued_.front();
    queued_.pop_front();
    free_op_ids_.pop_back();
    ++n_prepared;
  }
  if (n_prepared == 0 && ring_->n_unsubmitted() == 0) return;
  const int result = ring_->submit();
  // Entries the kernel could not take now stay in the ring for the next call.
  STRATA_CHECK(result >= 0 || result == -EAGAIN || result == -EBUSY || result == -EINTR,
               "io_uring_submit: ", std::strerror(-result));
}

bool DiskStore::prepare(const Op& op, uint32_t op_id) {
  const SlotAddress slot = address(op.global_slot);
  const UringRequest request{
      .is_write = op.is_write,
      .fd = slabs_[static_cast<size_t>(slot.slab)].fd,
      .buffer = op.buffer + op.n_done,
      .length = static_cast<uint32_t>(options_.slot_bytes - op.n_done),
      .offset = static_cast<uint64_t>(kHeaderBytes + slot.slot * options_.slot_bytes + op.n_done),
      .buffer_index = registered_index(op.buffer, options_.slot_bytes),
  };
  if (!ring_->prepare(request, op_id)) return false;
  if (request.buffer_index >= 0) ++counters_.fixed_ops;
  return true;
}

std::vector<DiskCompletion> DiskStore::reap(bool wait, std::chrono::milliseconds timeout) {
  std::vector<DiskCompletion> out = std::exchange(ready_, {});
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    reap_ready(out);
    submit();  // queued operations and resubmissions, into the room just freed
    if (!wait || !out.empty() || n_in_flight() == 0) return out;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return out;
    const int result = ring_->wait(left);
    if (result != 0 && result != -EINTR) return out;  // -ETIME
  }
}

void DiskStore::reap_ready(std::vector<DiskCompletion>& out) {
  std::array<UringResult, 64> results;
  size_t n = 0;
  do {
    n = ring_->reap(results);
    for (size_t i = 0; i < n; ++i) {
      handle_result(static_cast<uint32_t>(results[i].user_data), results[i].result, out);
    }
  } while (n == results.size());
}

void DiskStore::handle_result(uint32_t op_id, int32_t result, std::vector<DiskCompletion>& out) {
  STRATA_CHECK(op_id < in_flight_.size(), "completion for unknown op ", op_id);
  Op op = in_flight_[op_id];
  free_op_ids_.push_back(op_id);
  if (result > 0) {
    op.n_done += result;
    op.n_retries = 0;
    if (op.is_write) slabs_[static_cast<size_t>(address(op.global_slot).slab)].dirty = true;
  }
  if (op.n_done == options_.slot_bytes) return complete(op, 0, out);
  if (result == 0 && !op.is_write) return complete(op, ENODATA, out);  // end of file: never written
  const bool transient = result == -EAGAIN || result == -EINTR || result == 0;
  if (result < 0 && !transient) return complete(op, -result, out);
  if (result <= 0 && ++op.n_retries > kMaxRetries)
    return complete(op, result < 0 ? -result : EIO, out);
  // A short transfer, or no progress yet: send the remainder again, first.
  ++counters_.resubmits;
  queued_.push_front(op);
}

void DiskStore::complete(const Op& op, int error, std::vector<DiskCompletion>& out) {
  if (error != 0) {
    ++counters_.errors;
  } else if (op.is_write) {
    ++counters_.writes;
    counters_.bytes_written += options_.slot_bytes;
  } else {
    ++counters_.reads;
    counters_.bytes_read += options_.slot_bytes;
  }
  out.push_back({.tag = op.tag, .error = error});
}

int64_t DiskStore::n_in_flight() const {
  return static_cast<int64_t>(in_flight_.size() - free_op_ids_.size());
}

int DiskStore::sync() {
  int first_error = 0;
  for (Slab& slab : slabs_) {
    if (!slab.dirty) continue;
    slab.dirty = false;  // a writeback error is reported once; see the header
    if (fdatasync(slab.fd) != 0 && first_error == 0) first_error = errno;
  }
  // New slab files exist for good only once their directory entry is durable.
  if (dir_dirty_) {
    dir_dirty_ = false;
    if (fsync(dir_fd_) != 0 && first_error == 0) first_error = errno;
  }
  return first_error;
}

int DiskStore::folder_status() const {
  // Whether `path` names the file open as `fd`: 0, ESTALE, or an errno.
  auto same_file = [](int fd, const std::filesystem::path& path) {
    struct stat opened {};
    struct stat at_path {};
    if (fstat(fd, &opened) != 0) return errno;
    if (opened.st_nlink == 0) return ESTALE;  // deleted
    if (stat(path.c_str(), &at_path) != 0) {
      return errno == ENOENT || errno == ENOTDIR ? ESTALE : errno;  // nothing there now
    }
    return opened.st_dev == at_path.st_dev && opened.st_ino == at_path.st_ino ? 0 : ESTALE;
  };
  if (const int error = same_file(dir_fd_, options_.dir); error != 0) return error;
  for (int32_t slab = 0; slab < static_cast<int32_t>(slabs_.size()); ++slab) {
    const Slab& state = slabs_[static_cast<size_t>(slab)];
    if (state.fd < 0 || !state.dirty) continue;
    if (const int error = same_file(state.fd, slab_path(slab)); error != 0) return error;
  }
  return access(options_.dir.c_str(), W_OK) == 0 ? 0 : errno;
}

// --- registered buffers -----------------------------------------------------

void DiskStore::register_buffers(std::span<std::byte> arena) {
  STRATA_CHECK(n_in_flight() == 0, "register_buffers with I/O in flight");
  registered_.clear();
  if (arena.empty()) {
    ring_->register_buffers({});
    return;
  }
  // Whole slots per piece, so that a slot-aligned arena has no slot across two.
  const int64_t piece_bytes = kMaxPieceBytes / options_.slot_bytes * options_.slot_bytes;
  std::vector<std::span<std::byte>> pieces;
  std::vector<iovec> iovecs;
  for (size_t at = 0; at < arena.size(); at += static_cast<size_t>(piece_bytes)) {
    pieces.push_back(
        arena.subspan(at, std::min(arena.size() - at, static_cast<size_t>(piece_bytes))));
    iovecs.push_back({.iov_base = pieces.back().data(), .iov_len = pieces.back().size()});
  }
  if (const int error = ring_->register_buffers(iovecs); error != 0) {
    log_info("DiskStore: cannot register ", arena.size(), " bytes as io_uring fixed buffers (",
             std::strerror(-error), "); using plain reads and writes");
    return;
  }
  registered_ = std::move(pieces);
  registered_piece_bytes_ = piece_bytes;
}

int DiskStore::registered_index(const std::byte* buffer, int64_t length) const {
  if (registered_.empty()) return -1;
  const auto base = reinterpret_cast<uintptr_t>(registered_.front().data());
  const auto at = reinterpret_cast<uintptr_t>(buffer);
  if (at < base) return -1;
  const uintptr_t index = (at - base) / static_cast<uintptr_t>(registered_piece_bytes_);
  if (index >= registered_.size()) return -1;
  const auto piece_end =
      reinterpret_cast<uintptr_t>(registered_[index].data() + registered_[index].size());
  return at + static_cast<uintptr_t>(length) <= piece_end ? static_cast<int>(index) : -1;
}

// --- observation ------------------------------------------------------------

void DiskStore::check_integrity() const {
  int64_t n_set = 0;
  for (uint64_t word : used_bits_) n_set += std::popcount(word);
  const int64_t n_padding = static_cast<int64_t>(used_bits_.size()) * 64 - options_.max_slots;
  STRATA_CHECK(n_set - n_padding == n_used_, "used bits ", n_set - n_padding, " != n_used ",
               n_used_);
  for (size_t word = 0; word < first_maybe_free_word_; ++word) {
    STRATA_CHECK(used_bits_[word] == kFullWord, "free slot below the search start, word ", word);
  }
  std::vector<uint8_t> is_free_id(in_flight_.size(), 0);
  for (uint32_t id : free_op_ids_) {
    STRATA_CHECK(id < in_flight_.size() && is_free_id[id] == 0, "bad free op id ", id);
    is_free_id[id] = 1;
  }
  auto check_op = [this](const Op& op) {
    STRATA_CHECK(is_used(address(op.global_slot)), "I/O on free slot ", op.global_slot);
    STRATA_CHECK(op.n_done >= 0 && op.n_done < options_.slot_bytes, "op done ", op.n_done);
    STRATA_CHECK(slabs_[static_cast<size_t>(address(op.global_slot).slab)].fd >= 0,
                 "I/O on closed slab");
  };
  for (size_t id = 0; id < in_flight_.size(); ++id) {
    if (is_free_id[id] == 0) check_op(in_flight_[id]);
  }
  for (const Op& op : queued_) check_op(op);
}

}  // namespace strata
