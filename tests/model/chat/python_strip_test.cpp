#include "model/chat/python_strip.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(PythonStripTest, StripsAsciiWhitespaceFromBothEnds) {
  EXPECT_EQ(python_strip("  a b \t\n"), "a b");
  EXPECT_EQ(python_strip("\r\n\v\fx\x1c\x1d\x1e\x1f"), "x");
  EXPECT_EQ(python_strip(""), "");
  EXPECT_EQ(python_strip(" \n\t "), "");
}

TEST(PythonStripTest, StripsUnicodeWhitespace) {
  EXPECT_EQ(python_strip("\u3000ideographic\u00a0"), "ideographic");
  EXPECT_EQ(python_strip("\u2003em\u2028\u0085"), "em");
  EXPECT_EQ(python_strip("\u1680\u2000\u200a\u2029\u202f\u205fx\u205f"), "x");
}

TEST(PythonStripTest, KeepsCharactersThatAreNotWhitespace) {
  // Python's str.isspace() is false for these, so str.strip() keeps them.
  EXPECT_EQ(python_strip("\u200bzero\u200b"), "\u200bzero\u200b");
  EXPECT_EQ(python_strip("\ufeffbom"), "\ufeffbom");
  EXPECT_EQ(python_strip("\u180emongolian"), "\u180emongolian");
  EXPECT_EQ(python_strip("é ü 世界"), "é ü 世界");
  // A lone continuation byte or a truncated sequence is not whitespace.
  EXPECT_EQ(python_strip("\x80 x \xe2\x80"), "\x80 x \xe2\x80");
}

TEST(PythonStripTest, StripsOnlyTheGivenCharacters) {
  EXPECT_EQ(python_strip("\n\n a \n", "\n"), " a ");
  EXPECT_EQ(python_lstrip("\n\nx\n", "\n"), "x\n");
  EXPECT_EQ(python_rstrip("\n\nx\n", "\n"), "\n\nx");
  EXPECT_EQ(python_strip("\n\n", "\n"), "");
  EXPECT_EQ(python_lstrip("", "\n"), "");
}

}  // namespace
}  // namespace strata
