// model_fingerprint() on GGUF files built in memory: stable for the same
// bytes (mapped or not), different for any change that changes KV bytes —
// a weight byte in a sampled region, a tensor type, a metadata value, the
// KV dtype, block_tokens.
#include "engine/model_fingerprint.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "model/gguf/gguf_writer.h"

namespace strata {
namespace {

const KvLayout kKv{.n_layers = 2, .n_kv_heads = 2, .head_dim = 16, .block_tokens = 16,
                   .dtype = WeightType::kF16};

struct ModelSpec {
  int64_t n_weights = 256;  // floats of the one big tensor
  WeightType type = WeightType::kF32;
  float rope_freq_base = 10000.0f;
};

std::vector<std::byte> model_bytes(const ModelSpec& spec) {
  GgufWriter writer;
  writer.set("general.architecture", "llama");
  writer.set("llama.rope.freq_base", spec.rope_freq_base);
  writer.set("llama.block_count", uint32_t{2});
  std::vector<float> small(64);
  for (size_t i = 0; i < small.size(); ++i) small[i] = 0.25f * static_cast<float>(i);
  writer.add_tensor("token_embd.weight", {32, 2}, WeightType::kF32, small);
  std::vector<float> big(static_cast<size_t>(spec.n_weights));
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000) * 0.001f;
  writer.add_tensor("blk.0.ffn_up.weight", {256, static_cast<uint64_t>(spec.n_weights / 256)},
                    spec.type, big);
  return writer.serialize();
}

ModelFingerprint fingerprint_of(const std::vector<std::byte>& bytes, const KvLayout& kv = kKv) {
  return model_fingerprint(GgufFile::parse(bytes), kv);
}

TEST(ModelFingerprintTest, StableForTheSameFileMappedOrInMemory) {
  const std::vector<std::byte> bytes = model_bytes({});
  const ModelFingerprint a = fingerprint_of(bytes);
  EXPECT_EQ(fingerprint_of(bytes), a);
  EXPECT_EQ(fingerprint_of(model_bytes({})), a);  // rebuilt: the same bytes
  EXPECT_NE(a, ModelFingerprint{});
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("strata_fingerprint_test_" + std::to_string(::getpid()) + ".gguf"))
                               .string();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good());
  }
  EXPECT_EQ(model_fingerprint(GgufFile::open(path), kKv), a);
  std::filesystem::remove(path);
}

TEST(ModelFingerprintTest, ChangesWithTypeMetadataAndKvLayout) {
  const ModelFingerprint base = fingerprint_of(model_bytes({}));
  EXPECT_NE(fingerprint_of(model_bytes({.type = WeightType::kF16})), base);
  EXPECT_NE(fingerprint_of(model_bytes({.rope_freq_base = 500000.0f})), base);
  const std::vector<std::byte> bytes = model_bytes({});
  KvLayout kv = kKv;
  kv.dtype = WeightType::kF32;
  EXPECT_NE(fingerprint_of(bytes, kv), base);
  kv = kKv;
  kv.block_tokens = 32;
  EXPECT_NE(fingerprint_of(bytes, kv), base);
  // A small data section is hashed whole: any weight byte counts.
  std::vector<std::byte> changed = bytes;
  changed.back() ^= std::byte{1};
  EXPECT_NE(fingerprint_of(changed), base);
}

TEST(ModelFingerprintTest, LargeWeightsAreSampled) {
  // 6,000,640 bytes of weights: 64 samples of 64 KiB, about 94 KiB apart.
  const std::vector<std::byte> bytes = model_bytes({.n_weights = 256 * 5860});
  const GgufFile file = GgufFile::parse(bytes);
  const uint64_t data = file.data_offset();
  const uint64_t span = bytes.size() - data - kFingerprintSampleBytes;
  ASSERT_GT(span / 63, static_cast<uint64_t>(kFingerprintSampleBytes) + 1000);
  const ModelFingerprint base = model_fingerprint(file, kKv);

  auto with_byte_flipped = [&](uint64_t at) {
    std::vector<std::byte> changed = bytes;
    changed.at(at) ^= std::byte{0x40};
    return fingerprint_of(changed);
  };
  // In sample 0 (the data's start), in sample 1, in the last one (the file's end).
  EXPECT_NE(with_byte_flipped(data + 12), base);
  EXPECT_NE(with_byte_flipped(data + span / 63 + 5), base);
  EXPECT_NE(with_byte_flipped(bytes.size() - 1), base);
  // Between samples 0 and 1: not read, by design (a fine-tune changes every region).
  EXPECT_EQ(with_byte_flipped(data + kFingerprintSampleBytes + 100), base);
}

}  // namespace
}  // namespace strata
