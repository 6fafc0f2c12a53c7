#include "grammar/grammar_matcher.h"

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "grammar/grammar_builder.h"

namespace strata::grammar {
namespace {

// Balanced parentheses with letters inside: S ::= ( [a-z]* S* ) 
std::shared_ptr<const Grammar> parens() {
  GrammarBuilder builder;
  RuleId group = builder.declare("group");
  builder.define(group, sequence({literal("("), repeat(bytes(ByteSet::range('a', 'z')), 0, kUnbounded),
                                  repeat(rule_ref(group), 0, kUnbounded), literal(")")}));
  return std::make_shared<const Grammar>(builder.build(group));
}

TEST(GrammarMatcher, AcceptsNestedInputPieceByPiece) {
  GrammarMatcher matcher(parens());
  EXPECT_FALSE(matcher.can_end());
  EXPECT_TRUE(matcher.accept_bytes("(ab("));
  EXPECT_TRUE(matcher.accept_bytes("c)("));
  EXPECT_FALSE(matcher.can_end());
  EXPECT_TRUE(matcher.accept_bytes("))"));
  EXPECT_TRUE(matcher.can_end());
  EXPECT_FALSE(matcher.can_continue());
}

TEST(GrammarMatcher, RejectionLeavesStateUnchanged) {
  GrammarMatcher matcher(parens());
  ASSERT_TRUE(matcher.accept_bytes("(a"));
  EXPECT_FALSE(matcher.accept_bytes("b)x"));
  EXPECT_FALSE(matcher.accept_bytes("A"));
  EXPECT_TRUE(matcher.accept_bytes("b)"));
  EXPECT_TRUE(matcher.can_end());
}

TEST(GrammarMatcher, RollbackRestoresEarlierSteps) {
  GrammarMatcher matcher(parens());
  ASSERT_TRUE(matcher.accept_bytes("("));
  ASSERT_TRUE(matcher.accept_bytes("(("));
  ASSERT_TRUE(matcher.accept_bytes(")))"));
  EXPECT_TRUE(matcher.can_end());
  matcher.rollback(2);
  EXPECT_EQ(matcher.n_steps(), 1u);
  EXPECT_FALSE(matcher.can_accept("))"));
  EXPECT_TRUE(matcher.accept_bytes(")"));
  EXPECT_TRUE(matcher.can_end());
  matcher.rollback(2);
  EXPECT_EQ(matcher.n_steps(), 0u);
  EXPECT_FALSE(matcher.can_accept(")"));
}

TEST(GrammarMatcher, CopiesAreIndependent) {
  GrammarMatcher matcher(parens());
  ASSERT_TRUE(matcher.accept_bytes("(("));
  GrammarMatcher copy(matcher);
  ASSERT_TRUE(copy.accept_bytes("))"));
  EXPECT_TRUE(copy.can_end());
  EXPECT_FALSE(matcher.can_end());
  EXPECT_TRUE(matcher.accept_bytes(")"));
}

TEST(GrammarMatcher, ShortestCompletionClosesEverything) {
  GrammarMatcher matcher(parens());
  ASSERT_TRUE(matcher.accept_bytes("((ab(("));
  std::string completion = matcher.shortest_completion();
  EXPECT_EQ(completion, "))))");
  EXPECT_TRUE(matcher.accept_bytes(completion));
  EXPECT_TRUE(matcher.can_end());
  EXPECT_EQ(matcher.shortest_completion(), "");
}

TEST(GrammarMatcher, NextBytesFollowsTheStacks) {
  GrammarMatcher matcher(parens());
  EXPECT_EQ(matcher.next_bytes(), ByteSet::of('('));
  ASSERT_TRUE(matcher.accept_bytes("("));
  ByteSet expected = ByteSet::range('a', 'z');
  expected.insert('(');
  expected.insert(')');
  EXPECT_EQ(matcher.next_bytes(), expected);
}

TEST(GrammarMatcher, AmbiguousGrammarsKeepEveryParse) {
  // a* a? b | a c: after "a" both continuations are alive.
  GrammarBuilder builder;
  RuleId root = builder.add("root", choice({sequence({repeat(literal("a"), 0, kUnbounded),
                                                      optional(literal("a")), literal("b")}),
                                            literal("ac")}));
  GrammarMatcher matcher(std::make_shared<const Grammar>(builder.build(root)));
  ASSERT_TRUE(matcher.accept_bytes("a"));
  EXPECT_TRUE(matcher.can_accept("c"));
  EXPECT_TRUE(matcher.can_accept("aab"));
  EXPECT_FALSE(matcher.can_accept("ac"));
}

TEST(GrammarMatcher, LongRightRecursionKeepsTheArenaLinear) {
  GrammarBuilder builder;
  RuleId root = builder.add("root", repeat(literal("ab"), 0, kUnbounded));
  GrammarMatcher matcher(std::make_shared<const Grammar>(builder.build(root)));
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(matcher.accept_bytes("ab"));
  EXPECT_TRUE(matcher.can_end());
  EXPECT_LT(matcher.stacks().size(), 10000u * 8);
}

}  // namespace
}  // namespace strata::grammar
