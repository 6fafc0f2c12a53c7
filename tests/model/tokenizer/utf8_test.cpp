#include "model/tokenizer/utf8.h"

#include <gtest/gtest.h>

#include "model/tokenizer/byte_level.h"

namespace strata {
namespace {

using utf8::SequenceStatus;

TEST(Utf8, ClassifiesSequences) {
  const auto check = [](std::string_view bytes) { return utf8::check_sequence(bytes); };
  EXPECT_EQ(check("a").status, SequenceStatus::kComplete);
  EXPECT_EQ(check("\xC3\xA9").n_bytes, 2u);
  EXPECT_EQ(check("\xF0\x9F\x98\x80").n_bytes, 4u);
  EXPECT_EQ(check("\xF0\x9F").status, SequenceStatus::kIncomplete);
  EXPECT_EQ(check("\x80").status, SequenceStatus::kInvalid);              // stray continuation
  EXPECT_EQ(check("\xC0\xAF").status, SequenceStatus::kInvalid);          // overlong lead
  EXPECT_EQ(check("\xE0\x80").status, SequenceStatus::kInvalid);          // overlong
  EXPECT_EQ(check("\xED\xA0\x80").status, SequenceStatus::kInvalid);      // surrogate
  EXPECT_EQ(check("\xF4\x90\x80\x80").status, SequenceStatus::kInvalid);  // > U+10FFFF
  EXPECT_EQ(check("\xF0\x9F"
                  "a")
                .n_bytes,
            2u);  // maximal subpart before the 'a'
}

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(utf8::sanitize("a\xF0\x9F"
                           "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(utf8::sanitize("\xE0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8::sanitize("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_TRUE(utf8::is_valid("ok \xC3\xA9"));
  EXPECT_FALSE(utf8::is_valid("\xC3"));
}

TEST(ByteLevel, MapsEveryByteAndBack) {
  EXPECT_EQ(byte_level_encode(" "), "\xC4\xA0");   // Ġ
  EXPECT_EQ(byte_level_encode("\n"), "\xC4\x8A");  // Ċ
  EXPECT_EQ(byte_level_encode("A"), "A");
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
  EXPECT_EQ(byte_level_decode(byte_level_encode(all)), all);
}

}  // namespace
}  // namespace strata
