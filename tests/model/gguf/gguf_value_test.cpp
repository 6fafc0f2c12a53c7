#include "model/gguf/gguf_value.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace strata {
namespace {

TEST(GgufValueTest, TypeFollowsTheStoredAlternative) {
  EXPECT_EQ(GgufValue(uint8_t{1}).type(), GgufType::kUint8);
  EXPECT_EQ(GgufValue(int8_t{1}).type(), GgufType::kInt8);
  EXPECT_EQ(GgufValue(uint16_t{1}).type(), GgufType::kUint16);
  EXPECT_EQ(GgufValue(int16_t{1}).type(), GgufType::kInt16);
  EXPECT_EQ(GgufValue(uint32_t{1}).type(), GgufType::kUint32);
  EXPECT_EQ(GgufValue(int32_t{1}).type(), GgufType::kInt32);
  EXPECT_EQ(GgufValue(1.0f).type(), GgufType::kFloat32);
  EXPECT_EQ(GgufValue(true).type(), GgufType::kBool);
  EXPECT_EQ(GgufValue("text").type(), GgufType::kString);
  EXPECT_EQ(GgufValue(std::string("text")).type(), GgufType::kString);
  EXPECT_EQ(GgufValue::i32_array({1}).type(), GgufType::kArray);
  EXPECT_EQ(GgufValue(uint64_t{1}).type(), GgufType::kUint64);
  EXPECT_EQ(GgufValue(int64_t{1}).type(), GgufType::kInt64);
  EXPECT_EQ(GgufValue(1.0).type(), GgufType::kFloat64);
}

TEST(GgufValueTest, TypeNamesIdsAndSizes) {
  EXPECT_EQ(gguf_type_name(GgufType::kUint8), "uint8");
  EXPECT_EQ(gguf_type_name(GgufType::kFloat64), "float64");
  EXPECT_EQ(gguf_type_name(static_cast<GgufType>(99)), "unknown");
  EXPECT_EQ(gguf_type_from_id(12), GgufType::kFloat64);
  EXPECT_EQ(gguf_type_from_id(13), std::nullopt);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kBool), 1u);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kInt16), 2u);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kFloat32), 4u);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kUint64), 8u);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kString), 0u);
  EXPECT_EQ(gguf_scalar_bytes(GgufType::kArray), 0u);
}

TEST(GgufValueTest, IntegersConvertOnlyWhenTheyFit) {
  EXPECT_EQ(GgufValue(uint32_t{7}).as_int(), 7);
  EXPECT_EQ(GgufValue(int8_t{-1}).as_int(), -1);
  EXPECT_EQ(GgufValue(int8_t{-1}).as_uint(), std::nullopt);
  EXPECT_EQ(GgufValue(int64_t{5}).as_uint(), 5u);
  EXPECT_EQ(GgufValue(std::numeric_limits<uint64_t>::max()).as_int(), std::nullopt);
  EXPECT_EQ(GgufValue(std::numeric_limits<uint64_t>::max()).as_uint(),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(GgufValue(true).as_int(), std::nullopt);
  EXPECT_EQ(GgufValue(1.0f).as_int(), std::nullopt);
  EXPECT_EQ(GgufValue("7").as_int(), std::nullopt);
}

TEST(GgufValueTest, FloatsReadFromAnyNumber) {
  EXPECT_EQ(GgufValue(0.5f).as_float(), 0.5);
  EXPECT_EQ(GgufValue(0.25).as_float(), 0.25);
  EXPECT_EQ(GgufValue(int16_t{-3}).as_float(), -3.0);
  EXPECT_EQ(GgufValue(true).as_float(), std::nullopt);
  EXPECT_EQ(GgufValue("1.0").as_float(), std::nullopt);
}

TEST(GgufValueTest, BoolStringAndArrayAccessorsMatchOnlyTheirType) {
  EXPECT_EQ(GgufValue(false).as_bool(), false);
  EXPECT_EQ(GgufValue(uint8_t{1}).as_bool(), std::nullopt);
  ASSERT_NE(GgufValue("abc").as_string(), nullptr);
  EXPECT_EQ(*GgufValue("abc").as_string(), "abc");
  EXPECT_EQ(GgufValue(uint8_t{1}).as_string(), nullptr);
  EXPECT_EQ(GgufValue("abc").as_array(), nullptr);
  const GgufValue array = GgufValue::f32_array({1.0f, 2.0f});
  ASSERT_NE(array.as_array(), nullptr);
  EXPECT_EQ(array.as_array()->element_type, GgufType::kFloat32);
  EXPECT_EQ(array.as_array()->items.size(), 2u);
}

TEST(GgufValueTest, WholeArrayReads) {
  EXPECT_EQ(GgufValue::string_array({"a", "b"}).as_string_array(),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(GgufValue::f32_array({0.5f, -1.0f}).as_f32_array(), (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(GgufValue::i32_array({-1, 2}).as_i32_array(), (std::vector<int32_t>{-1, 2}));
  // Items convert like scalars do.
  EXPECT_EQ(GgufValue::array(GgufType::kUint8, {uint8_t{1}, uint8_t{2}}).as_i32_array(),
            (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(GgufValue::i32_array({3}).as_f32_array(), (std::vector<float>{3.0f}));
  EXPECT_EQ(GgufValue::array(GgufType::kUint32, {uint32_t{1u << 31}}).as_i32_array(), std::nullopt);
  EXPECT_EQ(GgufValue::string_array({"a"}).as_f32_array(), std::nullopt);
  EXPECT_EQ(GgufValue::i32_array({1}).as_string_array(), std::nullopt);
  EXPECT_EQ(GgufValue(int32_t{1}).as_i32_array(), std::nullopt);
  EXPECT_EQ(GgufValue::string_array({}).as_string_array(), std::vector<std::string>{});
}

TEST(GgufValueTest, ArrayRejectsItemsOfAnotherType) {
  EXPECT_THROW(GgufValue::array(GgufType::kInt32, {int32_t{1}, uint32_t{2}}),
               std::invalid_argument);
  EXPECT_NO_THROW(GgufValue::array(GgufType::kArray, {GgufValue::i32_array({1})}));
}

TEST(GgufValueTest, EqualityComparesTypeAndContents) {
  EXPECT_EQ(GgufValue(uint32_t{1}), GgufValue(uint32_t{1}));
  EXPECT_NE(GgufValue(uint32_t{1}), GgufValue(int32_t{1}));
  EXPECT_EQ(GgufValue::string_array({"a"}), GgufValue::string_array({"a"}));
  EXPECT_NE(GgufValue::string_array({"a"}), GgufValue::string_array({"b"}));
  EXPECT_NE(GgufValue::array(GgufType::kInt32, {}), GgufValue::array(GgufType::kUint32, {}));
}

TEST(GgufValueTest, DescribeIsShortAndReadable) {
  EXPECT_EQ(GgufValue(uint8_t{65}).describe(), "65");
  EXPECT_EQ(GgufValue(int8_t{-2}).describe(), "-2");
  EXPECT_EQ(GgufValue(std::numeric_limits<uint64_t>::max()).describe(), "18446744073709551615");
  EXPECT_EQ(GgufValue(true).describe(), "true");
  EXPECT_EQ(GgufValue(1e-5f).describe(), "1e-05");
  EXPECT_EQ(GgufValue(500000.0f).describe(), "500000");
  EXPECT_EQ(GgufValue(0.1).describe(), "0.1");
  EXPECT_EQ(GgufValue("say \"hi\"\n\x01").describe(), R"("say \"hi\"\n\x01")");
  EXPECT_EQ(GgufValue(std::string(100, 'x')).describe(),
            "\"" + std::string(GgufValue::kDescribeMaxChars, 'x') + "\"...");
  EXPECT_EQ(GgufValue::string_array({"a", "b", "c"}).describe(), "[string x 3]");
  EXPECT_EQ(GgufValue::array(GgufType::kArray, {GgufValue::i32_array({})}).describe(),
            "[array x 1]");
}

}  // namespace
}  // namespace strata
