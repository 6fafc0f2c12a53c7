#include "engine/sampler/stop_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/sampling/xoshiro256.h"

namespace strata {
namespace {

// What a client receives: the concatenated text, and whether and on which stop string
// the stream stopped. `flush` is called when the deltas run out without a stop.
struct Stream {
  std::string text;
  bool stopped = false;
  int matched_stop = -1;
  bool operator==(const Stream&) const = default;
};

Stream run(const std::vector<std::string>& stops, const std::vector<std::string>& deltas) {
  StopMatcher matcher(stops);
  Stream stream;
  for (const std::string& delta : deltas) {
    const StopMatchResult result = matcher.feed(delta);
    stream.text += result.text;
    if (result.stopped) {
      stream.stopped = true;
      stream.matched_stop = result.matched_stop;
      EXPECT_EQ(matcher.flush(), "");
      return stream;
    }
  }
  stream.text += matcher.flush();
  return stream;
}

TEST(StopMatcherTest, StopInsideOneDelta) {
  StopMatcher matcher({"END"});
  const StopMatchResult result = matcher.feed("hello END world");
  EXPECT_EQ(result.text, "hello ");
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.matched_stop, 0);
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(matcher.flush(), "");
}

TEST(StopMatcherTest, StopAcrossThreeDeltasIsHeldBackThenCut) {
  StopMatcher matcher({"STOP"});
  StopMatchResult result = matcher.feed("abc S");
  EXPECT_EQ(result.text, "abc ");  // "S" may begin "STOP"
  EXPECT_FALSE(result.stopped);
  result = matcher.feed("TO");
  EXPECT_EQ(result.text, "");  // "STO" still may
  EXPECT_FALSE(result.stopped);
  result = matcher.feed("P and more");
  EXPECT_EQ(result.text, "");
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.matched_stop, 0);
}

TEST(StopMatcherTest, PrefixThatDoesNotMatchIsReleased) {
  StopMatcher matcher({"STOP"});
  EXPECT_EQ(matcher.feed("x ST").text, "x ");
  EXPECT_EQ(matcher.feed("AR").text, "STAR");  // "STA" is no prefix of "STOP"
  EXPECT_EQ(matcher.feed("S").text, "");
  EXPECT_EQ(matcher.feed("TO").text, "");
  EXPECT_EQ(matcher.feed("OL").text, "STOOL");
  EXPECT_EQ(matcher.feed(" ST").text, " ");
  EXPECT_FALSE(matcher.stopped());
  EXPECT_EQ(matcher.flush(), "ST");  // the end of the text releases the rest
}

TEST(StopMatcherTest, HeldTextRestartsWithinItself) {
  // "SSTOP": the first "S" is released once "SS" shows it cannot start the match.
  EXPECT_EQ(run({"STOP"}, {"S", "S", "T", "O", "P"}), (Stream{"S", true, 0}));
  // "ababc" against "abc": the match starts at the second "ab".
  EXPECT_EQ(run({"abc"}, {"ab", "ab", "c"}), (Stream{"ab", true, 0}));
}

TEST(StopMatcherTest, OverlappingPrefixesOfSeveralStopStrings) {
  const std::vector<std::string> stops = {"</s>", "</end>", "abcd", "bce"};
  EXPECT_EQ(run(stops, {"foo <", "/", "e", "nd> bar"}), (Stream{"foo ", true, 1}));
  EXPECT_EQ(run(stops, {"foo <", "/", "s", ">"}), (Stream{"foo ", true, 0}));
  EXPECT_EQ(run(stops, {"foo </", "x>"}), (Stream{"foo </x>", false, -1}));
  // "abc" is held as a prefix of both "abcd" and (from "bc") "bce"; "e" completes "bce".
  EXPECT_EQ(run(stops, {"xab", "c", "e"}), (Stream{"xa", true, 3}));
  EXPECT_EQ(run(stops, {"xab", "c", "d"}), (Stream{"x", true, 2}));
}

TEST(StopMatcherTest, EarliestEndingStopWinsLongestOnTies) {
  // "c" completes before "abcd" would.
  EXPECT_EQ(run({"abcd", "c"}, {"abcd"}), (Stream{"ab", true, 1}));
  // "b" and "ab" complete together: the longer is cut.
  EXPECT_EQ(run({"b", "ab"}, {"xab"}), (Stream{"x", true, 1}));
}

TEST(StopMatcherTest, OutcomeDoesNotDependOnHowTextIsSplit) {
  const std::vector<std::string> stops = {"<|im_end|>", "\n\nUser:", "im_e"};
  const std::vector<std::string> texts = {
      "Hello there.\n\nUser: hi",
      "a <|im_x|> b <|im_end|> c",
      "a <|im_end|>",
      "no stop here <| \n\nUse",
      "\n\n\n\nUser:",
  };
  Xoshiro256 rng(1);
  for (const std::string& text : texts) {
    const Stream whole = run(stops, {text});
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<std::string> deltas;
      for (size_t at = 0; at < text.size();) {
        const size_t n = 1 + rng.next() % 4;
        deltas.push_back(text.substr(at, n));
        at += n;
      }
      EXPECT_EQ(run(stops, deltas), whole) << text;
    }
  }
}

TEST(StopMatcherTest, MultibyteUtf8Text) {
  // "。" is E3 80 82.
  EXPECT_EQ(run({"。"}, {"你好", "。", "世界"}), (Stream{"你好", true, 0}));
  StopMatcher matcher({"世界", "ñu"});
  EXPECT_EQ(matcher.feed("你好世").text, "你好");  // "世" may begin "世界"
  EXPECT_EQ(matcher.feed("间").text, "世间");
  EXPECT_EQ(matcher.feed("ñ").text, "");
  EXPECT_EQ(matcher.feed("o").text, "ño");
  const StopMatchResult result = matcher.feed("。世界");
  EXPECT_EQ(result.text, "。");
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.matched_stop, 0);
}

TEST(StopMatcherTest, NeverSplitsACharacterEvenForAStopStartingMidCharacter) {
  // "é" is C3 A9; a (malformed) stop string beginning with the byte A9 would hold back
  // half of it. The whole character is held instead.
  StopMatcher matcher({"\xA9!"});
  EXPECT_EQ(matcher.feed("café").text, "caf");
  EXPECT_EQ(matcher.feed("?").text, "é?");
}

TEST(StopMatcherTest, EmptyStopStringsAreIgnored) {
  EXPECT_EQ(run({""}, {"abc", "def"}), (Stream{"abcdef", false, -1}));
  EXPECT_EQ(run({"", "d"}, {"abc", "def"}), (Stream{"abc", true, 1}));
  EXPECT_EQ(run({}, {"abc"}), (Stream{"abc", false, -1}));
}

TEST(StopMatcherTest, NothingHeldWhenNoPrefixCanMatch) {
  StopMatcher matcher({"###"});
  EXPECT_EQ(matcher.feed("plain text").text, "plain text");
  EXPECT_EQ(matcher.feed("").text, "");
  EXPECT_EQ(matcher.flush(), "");
}

TEST(StopMatcherTest, StopAtTheVeryStart) {
  EXPECT_EQ(run({"STOP"}, {"STOP", "more"}), (Stream{"", true, 0}));
}

TEST(StopMatcherDeathTest, FeedingAfterStopIsABug) {
  StopMatcher matcher({"x"});
  ASSERT_TRUE(matcher.feed("x").stopped);
  EXPECT_DEATH(matcher.feed("y"), "fed after it stopped");
}

}  // namespace
}  // namespace strata
