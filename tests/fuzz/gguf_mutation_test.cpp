// Replays tens of thousands of deterministic mutations of valid GGUF files:
// each must parse (and then keep every promise of GgufFile) or be rejected
// with a GgufError. Run in the sanitizer build, it catches what the fuzzer
// would, without needing clang or time.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>

#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"
#include "tests/fuzz/gguf_invariants.h"
#include "tests/fuzz/gguf_seed_files.h"

namespace strata {
namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();
constexpr int kRandomMutationsPerSeed = 3000;

struct Outcome {
  size_t n_parsed = 0;
  size_t n_rejected = 0;
};

// Parses a copy of exactly `bytes` (so ASan sees a read past the end) and
// checks the outcome; the description names the mutation in failures.
void replay(const std::vector<std::byte>& bytes, const std::string& description, Outcome& outcome) {
  std::vector<std::byte> input(bytes.begin(), bytes.end());
  input.shrink_to_fit();
  try {
    const GgufFile file = GgufFile::parse(input);
    std::string violation = gguf_invariant_violation(file, input);
    EXPECT_EQ(violation, "") << description;
    ++outcome.n_parsed;
  } catch (const GgufError& e) {
    EXPECT_LE(e.offset(), input.size()) << description << ": " << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("gguf: ", 0), 0u) << description;
    ++outcome.n_rejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << description << ": not a GgufError: " << e.what();
  }
}

template <typename T>
std::vector<std::byte> overwrite(std::vector<std::byte> bytes, size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof(T));
  return bytes;
}

// Every count, length, type id and offset in the header is some 4- or 8-byte
// field; writing extreme values at every position hits all of them.
void replay_field_overwrites(const GgufSeedFile& seed, uint64_t header_end, Outcome& outcome) {
  const std::vector<std::byte>& bytes = seed.bytes;
  constexpr std::array<uint64_t, 6> kWide = {
      0, 1, uint64_t{1} << 32, uint64_t{1} << 63, kU64Max - 31, kU64Max};
  constexpr std::array<uint32_t, 6> kNarrow = {0, 5, 9, 13, 99, 0xffffffffu};
  for (size_t at = 0; at + 8 <= std::min<uint64_t>(header_end, bytes.size()); ++at) {
    for (uint64_t v : kWide) {
      replay(overwrite(bytes, at, v), str_cat(seed.name, ": u64 ", v, " at ", at), outcome);
    }
    replay(overwrite(bytes, at, static_cast<uint64_t>(bytes.size())),
           str_cat(seed.name, ": file size at ", at), outcome);
  }
  for (size_t at = 0; at + 4 <= std::min<uint64_t>(header_end, bytes.size()); ++at) {
    for (uint32_t v : kNarrow) {
      replay(overwrite(bytes, at, v), str_cat(seed.name, ": u32 ", v, " at ", at), outcome);
    }
  }
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // One random mutation of `bytes`; `other` is another seed to splice from.
  std::vector<std::byte> mutate(std::vector<std::byte> bytes, const std::vector<std::byte>& other,
                                std::string& description) {
    switch (pick(7)) {
      case 0: {  // flip a few bits
        size_t n = 1 + pick(4);
        for (size_t i = 0; i < n && !bytes.empty(); ++i) {
          bytes[pick(bytes.size())] ^= static_cast<std::byte>(1u << pick(8));
        }
        description = str_cat("flip ", n, " bits");
        break;
      }
      case 1: {  // set a byte
        if (bytes.empty()) break;
        size_t at = pick(bytes.size());
        bytes[at] = static_cast<std::byte>(pick(256));
        description = str_cat("set byte ", at);
        break;
      }
      case 2: {  // truncate
        size_t n = pick(bytes.size() + 1);
        bytes.resize(n);
        description = str_cat("truncate to ", n);
        break;
      }
      case 3: {  // insert random bytes
        size_t at = pick(bytes.size() + 1);
        size_t n = 1 + pick(16);
        std::vector<std::byte> extra(n);
        for (std::byte& b : extra) b = static_cast<std::byte>(pick(256));
        bytes.insert(bytes.begin() + static_cast<ptrdiff_t>(at), extra.begin(), extra.end());
        description = str_cat("insert ", n, " at ", at);
        break;
      }
      case 4: {  // delete a range
        if (bytes.empty()) break;
        size_t at = pick(bytes.size());
        size_t n = std::min<size_t>(1 + pick(16), bytes.size() - at);
        bytes.erase(bytes.begin() + static_cast<ptrdiff_t>(at),
                    bytes.begin() + static_cast<ptrdiff_t>(at + n));
        description = str_cat("delete ", n, " at ", at);
        break;
      }
      case 5: {  // a huge or small length/count somewhere
        if (bytes.size() < 8) break;
        size_t at = pick(bytes.size() - 7);
        uint64_t v = pick(2) ? kU64Max - pick(1024) : pick(1u << 20);
        bytes = overwrite(std::move(bytes), at, v);
        description = str_cat("u64 ", v, " at ", at);
        break;
      }
      case 6: {  // splice: our head, the other file's tail
        size_t cut = pick(bytes.size() + 1);
        size_t from = pick(other.size() + 1);
        bytes.resize(cut);
        bytes.insert(bytes.end(), other.begin() + static_cast<ptrdiff_t>(from), other.end());
        description = str_cat("splice at ", cut, " from ", from);
        break;
      }
    }
    return bytes;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  std::mt19937_64 rng_;
};

TEST(GgufMutationTest, SeedsAreValid) {
  for (const GgufSeedFile& seed : gguf_seed_files()) {
    SCOPED_TRACE(seed.name);
    EXPECT_LT(seed.bytes.size(), 8192u);
    Outcome outcome;
    replay(seed.bytes, seed.name, outcome);
    EXPECT_EQ(outcome.n_parsed, 1u);
  }
}

TEST(GgufMutationTest, FieldOverwritesParseOrThrowGgufError) {
  Outcome outcome;
  for (const GgufSeedFile& seed : gguf_seed_files()) {
    const uint64_t header_end = GgufFile::parse(seed.bytes).data_offset();
    replay_field_overwrites(seed, header_end, outcome);
  }
  // Both outcomes occur: the mutations reach past the first checks.
  EXPECT_GT(outcome.n_parsed, 100u);
  EXPECT_GT(outcome.n_rejected, 1000u);
  std::printf("field overwrites: %zu parsed, %zu rejected\n", outcome.n_parsed, outcome.n_rejected);
}

TEST(GgufMutationTest, RandomMutationsParseOrThrowGgufError) {
  const std::vector<GgufSeedFile> seeds = gguf_seed_files();
  Mutator mutator(0x5eed);
  Outcome outcome;
  for (size_t s = 0; s < seeds.size(); ++s) {
    const std::vector<std::byte>& other = seeds[(s + 1) % seeds.size()].bytes;
    for (int i = 0; i < kRandomMutationsPerSeed; ++i) {
      // Stack up to three mutations, so that later checks see damaged input too.
      std::vector<std::byte> bytes = seeds[s].bytes;
      std::string description = seeds[s].name;
      int n_mutations = 1 + i % 3;
      for (int m = 0; m < n_mutations; ++m) {
        std::string step;
        bytes = mutator.mutate(std::move(bytes), other, step);
        description += ", " + step;
      }
      replay(bytes, str_cat("#", i, " ", description), outcome);
    }
  }
  EXPECT_GT(outcome.n_parsed, 100u);
  EXPECT_GT(outcome.n_rejected, 1000u);
  std::printf("random mutations: %zu parsed, %zu rejected\n", outcome.n_parsed, outcome.n_rejected);
}

}  // namespace
}  // namespace strata
