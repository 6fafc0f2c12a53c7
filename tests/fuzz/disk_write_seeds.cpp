// disk_write_seeds DIR: writes the seeds of disk_tier_fuzzer into DIR (which
// tests/fuzz/corpus/disk_tier/ holds). A real DiskWorker persists three blocks
// into a scratch folder whose index uses 512-byte pages (so that the database
// is a few KB); its slab file and index become the valid seed, and variants of
// them the others: another model's slab header, a header cut short, a flipped
// byte in a block, a missing slab, --persist none, an index that is not a
// database, one of a newer schema.
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "tests/fuzz/disk_tier_input.h"
#include "tiering/disk_worker.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string trim_zeros(std::string bytes) {
  while (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();
  return bytes;
}

void exec(const fs::path& file, const char* sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK ||
      sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    throw std::runtime_error(str_cat(file.string(), ": ", sqlite3_errmsg(db)));
  }
  sqlite3_close(db);
}

// The folder a real DiskWorker leaves after persisting three blocks.
DiskTierInput persisted_folder(const fs::path& dir) {
  fs::create_directories(dir);
  // Small pages, fixed before BlockIndex creates its tables in the file.
  exec(dir / "index.sqlite", "PRAGMA page_size = 512; CREATE TABLE t (x); DROP TABLE t;");
  {
    DiskWorker worker(DiskTierOptions{.dir = dir,
                                      .block_bytes = DiskTierInput::kBlockBytes,
                                      .capacity_bytes = DiskTierInput::kSlots *
                                                        DiskTierInput::kBlockBytes,
                                      .model = disk_tier_fuzz_model(),
                                      .queue_depth = 8});
    for (int b = 0; b < 3; ++b) {
      auto* bytes = static_cast<std::byte*>(std::aligned_alloc(4096, DiskTierInput::kBlockBytes));
      std::memset(bytes, 0, DiskTierInput::kBlockBytes);
      for (int i = 0; i < 48; ++i) bytes[i] = static_cast<std::byte>(b * 16 + i);
      BlockHash hash;
      hash.bytes.fill(static_cast<uint8_t>(0x10 + b));
      const std::vector<int32_t> tokens(16, b);
      worker.persist(hash, BlockHash{}, tokens, bytes, static_cast<uint64_t>(b));
      worker.wait_idle();
      std::free(bytes);
    }
  }
  DiskTierInput input;
  input.has_slab = input.pad_header = input.has_index = true;
  const std::string slab = read_file(dir / "slab-000000.bin");
  input.header = trim_zeros(slab.substr(0, DiskTierInput::kHeaderPage));
  for (size_t at = DiskTierInput::kHeaderPage; at < slab.size();
       at += DiskTierInput::kBlockBytes) {
    input.slots.push_back(trim_zeros(slab.substr(at, DiskTierInput::kBlockBytes)));
  }
  input.index = read_file(dir / "index.sqlite");
  return input;
}

void write_seed(const fs::path& dir, const std::string& name, const DiskTierInput& input) {
  const std::vector<uint8_t> bytes = input.serialize();
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  using namespace strata;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const fs::path scratch = fs::temp_directory_path() / str_cat("strata_disk_seeds_", ::getpid());
  try {
    const fs::path out(argv[1]);
    fs::create_directories(out);
    const DiskTierInput valid = persisted_folder(scratch / "kv");
    write_seed(out, "three_blocks", valid);

    DiskTierInput other_model = valid;
    other_model.header[40] = static_cast<char>(other_model.header[40] ^ 1);
    write_seed(out, "other_model_header", other_model);

    DiskTierInput short_header = valid;
    short_header.pad_header = false;
    write_seed(out, "short_header", short_header);

    DiskTierInput flipped = valid;
    flipped.slots[1][5] = static_cast<char>(flipped.slots[1][5] ^ 0x20);
    write_seed(out, "flipped_block", flipped);

    DiskTierInput no_slab = valid;
    no_slab.has_slab = false;
    write_seed(out, "missing_slab", no_slab);

    DiskTierInput persist_none = valid;
    persist_none.persist = false;
    write_seed(out, "persist_none", persist_none);

    DiskTierInput not_a_database = valid;
    not_a_database.index = "SQLite format 3";
    not_a_database.index.resize(512, 'x');
    write_seed(out, "index_not_a_database", not_a_database);

    const fs::path newer = scratch / "newer.sqlite";
    exec(newer, "PRAGMA page_size = 512; PRAGMA user_version = 2; CREATE TABLE blocks (x);");
    DiskTierInput newer_schema = valid;
    newer_schema.index = read_file(newer);
    write_seed(out, "index_newer_schema", newer_schema);

    write_seed(out, "empty_folder", DiskTierInput{});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fs::remove_all(scratch);
    return 1;
  }
  fs::remove_all(scratch);
  return 0;
}
