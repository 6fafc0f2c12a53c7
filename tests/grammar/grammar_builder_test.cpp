#include "grammar/grammar_builder.h"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace strata::grammar {
namespace {

TEST(GrammarBuilder, LowersChoicesAndRepetitionsToHelperRules) {
  GrammarBuilder builder;
  RuleId root = builder.add("root", sequence({literal("a"), choice({literal("b"), literal("c")}),
                                              repeat(literal("d"), 1, 2)}));
  Grammar grammar = builder.build(root);
  EXPECT_EQ(grammar.to_string(),
            "root ::= [a] root_choice [d] root_opt1\n"
            "root_choice ::= [b] | [c]\n"
            "root_opt1 ::= [d] | \"\"\n");
}

TEST(GrammarBuilder, KeepsShortestCompletions) {
  GrammarBuilder builder;
  RuleId root = builder.add("root", sequence({literal("x"), repeat(literal("ab"), 2, kUnbounded)}));
  Grammar grammar = builder.build(root);
  std::string out;
  grammar.append_shortest_to_end(grammar.rule(root).alternatives[0], out);
  EXPECT_EQ(out, "xabab");
  EXPECT_EQ(grammar.min_bytes_to_end(grammar.rule(root).alternatives[0]), 5u);
}

TEST(GrammarBuilder, RecursiveRulesThroughDeclare) {
  GrammarBuilder builder;
  RuleId list = builder.declare("list");
  builder.define(list, sequence({literal("("), repeat(rule_ref(list), 0, kUnbounded), literal(")")}));
  EXPECT_NO_THROW(builder.build(list));
}

TEST(GrammarBuilder, RejectsLeftRecursion) {
  GrammarBuilder builder;
  RuleId expr = builder.declare("expr");
  builder.define(expr, choice({sequence({optional(literal(" ")), rule_ref(expr), literal("+")}), literal("1")}));
  try {
    builder.build(expr);
    FAIL() << "left recursion accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("left-recursive"), std::string::npos) << error.what();
  }
}

TEST(GrammarBuilder, RejectsNullableStar) {
  GrammarBuilder builder;
  RuleId root = builder.add("root", repeat(repeat(literal("a"), 0, kUnbounded), 0, kUnbounded));
  EXPECT_THROW(builder.build(root), std::invalid_argument);
}

TEST(GrammarBuilder, RejectsRulesThatNeverFinish) {
  GrammarBuilder builder;
  RuleId loop = builder.declare("loop");
  builder.define(loop, sequence({literal("a"), rule_ref(loop)}));
  EXPECT_THROW(builder.build(loop), std::invalid_argument);
}

TEST(GrammarBuilder, RejectsUndefinedRulesAndEmptyChoices) {
  GrammarBuilder undefined;
  RuleId root = undefined.add("root", rule_ref(undefined.declare("missing")));
  EXPECT_THROW(undefined.build(root), std::invalid_argument);

  GrammarBuilder empty_choice;
  RuleId nothing = empty_choice.add("root", choice({}));
  EXPECT_THROW(empty_choice.build(nothing), std::invalid_argument);
  EXPECT_THROW(empty_choice.define(nothing, literal("x")), std::logic_error);
}

}  // namespace
}  // namespace strata::grammar
