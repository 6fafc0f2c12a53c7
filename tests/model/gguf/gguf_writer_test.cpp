#include "model/gguf/gguf_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "common/str_cat.h"
#include "model/gguf/gguf_file.h"

namespace strata {
namespace {

std::vector<float> ramp(size_t n) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) * 0.25f - 3.0f;
  return values;
}

uint32_t read_u32(const std::vector<std::byte>& bytes, size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

uint64_t read_u64(const std::vector<std::byte>& bytes, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

class TempDir {
 public:
  TempDir() : path_(str_cat(testing::TempDir(), "gguf_writer_test_", ::getpid())) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(GgufWriterTest, EmptyFileIsJustTheHeader) {
  const std::vector<std::byte> bytes = GgufWriter().serialize();
  ASSERT_EQ(bytes.size(), 32u);  // 24-byte header padded to the default alignment
  EXPECT_EQ(read_u32(bytes, 0), GgufFile::kMagic);
  EXPECT_EQ(read_u32(bytes, 4), 3u);
  EXPECT_EQ(read_u64(bytes, 8), 0u);
  EXPECT_EQ(read_u64(bytes, 16), 0u);
}

TEST(GgufWriterTest, LayoutIsPaddedToTheAlignment) {
  for (uint64_t alignment : {1u, 16u, 32u, 256u}) {
    SCOPED_TRACE(alignment);
    GgufWriter writer(3, alignment);
    writer.set("k", "v");
    writer.add_tensor_bytes("a", {3}, WeightType::kF32, std::vector<std::byte>(12, std::byte{1}));
    writer.add_tensor_bytes("b", {5}, WeightType::kF16, std::vector<std::byte>(10, std::byte{2}));
    const std::vector<std::byte> bytes = writer.serialize();
    EXPECT_EQ(bytes.size() % alignment, 0u);
    const GgufFile file = GgufFile::parse(bytes);
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.tensors()[0].offset, 0u);
    EXPECT_EQ(file.tensors()[1].offset, (12 + alignment - 1) / alignment * alignment);
    EXPECT_EQ(bytes.size(), file.data_offset() + file.tensors()[1].offset +
                                (10 + alignment - 1) / alignment * alignment);
    // Padding is zeros.
    for (uint64_t i = file.data_offset() + 12; i < file.data_offset() + file.tensors()[1].offset;
         ++i) {
      EXPECT_EQ(bytes[i], std::byte{0});
    }
  }
}

TEST(GgufWriterTest, SetReplacesInPlaceAndKeepsFirstOrder) {
  GgufWriter writer;
  writer.set("a", uint32_t{1});
  writer.set("b", uint32_t{2});
  writer.set("a", "now a string");
  const std::vector<std::byte> bytes = writer.serialize();
  const GgufFile file = GgufFile::parse(bytes);
  ASSERT_EQ(file.metadata().size(), 2u);
  EXPECT_EQ(file.metadata()[0].first, "a");
  EXPECT_EQ(file.metadata()[0].second, GgufValue("now a string"));
  EXPECT_EQ(file.metadata()[1].first, "b");
}

TEST(GgufWriterTest, AddTensorQuantizesF32Exactly) {
  GgufWriter writer;
  const std::vector<float> values = ramp(24);
  writer.add_tensor("w", {8, 3}, WeightType::kF32, values);
  const std::vector<std::byte> bytes = writer.serialize();
  const GgufFile file = GgufFile::parse(bytes);
  const GgufTensorInfo& t = file.tensors().at(0);
  EXPECT_EQ(t.n_elems, 24u);
  ASSERT_EQ(t.n_bytes, 96u);
  EXPECT_EQ(std::memcmp(t.data.data(), values.data(), 96), 0);
}

TEST(GgufWriterTest, AddTensorEncodesEverySupportedType) {
  for (WeightType type : {WeightType::kF16, WeightType::kBF16, WeightType::kQ8_0, WeightType::kQ4_0,
                          WeightType::kQ4_K, WeightType::kQ5_K, WeightType::kQ6_K}) {
    SCOPED_TRACE(weight_type_name(type));
    GgufWriter writer;
    writer.add_tensor("w", {256, 2}, type, ramp(512));
    const std::vector<std::byte> bytes = writer.serialize();
    const GgufFile file = GgufFile::parse(bytes);
    EXPECT_EQ(file.tensors().at(0).type, type);
    EXPECT_EQ(file.tensors().at(0).n_bytes, weight_bytes(type, 512).value());
  }
}

TEST(GgufWriterTest, RejectsBadConstructionAndKeys) {
  EXPECT_THROW(GgufWriter(1), std::invalid_argument);
  EXPECT_THROW(GgufWriter(4), std::invalid_argument);
  EXPECT_THROW(GgufWriter(3, 0), std::invalid_argument);
  EXPECT_THROW(GgufWriter(3, 48), std::invalid_argument);
  EXPECT_THROW(GgufWriter(3, uint64_t{1} << 32), std::invalid_argument);
  GgufWriter writer;
  EXPECT_THROW(writer.set("general.alignment", uint32_t{64}), std::invalid_argument);
  // A hand-built array mixing item types cannot be written.
  GgufArray mixed{GgufType::kInt32, {int32_t{1}, uint8_t{2}}};
  EXPECT_THROW(writer.set("mixed", GgufValue(mixed)), std::invalid_argument);
  GgufArray nested_mixed{GgufType::kArray, {GgufValue(mixed)}};
  EXPECT_THROW(writer.set("nested", GgufValue(nested_mixed)), std::invalid_argument);
}

TEST(GgufWriterTest, RejectsBadTensors) {
  GgufWriter writer;
  auto f32 = [](size_t n) { return std::vector<std::byte>(n * 4); };
  writer.add_tensor_bytes("ok", {4}, WeightType::kF32, f32(4));
  EXPECT_THROW(writer.add_tensor_bytes("ok", {4}, WeightType::kF32, f32(4)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("", {4}, WeightType::kF32, f32(4)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {}, WeightType::kF32, f32(1)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {1, 1, 1, 1, 1}, WeightType::kF32, f32(1)),
               std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {4, 0}, WeightType::kF32, f32(0)),
               std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {uint64_t{1} << 32, uint64_t{1} << 32},
                                       WeightType::kF32, f32(1)),
               std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {4}, WeightType::kF32, f32(3)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {4}, static_cast<WeightType>(99), f32(4)),
               std::invalid_argument);
  EXPECT_THROW(writer.add_tensor_bytes("t", {16, 2}, WeightType::kQ8_0, std::vector<std::byte>(34)),
               std::invalid_argument);
  EXPECT_THROW(writer.add_tensor("t", {4}, WeightType::kF32, ramp(3)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor("t", {32}, WeightType::kQ4_1, ramp(32)), std::invalid_argument);
  EXPECT_THROW(writer.add_tensor("t", {100}, WeightType::kQ4_K, ramp(100)), std::invalid_argument);
  // Known but not computable types can still be written from bytes.
  EXPECT_NO_THROW(
      writer.add_tensor_bytes("q4_1", {32}, WeightType::kQ4_1, std::vector<std::byte>(20)));
  const std::vector<std::byte> bytes = writer.serialize();
  EXPECT_EQ(GgufFile::parse(bytes).tensors().size(), 2u);
}

TEST(GgufWriterTest, WriteProducesTheSerializedBytesAtomically) {
  TempDir dir;
  const std::string path = dir.file("model.gguf");
  GgufWriter writer(2, 64);
  writer.set("general.name", "atomic");
  writer.add_tensor("w", {8}, WeightType::kF32, ramp(8));
  writer.write(path);
  writer.write(path);  // replacing an existing file works too

  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::byte> expected = writer.serialize();
  ASSERT_EQ(chars.size(), expected.size());
  EXPECT_EQ(std::memcmp(chars.data(), expected.data(), expected.size()), 0);

  // Nothing but the model is left in the directory, and it is readable by others.
  size_t n_entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++n_entries;
  }
  EXPECT_EQ(n_entries, 1u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  const GgufFile file = GgufFile::open(path);
  EXPECT_EQ(file.version(), 2u);
  EXPECT_EQ(file.alignment(), 64u);
}

TEST(GgufWriterTest, WriteFailureLeavesNothingBehind) {
  TempDir dir;
  EXPECT_THROW(GgufWriter().write(dir.file("missing/model.gguf")), std::runtime_error);
  // A directory in the way: the rename fails and the temporary file is removed.
  std::filesystem::create_directories(dir.file("taken/inner"));
  EXPECT_THROW(GgufWriter().write(dir.file("taken")), std::runtime_error);
  size_t n_entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++n_entries;
  }
  EXPECT_EQ(n_entries, 1u);  // just "taken"
}

}  // namespace
}  // namespace strata
