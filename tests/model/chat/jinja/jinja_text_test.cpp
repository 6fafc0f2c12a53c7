#include "model/chat/jinja/jinja_text.h"

#include <gtest/gtest.h>

namespace strata::jinja {
namespace {

using Parts = std::vector<std::string>;

TEST(JinjaTextTest, SplitsAsPython) {
  EXPECT_EQ(text_split(" a b  c ", std::nullopt, -1), (Parts{"a", "b", "c"}));
  EXPECT_EQ(text_split(" a b  c ", std::nullopt, 1), (Parts{"a", "b  c "}));
  EXPECT_EQ(text_split("a,b,,c", ",", -1), (Parts{"a", "b", "", "c"}));
  EXPECT_EQ(text_split("a,b,c", ",", 1), (Parts{"a", "b,c"}));
  EXPECT_EQ(text_split("", ",", -1), (Parts{""}));
  EXPECT_EQ(text_split("", std::nullopt, -1), (Parts{}));
  EXPECT_EQ(text_rsplit("a,b,c", ",", 1), (Parts{"a,b", "c"}));
  EXPECT_EQ(text_rsplit(" a b c ", std::nullopt, 1), (Parts{" a b", "c"}));
  EXPECT_EQ(text_split("x</think>y</think>z", "</think>", -1), (Parts{"x", "y", "z"}));
  EXPECT_EQ(text_splitlines("a\nb\r\nc\u2028d\n"), (Parts{"a", "b", "c", "d"}));
}

TEST(JinjaTextTest, StripsAsPython) {
  EXPECT_EQ(text_strip("\u3000 x \n", std::nullopt, StripSide::kBoth), "x");
  EXPECT_EQ(text_strip("\n\nx\n", "\n", StripSide::kLeft), "x\n");
  EXPECT_EQ(text_strip("xxhixx", "x", StripSide::kRight), "xxhi");
  EXPECT_EQ(text_strip("éaé", "é", StripSide::kBoth), "a");
}

TEST(JinjaTextTest, ChangesCaseAsPython) {
  EXPECT_EQ(text_lower("ÉCOLE Ab"), "école ab");
  EXPECT_EQ(text_upper("straße x"), "STRASSE X");
  EXPECT_EQ(text_title("hello wORLD it's"), "Hello World It'S");
  EXPECT_EQ(text_capitalize("hELLO World"), "Hello world");
}

TEST(JinjaTextTest, ReplacesCountsAndFinds) {
  EXPECT_EQ(text_replace("aaa", "a", "b", 2), "bba");
  EXPECT_EQ(text_replace("ab", "", "-", -1), "-a-b-");
  EXPECT_EQ(text_count("abcabc", "bc"), 2);
  EXPECT_EQ(text_count("abc", ""), 4);
  EXPECT_EQ(text_find("éab", "b", false), 2);
  EXPECT_EQ(text_find("abab", "b", true), 3);
  EXPECT_EQ(text_find("ab", "z", false), -1);
}

}  // namespace
}  // namespace strata::jinja
