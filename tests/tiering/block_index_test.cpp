#include "tiering/block_index.h"

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/str_cat.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class BlockIndexTest : public ::testing::Test {
 protected:
  BlockIndexTest() {
    std::string pattern = ::testing::TempDir() + "strata_block_index_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    file_ = dir_ / "index.sqlite";
  }
  ~BlockIndexTest() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path file_;
};

BlockHash hash_of(std::string_view s) {
  return sha256({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

const ModelFingerprint kModelA = hash_of("model a");
const ModelFingerprint kModelB = hash_of("model b");

// Block i of a model: every column distinct per block, a checksum with the
// top bit set (stored as a negative int64), tokens with the int32 extremes.
IndexedBlock make_block(int32_t i, const ModelFingerprint& model = kModelA) {
  const std::string name = str_cat(model.to_hex(), "/", i);
  return IndexedBlock{
      .hash = hash_of(name),
      .parent = i == 0 ? BlockHash{} : hash_of(str_cat(model.to_hex(), "/", i - 1)),
      .model = model,
      .slab = i / 100 + (model == kModelB ? 1000 : 0),
      .slot = i % 100,
      .n_bytes = 512 * 1024 + i,
      .checksum = 0xfedcba9876543210u + static_cast<uint64_t>(i),
      .last_used_ms = 1'700'000'000'000 + i,
      .tokens = {i, -1, 0, 258, std::numeric_limits<int32_t>::max(),
                 std::numeric_limits<int32_t>::min()},
  };
}

std::vector<BlockHash> hashes_of(const std::vector<IndexedBlock>& blocks) {
  std::vector<BlockHash> out;
  for (const IndexedBlock& b : blocks) out.push_back(b.hash);
  return out;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// PRAGMA user_version lives in the database header: 4 bytes, big-endian, at
// offset 60. Patched in a closed database (no WAL left) to fake another
// Strata's file without linking SQLite into the test.
void set_user_version(const fs::path& file, uint32_t version) {
  ASSERT_FALSE(fs::exists(fs::path(file.string() + "-wal")));  // checkpointed on close
  std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
  ASSERT_TRUE(f.good());
  f.seekp(60);
  const char bytes[4] = {static_cast<char>(version >> 24), static_cast<char>(version >> 16),
                         static_cast<char>(version >> 8), static_cast<char>(version)};
  f.write(bytes, 4);
  ASSERT_TRUE(f.good());
}

TEST_F(BlockIndexTest, RoundTripsEveryColumn) {
  BlockIndex index(file_);
  EXPECT_TRUE(fs::exists(file_));
  EXPECT_EQ(index.count(), 0);
  EXPECT_FALSE(index.find(make_block(0).hash).has_value());

  IndexedBlock empty_tokens = make_block(7);
  empty_tokens.tokens.clear();  // stored as an empty blob, not NULL
  const std::vector<IndexedBlock> blocks = {make_block(0), make_block(1), empty_tokens};
  index.insert(blocks);
  for (const IndexedBlock& b : blocks) {
    std::optional<IndexedBlock> got = index.find(b.hash);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->hash, b.hash);
    EXPECT_EQ(got->parent, b.parent);
    EXPECT_EQ(got->model, b.model);
    EXPECT_EQ(got->slab, b.slab);
    EXPECT_EQ(got->slot, b.slot);
    EXPECT_EQ(got->n_bytes, b.n_bytes);
    EXPECT_EQ(got->checksum, b.checksum);
    EXPECT_EQ(got->last_used_ms, b.last_used_ms);
    EXPECT_EQ(got->tokens, b.tokens);
    EXPECT_EQ(*got, b);
  }
  EXPECT_EQ(index.count(), 3);
  EXPECT_FALSE(index.find(make_block(2).hash).has_value());
}

TEST_F(BlockIndexTest, InsertReplacesSameHashAndSameSlot) {
  BlockIndex index(file_);
  index.insert(std::vector{make_block(0), make_block(1)});

  IndexedBlock moved = make_block(0);
  moved.slab = 9;
  moved.slot = 9;
  moved.checksum = 42;
  moved.tokens = {1, 2, 3};
  index.insert(std::vector{moved});
  EXPECT_EQ(index.count(), 2);
  EXPECT_EQ(index.find(moved.hash), moved);

  // A block written into block 1's slot: the slot's bytes are the new
  // block's, so block 1's row goes.
  IndexedBlock in_slot_of_1 = make_block(2);
  in_slot_of_1.slab = make_block(1).slab;
  in_slot_of_1.slot = make_block(1).slot;
  index.insert(std::vector{in_slot_of_1});
  EXPECT_EQ(index.count(), 2);
  EXPECT_FALSE(index.find(make_block(1).hash).has_value());
  EXPECT_EQ(index.find(in_slot_of_1.hash), in_slot_of_1);

  index.insert({});  // nothing to do
  EXPECT_EQ(index.count(), 2);
}

TEST_F(BlockIndexTest, EraseRemovesRowsAndIgnoresAbsentOnes) {
  BlockIndex index(file_);
  std::vector<IndexedBlock> blocks;
  for (int32_t i = 0; i < 5; ++i) blocks.push_back(make_block(i));
  index.insert(blocks);

  index.erase(std::vector{blocks[1].hash, blocks[3].hash, hash_of("never inserted")});
  EXPECT_EQ(index.count(), 3);
  EXPECT_FALSE(index.find(blocks[1].hash).has_value());
  EXPECT_FALSE(index.find(blocks[3].hash).has_value());
  EXPECT_TRUE(index.find(blocks[0].hash).has_value());
  index.erase({});
  EXPECT_EQ(index.count(), 3);
}

TEST_F(BlockIndexTest, LeastRecentlyUsedIsOldestFirstPerModel) {
  BlockIndex index(file_);
  std::vector<IndexedBlock> a, b;
  for (int32_t i = 0; i < 6; ++i) a.push_back(make_block(i, kModelA));
  for (int32_t i = 0; i < 4; ++i) b.push_back(make_block(i, kModelB));
  // Model b's rows are older than all of model a's, so a filter that leaked
  // would show at the front of a's list.
  for (IndexedBlock& blk : b) blk.last_used_ms -= 1'000'000;
  // Insert out of order: the order comes from last_used, not insertion.
  index.insert(std::vector{a[3], a[0], a[5], a[1], a[4], a[2]});
  index.insert(b);

  EXPECT_EQ(index.count(), 10);
  EXPECT_EQ(index.count_model(kModelA), 6);
  EXPECT_EQ(index.count_model(kModelB), 4);
  EXPECT_EQ(index.count_model(hash_of("model c")), 0);

  EXPECT_EQ(hashes_of(index.least_recently_used(kModelA, 3)),
            (std::vector{a[0].hash, a[1].hash, a[2].hash}));
  EXPECT_EQ(hashes_of(index.least_recently_used(kModelB, 100)), hashes_of(b));
  EXPECT_TRUE(index.least_recently_used(kModelA, 0).empty());
  EXPECT_TRUE(index.least_recently_used(kModelA, -1).empty());
  EXPECT_TRUE(index.least_recently_used(hash_of("model c"), 10).empty());

  // load_model: every row of one model, oldest first.
  EXPECT_EQ(index.load_model(kModelA), a);
  EXPECT_EQ(index.load_model(kModelB), b);
}

TEST_F(BlockIndexTest, TouchMovesBlocksToTheRecentEnd) {
  BlockIndex index(file_);
  std::vector<IndexedBlock> a;
  for (int32_t i = 0; i < 4; ++i) a.push_back(make_block(i));
  index.insert(a);
  ASSERT_EQ(hashes_of(index.least_recently_used(kModelA, 4)),
            (std::vector{a[0].hash, a[1].hash, a[2].hash, a[3].hash}));

  const int64_t now_ms = a[3].last_used_ms + 10;
  index.touch(std::vector{a[0].hash, a[2].hash, hash_of("absent")}, now_ms);
  EXPECT_EQ(index.find(a[0].hash)->last_used_ms, now_ms);
  EXPECT_EQ(index.find(a[1].hash)->last_used_ms, a[1].last_used_ms);
  EXPECT_EQ(hashes_of(index.least_recently_used(kModelA, 2)), (std::vector{a[1].hash, a[3].hash}));
  index.touch(std::vector{a[1].hash}, now_ms + 1);
  EXPECT_EQ(index.least_recently_used(kModelA, 1).front().hash, a[3].hash);
  EXPECT_EQ(index.count(), 4);
}

TEST_F(BlockIndexTest, CountsTotalBytesAndClears) {
  BlockIndex index(file_);
  EXPECT_EQ(index.total_bytes(), 0);
  std::vector<IndexedBlock> blocks = {make_block(0), make_block(1, kModelB), make_block(2)};
  index.insert(blocks);
  EXPECT_EQ(index.count(), 3);
  EXPECT_EQ(index.total_bytes(), blocks[0].n_bytes + blocks[1].n_bytes + blocks[2].n_bytes);
  index.erase(std::vector{blocks[2].hash});
  EXPECT_EQ(index.total_bytes(), blocks[0].n_bytes + blocks[1].n_bytes);

  index.clear();
  EXPECT_EQ(index.count(), 0);
  EXPECT_EQ(index.total_bytes(), 0);
  EXPECT_EQ(index.count_model(kModelB), 0);
  index.insert(blocks);  // still usable
  EXPECT_EQ(index.count(), 3);
}

TEST_F(BlockIndexTest, RowsPersistAcrossReopen) {
  std::vector<IndexedBlock> blocks;
  for (int32_t i = 0; i < 20; ++i) blocks.push_back(make_block(i));
  {
    BlockIndex index(file_);
    index.insert(blocks);
    index.touch(std::vector{blocks[0].hash}, blocks.back().last_used_ms + 1);
    index.erase(std::vector{blocks[5].hash});
  }
  blocks[0].last_used_ms = blocks.back().last_used_ms + 1;
  blocks.erase(blocks.begin() + 5);

  BlockIndex reopened(file_);
  EXPECT_EQ(reopened.count(), 19);
  std::vector<IndexedBlock> loaded = reopened.load_model(kModelA);
  ASSERT_EQ(loaded.size(), 19u);
  EXPECT_EQ(loaded.back(), blocks[0]);  // touched: now the most recent
  for (const IndexedBlock& b : blocks) EXPECT_EQ(reopened.find(b.hash), b);
}

TEST_F(BlockIndexTest, SecondConnectionReadsWhatTheFirstCommitted) {
  BlockIndex writer(file_);
  BlockIndex reader(file_);  // opened before the writes: each read sees the latest commit
  EXPECT_EQ(reader.count(), 0);
  writer.insert(std::vector{make_block(0), make_block(1)});
  EXPECT_EQ(reader.count(), 2);
  EXPECT_EQ(reader.find(make_block(1).hash), make_block(1));
  writer.erase(std::vector{make_block(0).hash});
  EXPECT_FALSE(reader.find(make_block(0).hash).has_value());
  EXPECT_TRUE(fs::exists(fs::path(file_.string() + "-wal")));  // WAL mode
}

// SQLite goes on writing into a deleted file without an error: has_moved()
// is how the caller finds out.
TEST_F(BlockIndexTest, HasMovedOnceTheFileIsDeletedOrReplaced) {
  BlockIndex index(file_);
  index.insert(std::vector{make_block(0)});
  EXPECT_FALSE(index.has_moved());
  fs::rename(file_, file_.string() + ".old");
  EXPECT_TRUE(index.has_moved());
  index.insert(std::vector{make_block(1)});  // no error: the reason to ask
  fs::rename(file_.string() + ".old", file_);
  EXPECT_FALSE(index.has_moved()) << "the same file back in place";
  fs::remove(file_);
  { BlockIndex replacement(file_); }
  EXPECT_TRUE(index.has_moved()) << "another file at the path";
}

TEST_F(BlockIndexTest, NewerSchemaVersionIsRefused) {
  { BlockIndex index(file_); }
  set_user_version(file_, BlockIndex::kSchemaVersion + 1);
  try {
    BlockIndex index(file_);
    FAIL() << "opened a database of a newer schema";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file_.string()), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
  }
  // Refused, not destroyed: the newer Strata's file is still there, unmoved.
  EXPECT_TRUE(fs::exists(file_));
  EXPECT_FALSE(fs::exists(fs::path(file_.string() + ".corrupt")));
}

TEST_F(BlockIndexTest, OlderSchemaIsDroppedAndRecreated) {
  {
    BlockIndex index(file_);
    index.insert(std::vector{make_block(0)});
  }
  set_user_version(file_, 0);  // an unknown layout: tables present, no version
  BlockIndex index(file_);
  EXPECT_EQ(index.count(), 0);
  index.insert(std::vector{make_block(1)});
  EXPECT_EQ(index.find(make_block(1).hash), make_block(1));
}

TEST_F(BlockIndexTest, GarbageFileIsMovedAsideAndAnEmptyIndexWorks) {
  for (size_t n_bytes : {size_t{8192}, size_t{10}}) {  // longer and shorter than a header
    SCOPED_TRACE(n_bytes);
    fs::remove(file_);
    std::string garbage(n_bytes, '\0');
    for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 17);
    std::ofstream(file_, std::ios::binary) << garbage;
    {
      BlockIndex index(file_);
      EXPECT_EQ(index.count(), 0);
      index.insert(std::vector{make_block(0)});
      EXPECT_EQ(index.find(make_block(0).hash), make_block(0));
    }
    EXPECT_EQ(read_file(file_.string() + ".corrupt"), garbage);
    BlockIndex reopened(file_);  // the new file is a good database
    EXPECT_EQ(reopened.count(), 1);
  }
}

TEST_F(BlockIndexTest, DamagedPagesAreMovedAside) {
  {
    BlockIndex index(file_);
    std::vector<IndexedBlock> blocks;
    for (int32_t i = 0; i < 500; ++i) blocks.push_back(make_block(i));
    index.insert(blocks);
  }
  // Keep the header page (the schema) intact; overwrite every later page.
  const uintmax_t size = fs::file_size(file_);
  ASSERT_GT(size, 4096u * 4);
  {
    std::fstream f(file_, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(4096);
    for (uintmax_t i = 4096; i < size; ++i) f.put(static_cast<char>(0xa5 ^ (i * 7)));
  }
  BlockIndex index(file_);
  EXPECT_EQ(index.count(), 0);
  EXPECT_TRUE(fs::exists(file_.string() + ".corrupt"));
  index.insert(std::vector{make_block(0)});
  EXPECT_EQ(index.count(), 1);
}

// Damage confined to an index's pages: no scan of the table reads them, but
// load_model() walks that index, so start-up failed there instead of moving
// the file aside (found by disk_tier_fuzzer).
TEST_F(BlockIndexTest, DamagedIndexPagesAreMovedAside) {
  if (std::system("sqlite3 -version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no sqlite3 shell to find the index's pages with";
  }
  {
    BlockIndex index(file_);
    std::vector<IndexedBlock> blocks;
    for (int32_t i = 0; i < 500; ++i) blocks.push_back(make_block(i));
    index.insert(blocks);
  }
  const std::string command = str_cat("sqlite3 '", file_.string(), "' \"SELECT rootpage FROM ",
                                      "sqlite_master WHERE name = 'blocks_model_last_used'\"");
  FILE* shell = ::popen(command.c_str(), "r");
  ASSERT_NE(shell, nullptr);
  int root_page = 0;
  ASSERT_EQ(std::fscanf(shell, "%d", &root_page), 1);
  ::pclose(shell);
  const std::string header = read_file(file_.string()).substr(0, 100);
  const int page_size = static_cast<uint8_t>(header[16]) << 8 | static_cast<uint8_t>(header[17]);
  {
    std::fstream f(file_, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(root_page - 1) * page_size);
    for (int i = 0; i < page_size; ++i) f.put(static_cast<char>(0x5a ^ (i * 13)));
  }
  BlockIndex index(file_);
  EXPECT_TRUE(fs::exists(file_.string() + ".corrupt"));
  EXPECT_EQ(index.load_model(kModelA), std::vector<IndexedBlock>{});
  index.insert(std::vector{make_block(0)});
  EXPECT_EQ(index.load_model(kModelA), std::vector{make_block(0)});
}

// A header whose schema format number no SQLite writes (bytes 44-47, 1 to
// 4) makes SQLite refuse the file with a plain SQLITE_ERROR, "unsupported
// file format", not SQLITE_CORRUPT; it is moved aside all the same (found by
// disk_tier_fuzzer).
TEST_F(BlockIndexTest, UnsupportedFileFormatIsMovedAside) {
  {
    BlockIndex index(file_);
    index.insert(std::vector{make_block(0)});
  }
  {
    std::fstream f(file_, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(44);
    f.put(0).put(0).put(0).put(5);
  }
  BlockIndex index(file_);
  EXPECT_TRUE(fs::exists(file_.string() + ".corrupt"));
  EXPECT_EQ(index.count(), 0);
  index.insert(std::vector{make_block(1)});
  EXPECT_EQ(index.find(make_block(1).hash), make_block(1));
}

TEST_F(BlockIndexTest, UnopenableFileThrowsNamingIt) {
  const fs::path missing_dir = dir_ / "no such dir" / "index.sqlite";
  try {
    BlockIndex index(missing_dir);
    FAIL() << "opened a file in a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing_dir.string()), std::string::npos) << e.what();
  }
}

// Rows written by something other than BlockIndex (here the sqlite3 shell)
// with wrong blob sizes or types are skipped on read and deleted on open.
TEST_F(BlockIndexTest, MalformedRowsAreNeverReturned) {
  if (std::system("sqlite3 -version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no sqlite3 shell to write malformed rows with";
  }
  BlockIndex index(file_);
  index.insert(std::vector{make_block(0), make_block(1)});
  const std::string model = "X'" + kModelA.to_hex() + "'";
  const std::string hash31 = "X'" + kModelA.to_hex().substr(0, 62) + "'";
  const std::string good_hash = "X'" + hash_of("malformed").to_hex() + "'";
  const std::string good_hash2 = "X'" + hash_of("malformed 2").to_hex() + "'";
  const std::string sql =
      str_cat("INSERT INTO blocks VALUES (", hash31, ", ", model, ", ", model,
              ", 50, 1, 10, 0, 1, X'01000000');",  // 31-byte hash
              "INSERT INTO blocks VALUES (", good_hash, ", ", model, ", ", model,
              ", 50, 2, 10, 0, 2, X'0100000002');",  // 5 token bytes
              "INSERT INTO blocks VALUES (", good_hash2, ", ", model, ", ", model,
              ", 'slab', 3, 10, 0, 3, X'');");  // a text slab
  const std::string command = str_cat("sqlite3 '", file_.string(), "' \"", sql, "\"");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  EXPECT_EQ(index.count(), 5);  // the rows are there...
  // ...but never come back.
  EXPECT_EQ(index.load_model(kModelA), (std::vector{make_block(0), make_block(1)}));
  EXPECT_EQ(index.least_recently_used(kModelA, 10).size(), 2u);
  EXPECT_FALSE(index.find(hash_of("malformed")).has_value());
  EXPECT_FALSE(index.find(hash_of("malformed 2")).has_value());

  BlockIndex reopened(file_);  // opening deletes them
  EXPECT_EQ(reopened.count(), 2);
  EXPECT_EQ(index.count(), 2);
}

TEST_F(BlockIndexTest, BulkInsertOfTenThousandRows) {
  BlockIndex index(file_);
  std::vector<IndexedBlock> blocks;
  for (int32_t i = 0; i < 10'000; ++i) blocks.push_back(make_block(i));
  const auto start = std::chrono::steady_clock::now();
  index.insert(blocks);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  std::cout << "inserted 10,000 rows in one transaction in "
            << std::chrono::duration<double, std::milli>(elapsed).count() << " ms\n";
  EXPECT_EQ(index.count(), 10'000);
  EXPECT_EQ(hashes_of(index.least_recently_used(kModelA, 2)),
            (std::vector{blocks[0].hash, blocks[1].hash}));
  EXPECT_EQ(index.find(blocks[9'999].hash), blocks[9'999]);
}

}  // namespace
}  // namespace strata
