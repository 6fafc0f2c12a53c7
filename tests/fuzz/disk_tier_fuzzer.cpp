// libFuzzer target for the disk tier's start-up: the input is a KV cache
// folder (a slab file and index.sqlite, see disk_tier_input.h) as a crash, a
// bad disk, another model or another program may have left it. A DiskWorker
// opens it (the SQLite index, the slab header, every row's slot), loads every
// block the index lists, writes a new block, and then a second DiskWorker
// opens the folder again, as the next start of the server would.
//
// Promises checked:
//  - opening never fails for anything in the files (a corrupt index is
//    replaced, a foreign slab set aside), except an index of a newer schema,
//    which is refused with a message saying so;
//  - the rows the index keeps are the blocks the worker offers, and each load
//    completes once: loaded, with exactly the slot's bytes, only when the slab
//    header is this store's and the bytes match the row's checksum; failed
//    otherwise, never served;
//  - a block written is durable: it loads back with its bytes, in this run and
//    after the restart (with --persist all); a write that fails turns writing
//    off.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/str_cat.h"
#include "tests/fuzz/disk_tier_input.h"
#include "tiering/block_checksum.h"
#include "tiering/block_index.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kBlockBytes = DiskTierInput::kBlockBytes;

fs::path* folder = nullptr;  // the cache folder each input is written to; never freed

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "disk_tier_fuzzer: %s\n", what.c_str());
  std::abort();
}

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};
using Block = std::unique_ptr<std::byte[], AlignedFree>;

Block new_block() {
  return Block(static_cast<std::byte*>(std::aligned_alloc(4096, kBlockBytes)));
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + path.string());
}

// The header page a store of this tier writes, from its documented layout
// (disk_store.h): magic, version 1, slot_bytes, slots_per_slab, fingerprint.
std::string expected_header_page() {
  std::string page(DiskTierInput::kHeaderPage, '\0');
  std::memcpy(page.data(), "STRATASLAB", 10);
  const uint32_t version = 1;
  const int64_t slot_bytes = kBlockBytes;
  const int64_t slots_per_slab = 256;  // DiskStoreOptions' default, which DiskWorker keeps
  std::memcpy(page.data() + 16, &version, 4);
  std::memcpy(page.data() + 24, &slot_bytes, 8);
  std::memcpy(page.data() + 32, &slots_per_slab, 8);
  const ModelFingerprint model = disk_tier_fuzz_model();
  std::memcpy(page.data() + 40, model.bytes.data(), model.bytes.size());
  return page;
}

DiskTierOptions options(bool persist) {
  return DiskTierOptions{.dir = *folder,
                         .block_bytes = kBlockBytes,
                         .capacity_bytes = DiskTierInput::kSlots * kBlockBytes,
                         .model = disk_tier_fuzz_model(),
                         .queue_depth = 8,
                         .persist = persist};
}

// A worker on the folder, or nullptr when it refused an index of a newer
// schema (the one refusal allowed).
std::unique_ptr<DiskWorker> open_worker(bool persist) {
  try {
    return std::make_unique<DiskWorker>(options(persist));
  } catch (const std::runtime_error& e) {
    if (std::string_view(e.what()).find("is newer than this Strata") != std::string_view::npos) {
      return nullptr;
    }
    fail(std::string("the tier did not open: ") + e.what());
  }
}

// The index's rows of this model, through a second connection (the worker's
// own is private): what the worker must now offer.
std::vector<IndexedBlock> indexed_rows() {
  BlockIndex index(*folder / "index.sqlite");
  return index.load_model(disk_tier_fuzz_model());
}

// Loads `hash`; its completion and, when loaded, the bytes.
std::optional<std::string> load(DiskWorker& worker, const BlockHash& hash) {
  Block dest = new_block();
  worker.load(hash, dest.get(), 1);
  worker.wait_idle();
  const std::vector<TierCompletion> done = worker.take_completions();
  if (done.size() != 1 || done[0].hash != hash || done[0].tag != 1) {
    fail(str_cat("a load completed ", done.size(), " times"));
  }
  if (done[0].event == TierEvent::kLoadFailed) return std::nullopt;
  if (done[0].event != TierEvent::kLoaded) fail("a load completed as a write");
  return std::string(reinterpret_cast<const char*>(dest.get()), kBlockBytes);
}

void check_loads(DiskWorker& worker, const DiskTierInput& input) {
  const std::string slab = input.has_slab ? input.slab_file() : std::string();
  const bool header_ok = slab.size() >= DiskTierInput::kHeaderPage &&
                         slab.compare(0, DiskTierInput::kHeaderPage, expected_header_page()) == 0;
  std::map<BlockHash, int> copies;
  const std::vector<IndexedBlock> rows = indexed_rows();
  for (const IndexedBlock& row : rows) ++copies[row.hash];
  for (const IndexedBlock& row : rows) {
    if (!worker.contains(row.hash)) fail("an indexed block is not offered");
    const std::optional<std::string> loaded = load(worker, row.hash);
    if (copies[row.hash] > 1) continue;  // which row the worker kept is its choice
    const size_t at = DiskTierInput::kHeaderPage + static_cast<size_t>(row.slot) * kBlockBytes;
    const bool in_file = row.slab == 0 && header_ok && at + kBlockBytes <= slab.size();
    const bool intact =
        in_file && block_checksum(std::as_bytes(std::span(slab.data() + at, kBlockBytes))) ==
                       row.checksum;
    if (loaded.has_value() != intact) {
      fail(intact ? "an intact block failed to load" : "a block that does not match was served");
    }
    if (loaded && loaded->compare(0, kBlockBytes, slab, at, kBlockBytes) != 0) {
      fail("a loaded block differs from its slot");
    }
    if (!loaded && worker.contains(row.hash)) fail("a block that failed to load is still offered");
  }
}

// The block written by every run: a hash no seed uses, bytes that name it.
BlockHash written_hash() {
  BlockHash hash;
  hash.bytes.fill(0xEE);
  return hash;
}

std::string written_bytes() {
  std::string bytes(kBlockBytes, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31 % 251);
  return bytes;
}

// Writes the block; true when it is durable (persisted), false when the write
// failed, in which case writing must now be off.
bool write_block(DiskWorker& worker) {
  const std::string bytes = written_bytes();
  Block source = new_block();
  std::memcpy(source.get(), bytes.data(), bytes.size());
  const std::vector<int32_t> tokens(16, 7);
  worker.persist(written_hash(), BlockHash{}, tokens, source.get(), 2);
  worker.wait_idle();
  const std::vector<TierCompletion> done = worker.take_completions();
  if (done.size() != 1 || done[0].hash != written_hash() || done[0].tag != 2) {
    fail(str_cat("a write completed ", done.size(), " times"));
  }
  if (done[0].event == TierEvent::kPersistFailed) {
    if (worker.writing()) fail("a write failed but writing is still on");
    return false;
  }
  if (done[0].event != TierEvent::kPersisted) fail("a write completed as a load");
  return true;
}

void check_written(DiskWorker& worker, const char* when) {
  if (!worker.contains(written_hash())) fail(str_cat("the written block is gone ", when));
  const std::optional<std::string> loaded = load(worker, written_hash());
  if (!loaded || *loaded != written_bytes()) {
    fail(str_cat("the written block does not load back ", when));
  }
}

void remove_folder() {
  std::error_code ignored;
  fs::remove_all(folder->parent_path(), ignored);
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace strata;
  // Rejected slabs, dropped rows and replaced indexes each log a warning.
  set_log_level(LogLevel::kError);
  // In memory where there is a tmpfs: each input syncs a slab file, its folder
  // and the index, which on a disk would cost more than everything else.
  std::error_code error;
  const fs::path base = fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm")
                                                             : fs::temp_directory_path();
  folder = new fs::path(base / str_cat("strata_disk_tier_fuzzer_", ::getpid()) / "kv");
  std::atexit(remove_folder);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  const DiskTierInput input = DiskTierInput::parse(std::span(data, size));
  std::error_code error;
  fs::remove_all(*folder, error);
  fs::create_directories(*folder);
  if (input.has_slab) write_file(*folder / "slab-000000.bin", input.slab_file());
  if (input.has_index) write_file(*folder / "index.sqlite", input.index);

  bool durable = false;
  {
    std::unique_ptr<DiskWorker> worker = open_worker(input.persist);
    if (!worker) return 0;
    if (input.persist) check_loads(*worker, input);
    durable = write_block(*worker);
    if (durable) check_written(*worker, "in the same run");
  }
  if (!input.persist) return 0;  // --persist none starts empty every run
  std::unique_ptr<DiskWorker> restarted = open_worker(true);
  if (!restarted) fail("the index written by this Strata was refused as newer");
  if (durable) check_written(*restarted, "after a restart");
  return 0;
}
