#include "model/gguf/gguf_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>

#include "common/str_cat.h"
#include "model/gguf/gguf_value_reader.h"
#include "model/gguf/gguf_writer.h"

namespace strata {
namespace {

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

// Hand-assembled GGUF bytes, for files the writer refuses to make.
class RawGguf {
 public:
  // magic, version, tensor count, metadata key count: 24 bytes.
  static RawGguf header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    RawGguf raw;
    raw.u32(GgufFile::kMagic).u32(version).u64(n_tensors).u64(n_kv);
    return raw;
  }

  RawGguf& u8(uint8_t v) { return put(v); }
  RawGguf& u32(uint32_t v) { return put(v); }
  RawGguf& u64(uint64_t v) { return put(v); }
  RawGguf& str(std::string_view text) {
    u64(text.size());
    for (char c : text) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  RawGguf& kv_type(std::string_view key, GgufType type) {
    return str(key).u32(static_cast<uint32_t>(type));
  }
  RawGguf& zeros(uint64_t n) {
    bytes_.resize(bytes_.size() + n);
    return *this;
  }
  RawGguf& pad_to(uint64_t alignment) {
    return zeros((alignment - size() % alignment) % alignment);
  }
  // name, n_dims, dims, type, offset
  RawGguf& tensor(std::string_view name, std::vector<uint64_t> dims, WeightType type,
                  uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(dims.size()));
    for (uint64_t d : dims) u64(d);
    return u32(static_cast<uint32_t>(type)).u64(offset);
  }

  uint64_t size() const { return bytes_.size(); }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  template <typename T>
  RawGguf& put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

// Parses a copy of exactly these bytes, so that ASan sees any read past the end.
GgufFile parse_copy(std::span<const std::byte> bytes, std::vector<std::byte>& storage) {
  storage.assign(bytes.begin(), bytes.end());
  storage.shrink_to_fit();
  return GgufFile::parse(storage);
}

std::vector<std::byte> pattern_bytes(size_t n, uint8_t seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return out;
}

// One value of every type, arrays of every element type, nested arrays.
std::vector<std::pair<std::string, GgufValue>> every_value_type() {
  using V = GgufValue;
  auto nested = [](std::vector<GgufValue> items) {
    return V::array(GgufType::kArray, std::move(items));
  };
  return {
      {"scalar.u8", uint8_t{200}},
      {"scalar.i8", int8_t{-100}},
      {"scalar.u16", uint16_t{60000}},
      {"scalar.i16", int16_t{-30000}},
      {"scalar.u32", uint32_t{4000000000u}},
      {"scalar.i32", int32_t{-2000000000}},
      {"scalar.f32", 1.5f},
      {"scalar.bool_true", true},
      {"scalar.bool_false", false},
      {"scalar.string", "h\xc3\xa9llo {{ bos_token }}\n"},
      {"scalar.empty_string", ""},
      {"scalar.u64", kU64Max},
      {"scalar.i64", std::numeric_limits<int64_t>::min()},
      {"scalar.f64", -0.125},
      {"array.u8", V::array(GgufType::kUint8, {uint8_t{0}, uint8_t{255}})},
      {"array.i8", V::array(GgufType::kInt8, {int8_t{-128}, int8_t{127}})},
      {"array.u16", V::array(GgufType::kUint16, {uint16_t{1}, uint16_t{65535}})},
      {"array.i16", V::array(GgufType::kInt16, {int16_t{-1}})},
      {"array.u32", V::array(GgufType::kUint32, {uint32_t{1}, uint32_t{2}, uint32_t{3}})},
      {"array.i32", V::i32_array({-1, 0, 1})},
      {"array.f32", V::f32_array({0.0f, -2.5f, 1e30f})},
      {"array.bool", V::array(GgufType::kBool, {true, false, true})},
      {"array.string", V::string_array({"a", "", std::string(300, 'z')})},
      {"array.u64", V::array(GgufType::kUint64, {kU64Max})},
      {"array.i64", V::array(GgufType::kInt64, {int64_t{-5}})},
      {"array.f64", V::array(GgufType::kFloat64, {1e-300, 2.0})},
      {"array.empty", V::array(GgufType::kInt32, {})},
      {"array.nested", nested({V::i32_array({1, 2}), V::i32_array({}), V::i32_array({3})})},
      {"array.nested_strings", nested({V::string_array({"x", "y"}), V::string_array({"z"})})},
      {"array.nested3", nested({nested({V::array(GgufType::kBool, {true})}), nested({})})},
      {"array.nested_empty", nested({})},
  };
}

struct Layout {
  uint32_t version;
  uint64_t alignment;
};

class GgufRoundTripTest : public testing::TestWithParam<Layout> {};

TEST_P(GgufRoundTripTest, EveryValueTypeAndTensorSurvives) {
  const Layout layout = GetParam();
  GgufWriter writer(layout.version, layout.alignment);
  const auto metadata = every_value_type();
  for (const auto& [key, value] : metadata) writer.set(key, value);
  struct TensorCase {
    std::string name;
    std::vector<uint64_t> dims;
    WeightType type;
    uint64_t n_bytes;
  };
  const std::vector<TensorCase> tensor_cases = {
      {"f32.weight", {4, 3}, WeightType::kF32, 48},
      {"f16.weight", {8}, WeightType::kF16, 16},
      {"q8_0.weight", {64, 2}, WeightType::kQ8_0, 2 * 2 * 34},
      {"q4_k.weight", {256, 1, 1, 2}, WeightType::kQ4_K, 2 * 144},
      {"q4_1.weight", {32}, WeightType::kQ4_1, 20},  // known, not computable: still readable
  };
  for (size_t i = 0; i < tensor_cases.size(); ++i) {
    const TensorCase& t = tensor_cases[i];
    writer.add_tensor_bytes(t.name, t.dims, t.type,
                            pattern_bytes(t.n_bytes, static_cast<uint8_t>(i)));
  }

  const std::vector<std::byte> bytes = writer.serialize();
  const GgufFile file = GgufFile::parse(bytes);

  EXPECT_EQ(file.version(), layout.version);
  EXPECT_EQ(file.alignment(), layout.alignment);
  EXPECT_EQ(file.data_offset() % layout.alignment, 0u);
  EXPECT_TRUE(file.path().empty());

  // general.alignment is written (first) only when it is not the default.
  size_t first = 0;
  if (layout.alignment != GgufFile::kDefaultAlignment) {
    ASSERT_FALSE(file.metadata().empty());
    EXPECT_EQ(file.metadata()[0].first, "general.alignment");
    EXPECT_EQ(file.metadata()[0].second, GgufValue(static_cast<uint32_t>(layout.alignment)));
    first = 1;
  } else {
    EXPECT_EQ(file.find("general.alignment"), nullptr);
  }
  ASSERT_EQ(file.metadata().size(), metadata.size() + first);
  for (size_t i = 0; i < metadata.size(); ++i) {
    EXPECT_EQ(file.metadata()[first + i].first, metadata[i].first);
    EXPECT_EQ(file.metadata()[first + i].second, metadata[i].second) << metadata[i].first;
    ASSERT_NE(file.find(metadata[i].first), nullptr);
    EXPECT_EQ(*file.find(metadata[i].first), metadata[i].second);
  }

  ASSERT_EQ(file.tensors().size(), tensor_cases.size());
  for (size_t i = 0; i < tensor_cases.size(); ++i) {
    const TensorCase& t = tensor_cases[i];
    const GgufTensorInfo* info = file.find_tensor(t.name);
    ASSERT_NE(info, nullptr) << t.name;
    EXPECT_EQ(info, &file.tensors()[i]);
    EXPECT_EQ(info->dims, t.dims);
    EXPECT_EQ(info->type, t.type);
    EXPECT_EQ(info->n_bytes, t.n_bytes);
    EXPECT_EQ(info->offset % layout.alignment, 0u);
    EXPECT_EQ(static_cast<uint64_t>(info->data.data() - bytes.data()),
              file.data_offset() + info->offset);
    const std::vector<std::byte> expected = pattern_bytes(t.n_bytes, static_cast<uint8_t>(i));
    ASSERT_EQ(info->data.size(), expected.size());
    EXPECT_EQ(std::memcmp(info->data.data(), expected.data(), expected.size()), 0) << t.name;
  }
  EXPECT_EQ(file.find_tensor("absent"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(VersionsAndAlignments, GgufRoundTripTest,
                         testing::Values(Layout{3, 32}, Layout{2, 32}, Layout{3, 1}, Layout{2, 8},
                                         Layout{3, 64}, Layout{3, 4096}),
                         [](const testing::TestParamInfo<Layout>& info) {
                           return str_cat("v", info.param.version, "_align", info.param.alignment);
                         });

TEST(GgufFileTest, TypedLookupsConvertOrDecline) {
  GgufWriter writer;
  writer.set("n", uint32_t{7});
  writer.set("neg", int32_t{-1});
  writer.set("eps", 1e-5f);
  writer.set("flag", true);
  writer.set("name", "tiny");
  const std::vector<std::byte> bytes = writer.serialize();
  const GgufFile file = GgufFile::parse(bytes);
  EXPECT_EQ(file.find_int("n"), 7);
  EXPECT_EQ(file.find_uint("n"), 7u);
  EXPECT_EQ(file.find_uint("neg"), std::nullopt);
  EXPECT_EQ(file.find_float("n"), 7.0);
  EXPECT_FLOAT_EQ(static_cast<float>(file.find_float("eps").value()), 1e-5f);
  EXPECT_EQ(file.find_bool("flag"), true);
  EXPECT_EQ(file.find_bool("n"), std::nullopt);
  ASSERT_NE(file.find_string("name"), nullptr);
  EXPECT_EQ(*file.find_string("name"), "tiny");
  EXPECT_EQ(file.find_string("n"), nullptr);
  EXPECT_EQ(file.find_int("absent"), std::nullopt);
  EXPECT_EQ(file.find_string("absent"), nullptr);
  EXPECT_TRUE(file.tensors().empty());
}

TEST(GgufFileTest, OpenMapsAFileFromDisk) {
  const std::string path = str_cat(testing::TempDir(), "gguf_file_test_", ::getpid(), ".gguf");
  GgufWriter writer;
  writer.set("general.name", "disk");
  writer.add_tensor_bytes("w", {8}, WeightType::kF32, pattern_bytes(32, 9));
  writer.write(path);
  {
    GgufFile file = GgufFile::open(path);
    EXPECT_EQ(file.path(), path);
    EXPECT_EQ(*file.find_string("general.name"), "disk");
    ASSERT_EQ(file.tensors().size(), 1u);
    EXPECT_EQ(std::memcmp(file.tensors()[0].data.data(), pattern_bytes(32, 9).data(), 32), 0);
    // Moving the file keeps tensor data valid: the map does not move.
    const GgufFile moved = std::move(file);
    EXPECT_EQ(std::memcmp(moved.tensors()[0].data.data(), pattern_bytes(32, 9).data(), 32), 0);
  }
  std::filesystem::remove(path);
  EXPECT_THROW(GgufFile::open(path), std::runtime_error);
}

TEST(GgufFileTest, MetadataOnlyFileNeedsNoPadding) {
  // A header with no tensors may end anywhere; its data section would start
  // past the end of the file, which is fine as nothing lives there.
  RawGguf raw = RawGguf::header(0, 1);
  raw.kv_type("a", GgufType::kUint8).u8(1);
  std::vector<std::byte> storage;
  const GgufFile file = parse_copy(raw.bytes(), storage);
  EXPECT_EQ(file.data_offset(), 64u);
  EXPECT_EQ(file.find_uint("a"), 1u);
}

TEST(GgufFileTest, TensorsMayBeStoredInAnyOrderWithGaps) {
  RawGguf raw = RawGguf::header(2, 0);
  raw.tensor("late", {8}, WeightType::kF32, 128).tensor("early", {8}, WeightType::kF32, 0);
  raw.pad_to(32);
  const uint64_t data_offset = raw.size();
  raw.zeros(128 + 32);
  std::vector<std::byte> storage;
  const GgufFile file = parse_copy(raw.bytes(), storage);
  EXPECT_EQ(file.data_offset(), data_offset);
  EXPECT_EQ(file.tensors()[0].name, "late");
  EXPECT_EQ(file.tensors()[0].n_elems, 8u);
}

// ---- malformed files --------------------------------------------------------

struct MalformedCase {
  std::string name;
  std::vector<std::byte> bytes;
  std::string message;  // a substring of problem()
  uint64_t offset;
};

// Appends a case built by `build`, which returns the expected offset.
template <typename Build>
void add_case(std::vector<MalformedCase>& cases, std::string name, std::string message,
              Build build) {
  RawGguf raw;
  uint64_t offset = build(raw);
  cases.push_back({std::move(name), raw.bytes(), std::move(message), offset});
}

std::vector<MalformedCase> malformed_cases() {
  std::vector<MalformedCase> cases;
  using T = GgufType;
  using W = WeightType;

  // Header.
  add_case(cases, "empty file", "truncated file: magic needs 4 bytes but 0 remain",
           [](RawGguf&) { return 0; });
  add_case(cases, "wrong magic", "not a GGUF file (magic 0x4c4d4747", [](RawGguf& r) {
    r.u32(0x4c4d4747).u32(3).u64(0).u64(0);
    return 0;
  });
  add_case(cases, "version 1", "GGUF version 1 is not supported (only versions 2 and 3)",
           [](RawGguf& r) {
             r = RawGguf::header(0, 0, 1);
             return 4;
           });
  add_case(cases, "version 4", "unsupported GGUF version 4", [](RawGguf& r) {
    r = RawGguf::header(0, 0, 4);
    return 4;
  });
  add_case(cases, "big endian", "big-endian GGUF files are not supported", [](RawGguf& r) {
    r = RawGguf::header(0, 0, 0x03000000);
    return 4;
  });
  add_case(cases, "truncated version", "truncated file: version needs 4 bytes but 2 remain",
           [](RawGguf& r) {
             r.u32(GgufFile::kMagic).zeros(2);
             return 4;
           });
  add_case(cases, "truncated tensor count",
           "truncated file: tensor count needs 8 bytes but 3 remain", [](RawGguf& r) {
             r.u32(GgufFile::kMagic).u32(3).zeros(3);
             return 8;
           });
  add_case(cases, "absurd tensor count",
           "tensor count 1099511627776 is more than the 8 bytes remaining could hold",
           [](RawGguf& r) {
             r.u32(GgufFile::kMagic).u32(3).u64(uint64_t{1} << 40).u64(0);
             return 8;
           });
  add_case(cases, "tensor count needing more bytes than left",
           "tensor count 2 is more than the 48 bytes remaining could hold", [](RawGguf& r) {
             r = RawGguf::header(2, 0);
             r.tensor("t", {1}, W::kF32, 0);  // 33 bytes: one tensor info fits, two do not
             r.zeros(7);
             return 8;
           });
  add_case(cases, "absurd metadata count",
           "metadata key count 18446744073709551615 is more than the 0 bytes remaining",
           [](RawGguf& r) {
             r = RawGguf::header(0, kU64Max);
             return 16;
           });

  // Metadata.
  add_case(cases, "absurd key length", "metadata key length 1000000 exceeds the 12 bytes remaining",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.u64(1000000).zeros(12);
             return 24;
           });
  add_case(cases, "key length 2^64-1", "metadata key length 18446744073709551615 exceeds",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.u64(kU64Max).zeros(12);
             return 24;
           });
  add_case(cases, "truncated key", "truncated file: metadata key needs 8 bytes but 5 remain",
           [](RawGguf& r) {
             r = RawGguf::header(0, 2);
             r.kv_type("a", T::kString).str(std::string(20, 'x')).zeros(5);
             return 24 + 9 + 4 + 8 + 20;
           });
  add_case(cases, "unknown value type", "metadata 'a' has unknown value type 13", [](RawGguf& r) {
    r = RawGguf::header(0, 1);
    r.str("a").u32(13).zeros(8);
    return 24 + 9;
  });
  add_case(cases, "invalid bool", "metadata 'flag' has invalid bool byte 2", [](RawGguf& r) {
    r = RawGguf::header(0, 1);
    r.kv_type("flag", T::kBool).u8(2);
    return 24 + 12 + 4;
  });
  add_case(cases, "invalid bool in array", "metadata 'b' has invalid bool byte 255",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("b", T::kArray).u32(static_cast<uint32_t>(T::kBool)).u64(2).u8(1).u8(255);
             return 24 + 9 + 4 + 4 + 8 + 1;
           });
  add_case(cases, "truncated scalar",
           "truncated file: metadata 'x' uint64 value needs 8 bytes but 3 remain", [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("x", T::kUint64).zeros(3);
             return 24 + 13;
           });
  add_case(cases, "absurd string value",
           "metadata 's' string value length 4294967296 exceeds the 3 bytes remaining",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("s", T::kString).u64(uint64_t{1} << 32).zeros(3);
             return 24 + 13;
           });
  add_case(
      cases, "absurd array length",
      "metadata 'arr' array of 1000000 uint32 items cannot fit in the 16 bytes remaining",
      [](RawGguf& r) {
        r = RawGguf::header(0, 1);
        r.kv_type("arr", T::kArray).u32(static_cast<uint32_t>(T::kUint32)).u64(1000000).zeros(16);
        return 24 + 15 + 4;
      });
  add_case(cases, "array length 2^64-1 of strings",
           "metadata 'arr' array of 18446744073709551615 string items cannot fit", [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("arr", T::kArray).u32(static_cast<uint32_t>(T::kString)).u64(kU64Max);
             return 24 + 15 + 4;
           });
  add_case(cases, "array of absurd arrays",
           "metadata 'n' array of 2 array items cannot fit in the 20 bytes remaining",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("n", T::kArray).u32(static_cast<uint32_t>(T::kArray)).u64(2).zeros(20);
             return 24 + 13 + 4;
           });
  add_case(cases, "unknown array element type", "metadata 'arr' has unknown array element type 99",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("arr", T::kArray).u32(99).u64(0);
             return 24 + 15;
           });
  add_case(cases, "arrays nested too deep", "metadata 'deep' nests arrays deeper than 8",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("deep", T::kArray);
             uint64_t at = 0;
             for (int depth = 0; depth < GgufValueReader::kMaxArrayDepth; ++depth) {
               at = r.size();
               r.u32(static_cast<uint32_t>(T::kArray)).u64(1);
             }
             r.zeros(64);
             return at;
           });
  add_case(cases, "duplicate key", "duplicate metadata key 'k'", [](RawGguf& r) {
    r = RawGguf::header(0, 2);
    r.kv_type("k", T::kUint8).u8(1);
    r.kv_type("k", T::kUint8).u8(2);
    return 24 + 14;
  });
  add_case(cases, "alignment zero", "general.alignment 0 (uint32) is not a nonzero power of two",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("general.alignment", T::kUint32).u32(0);
             return 24 + 25 + 4;
           });
  add_case(cases, "alignment three", "general.alignment 3 (uint32) is not a nonzero power of two",
           [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("general.alignment", T::kUint32).u32(3);
             return 24 + 25 + 4;
           });
  add_case(cases, "alignment negative",
           "general.alignment -32 (int32) is not a nonzero power of two", [](RawGguf& r) {
             r = RawGguf::header(0, 1);
             r.kv_type("general.alignment", T::kInt32).u32(static_cast<uint32_t>(-32));
             return 24 + 25 + 4;
           });
  add_case(cases, "alignment string",
           "general.alignment \"32\" (string) is not a nonzero power of two", [](RawGguf& r) {
             r = RawGguf::header(0, 2);
             r.kv_type("general.name", T::kString).str("x");
             uint64_t at = r.size() + 25 + 4;
             r.kv_type("general.alignment", T::kString).str("32");
             return at;
           });

  // Tensor infos.
  add_case(cases, "absurd tensor name", "tensor name length 65536 exceeds the 24 bytes remaining",
           [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.u64(65536).zeros(24);
             return 24;
           });
  add_case(cases, "zero dims", "tensor 't' has 0 dimensions (expected 1 to 4)", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.str("t").u32(0).zeros(32);
    return 33;
  });
  add_case(cases, "five dims", "tensor 't' has 5 dimensions (expected 1 to 4)", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.tensor("t", {1, 1, 1, 1, 1}, W::kF32, 0).zeros(32);
    return 33;
  });
  add_case(cases, "zero dimension", "tensor 't' dimension 1 is 0", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.tensor("t", {4, 0}, W::kF32, 0).zeros(32);
    return 33 + 4 + 8;
  });
  add_case(cases, "element count overflow",
           "tensor 't' dimension 1 (4294967296) makes the element count overflow", [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, W::kF32, 0).zeros(32);
             return 33 + 4 + 8;
           });
  add_case(cases, "element count past int64",
           "tensor 't' dimension 0 (9223372036854775808) makes the element count overflow",
           [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {uint64_t{1} << 63}, W::kF32, 0).zeros(32);
             return 33 + 4;
           });
  add_case(cases, "byte size overflow",
           "tensor 't' of 4611686018427387904 f32 elements has a byte size that overflows",
           [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {uint64_t{1} << 62}, W::kF32, 0).zeros(32);
             return 33 + 4 + 8;
           });
  add_case(cases, "unknown tensor type", "tensor 't' has unknown type id 99", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.tensor("t", {4}, static_cast<W>(99), 0).zeros(32);
    return 33 + 4 + 8;
  });
  add_case(cases, "removed tensor type", "tensor 't' has unknown type id 4", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.tensor("t", {32}, static_cast<W>(4), 0).zeros(32);  // ggml's retired Q4_2
    return 33 + 4 + 8;
  });
  add_case(
      cases, "rows not whole blocks",
      "tensor 't' of type q4_0 has rows of 33 elements, not a whole number of 32-element blocks",
      [](RawGguf& r) {
        r = RawGguf::header(1, 0);
        r.tensor("t", {33, 32}, W::kQ4_0, 0).zeros(32);
        return 33 + 4 + 16;
      });
  add_case(cases, "unaligned tensor offset",
           "tensor 't' data offset 16 is not a multiple of the alignment 32", [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {4}, W::kF32, 16).pad_to(32).zeros(64);
             return 49;
           });
  add_case(cases, "offset unaligned for custom alignment",
           "tensor 't' data offset 32 is not a multiple of the alignment 64", [](RawGguf& r) {
             r = RawGguf::header(1, 1);
             r.kv_type("general.alignment", T::kUint32).u32(64);
             uint64_t at = r.size() + 9 + 4 + 8 + 4;
             r.tensor("t", {4}, W::kF32, 32).pad_to(64).zeros(64);
             return at;
           });
  add_case(cases, "truncated tensor info",
           "truncated file: tensor 't' data offset needs 8 bytes but 4 remain", [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.str("t").u32(1).u64(4).u32(0).zeros(4);
             return 49;
           });
  add_case(cases, "duplicate tensor name", "duplicate tensor name 'w'", [](RawGguf& r) {
    r = RawGguf::header(2, 0);
    r.tensor("w", {4}, W::kF32, 0).tensor("w", {4}, W::kF32, 32).pad_to(32).zeros(64);
    return 57;
  });

  // Tensor data.
  add_case(cases, "tensor outside the file",
           "tensor 't' data [64, 80) lies outside the file (size 72)", [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {4}, W::kF32, 0).pad_to(32).zeros(8);
             return 49;
           });
  add_case(cases, "data section past the end",
           "tensor 't' data [64, 80) lies outside the file (size 57)", [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {4}, W::kF32, 0);
             return 49;
           });
  add_case(cases, "tensor offset overflows",
           "tensor 't' data of 16 bytes at 64 + 18446744073709551584 lies outside the file",
           [](RawGguf& r) {
             r = RawGguf::header(1, 0);
             r.tensor("t", {4}, W::kF32, kU64Max - 31).pad_to(32).zeros(32);
             return 49;
           });
  add_case(cases, "tensor end overflows", "lies outside the file (size 96)", [](RawGguf& r) {
    r = RawGguf::header(1, 0);
    r.tensor("t", {uint64_t{1} << 61}, W::kF32, kU64Max - 127).pad_to(32).zeros(32);
    return 49;
  });
  add_case(cases, "second tensor outside",
           "tensor 'b' data [128, 192) lies outside the file (size 160)", [](RawGguf& r) {
             r = RawGguf::header(2, 0);
             r.tensor("a", {4}, W::kF32, 0).tensor("b", {16}, W::kF32, 32).pad_to(32).zeros(64);
             return 57 + 33 - 8;
           });
  add_case(cases, "tensors overlap",
           "tensor 'b' data [128, 192) overlaps tensor 'a' data [96, 224)", [](RawGguf& r) {
             r = RawGguf::header(2, 0);
             r.tensor("a", {32}, W::kF32, 0).tensor("b", {16}, W::kF32, 32).pad_to(32).zeros(128);
             return 57 + 33 - 8;
           });
  add_case(cases, "tensors share an offset",
           "tensor 'b' data [96, 112) overlaps tensor 'a' data [96, 112)", [](RawGguf& r) {
             r = RawGguf::header(2, 0);
             r.tensor("a", {4}, W::kF32, 0).tensor("b", {4}, W::kF32, 0).pad_to(32).zeros(32);
             return 57 + 33 - 8;
           });
  add_case(cases, "overlap found in file order",
           "tensor 'a' data [128, 144) overlaps tensor 'b' data [96, 160)", [](RawGguf& r) {
             r = RawGguf::header(2, 0);
             r.tensor("a", {4}, W::kF32, 32).tensor("b", {16}, W::kF32, 0).pad_to(32).zeros(64);
             return 49;
           });
  return cases;
}

TEST(GgufMalformedTest, EachProblemIsNamedWithItsOffset) {
  for (const MalformedCase& c : malformed_cases()) {
    SCOPED_TRACE(c.name);
    std::vector<std::byte> storage;
    try {
      parse_copy(c.bytes, storage);
      ADD_FAILURE() << "parsed without error";
    } catch (const GgufError& e) {
      EXPECT_NE(e.problem().find(c.message), std::string::npos)
          << "problem: " << e.problem() << "\nwanted:  " << c.message;
      EXPECT_EQ(e.offset(), c.offset) << e.what();
      EXPECT_EQ(std::string(e.what()), str_cat("gguf: ", e.problem(), " at offset ", e.offset()));
    }
  }
}

TEST(GgufMalformedTest, TensorCountPastTheLimit) {
  const uint64_t n = GgufFile::kMaxTensors + 1;
  RawGguf raw = RawGguf::header(n, 0);
  raw.zeros(n * 32);  // enough bytes that only the limit can object
  std::vector<std::byte> storage;
  try {
    parse_copy(raw.bytes(), storage);
    FAIL() << "parsed";
  } catch (const GgufError& e) {
    EXPECT_EQ(e.problem(), str_cat("tensor count ", n, " exceeds the limit of ", n - 1));
    EXPECT_EQ(e.offset(), 8u);
  }
}

TEST(GgufMalformedTest, MetadataKeyCountPastTheLimit) {
  const uint64_t n = GgufFile::kMaxMetadataKeys + 1;
  RawGguf raw = RawGguf::header(0, n);
  raw.zeros(n * 13);
  std::vector<std::byte> storage;
  try {
    parse_copy(raw.bytes(), storage);
    FAIL() << "parsed";
  } catch (const GgufError& e) {
    EXPECT_EQ(e.problem(), str_cat("metadata key count ", n, " exceeds the limit of ", n - 1));
    EXPECT_EQ(e.offset(), 16u);
  }
}

TEST(GgufMalformedTest, ArrayItemsPastTheLimit) {
  // Enough bytes that only the limit objects; refused before anything is
  // allocated for the items.
  const uint64_t n = GgufValueReader::kMaxArrayItems + 1;
  RawGguf raw = RawGguf::header(0, 1);
  raw.kv_type("a", GgufType::kArray).u32(static_cast<uint32_t>(GgufType::kUint8));
  const uint64_t count_at = raw.size();
  raw.u64(n).zeros(n);
  std::vector<std::byte> storage;
  try {
    parse_copy(raw.bytes(), storage);
    FAIL() << "parsed";
  } catch (const GgufError& e) {
    EXPECT_EQ(e.problem(),
              str_cat("metadata 'a' array of ", n, " items takes the file past the limit of ",
                      n - 1, " array items"));
    EXPECT_EQ(e.offset(), count_at);
  }
}

// A small file with something of everything, for truncation.
std::vector<std::byte> small_valid_file() {
  GgufWriter writer(3, 16);
  writer.set("general.architecture", "llama");
  writer.set("llama.block_count", uint32_t{1});
  writer.set("flag", true);
  writer.set("tokens", GgufValue::string_array({"<s>", "a", "bc"}));
  writer.set("nested", GgufValue::array(GgufType::kArray, {GgufValue::i32_array({1, 2})}));
  writer.add_tensor_bytes("a.weight", {4, 2}, WeightType::kF32, pattern_bytes(32, 1));
  writer.add_tensor_bytes("b.weight", {32}, WeightType::kQ8_0, pattern_bytes(34, 2));
  return writer.serialize();
}

TEST(GgufMalformedTest, TruncationAtEveryByteThrows) {
  const std::vector<std::byte> whole = small_valid_file();
  std::vector<std::byte> storage;
  const GgufFile file = parse_copy(whole, storage);
  uint64_t data_end = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    data_end = std::max(data_end, file.data_offset() + t.offset + t.n_bytes);
  }
  ASSERT_LT(data_end, whole.size());  // the last tensor is padded; cutting padding is harmless

  for (size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE(str_cat("truncated to ", n, " of ", whole.size(), " bytes"));
    std::span<const std::byte> prefix(whole.data(), n);
    if (n < data_end) {
      EXPECT_THROW(parse_copy(prefix, storage), GgufError);
    } else {
      EXPECT_NO_THROW(parse_copy(prefix, storage));
    }
  }
}

}  // namespace
}  // namespace strata
