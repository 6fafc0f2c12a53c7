#include "model/chat/jinja/jinja_parser.h"

#include <gtest/gtest.h>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

const Expr& print_expr(const std::vector<Stmt>& body) {
  EXPECT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0].kind, StmtKind::kPrint);
  return *body[0].expr;
}

std::string parse_error(std::string_view source) {
  try {
    parse_template(source);
  } catch (const ParseError& error) {
    return error.what();
  }
  return "no error";
}

TEST(JinjaParserTest, FollowsJinjaPrecedence) {
  // a + b * c ~ d: ~ binds looser than * and tighter than +.
  const std::vector<Stmt> body = parse_template("{{ a + b * c ~ d }}");
  const Expr& sum = print_expr(body);
  ASSERT_EQ(sum.kind, ExprKind::kBinary);
  EXPECT_EQ(sum.binary_op, BinaryOp::kAdd);
  EXPECT_EQ(sum.operands[1]->kind, ExprKind::kConcat);
  EXPECT_EQ(sum.operands[1]->operands[0]->kind, ExprKind::kBinary);
}

TEST(JinjaParserTest, NotBindsLooserThanComparisonsAndFilters) {
  const std::vector<Stmt> body = parse_template("{{ not x|length > 2 }}");
  const Expr& not_expr = print_expr(body);
  ASSERT_EQ(not_expr.kind, ExprKind::kNot);
  const Expr& compare = *not_expr.operands[0];
  ASSERT_EQ(compare.kind, ExprKind::kCompare);
  EXPECT_EQ(compare.operands[0]->kind, ExprKind::kFilter);
}

TEST(JinjaParserTest, ReadsTestsWithAndWithoutArguments) {
  const std::vector<Stmt> body = parse_template("{{ x is not divisibleby 3 and y is sameas(none) }}");
  const Expr& both = print_expr(body);
  ASSERT_EQ(both.kind, ExprKind::kAnd);
  EXPECT_EQ(both.operands[0]->kind, ExprKind::kNot);
  EXPECT_EQ(both.operands[0]->operands[0]->kind, ExprKind::kTest);
  EXPECT_EQ(both.operands[0]->operands[0]->operands.size(), 2u);
  EXPECT_EQ(both.operands[1]->kind, ExprKind::kTest);
}

TEST(JinjaParserTest, ReadsStatements) {
  const std::vector<Stmt> body = parse_template(
      "{% for k, v in d.items() if v %}{% break %}{% else %}e{% endfor %}"
      "{% set ns.x = 1 %}{% set a, b = 1, 2 %}{% set c %}t{% endset %}"
      "{% macro m(a, b=2) %}{{ varargs }}{% endmacro %}{% if a %}{% elif b %}{% else %}{% endif %}");
  ASSERT_EQ(body.size(), 6u);
  EXPECT_EQ(body[0].kind, StmtKind::kFor);
  EXPECT_EQ(body[0].targets, (std::vector<std::string>{"k", "v"}));
  EXPECT_NE(body[0].condition, nullptr);
  EXPECT_EQ(body[0].else_body.size(), 1u);
  EXPECT_EQ(body[1].attribute, "x");
  EXPECT_EQ(body[2].targets.size(), 2u);
  EXPECT_EQ(body[3].kind, StmtKind::kSetBlock);
  EXPECT_EQ(body[4].kind, StmtKind::kMacro);
  EXPECT_TRUE(body[4].uses_varargs);
  EXPECT_FALSE(body[4].uses_kwargs);
  EXPECT_EQ(body[5].branches.size(), 2u);
}

TEST(JinjaParserTest, NamesUnsupportedConstructsAndTheirLine) {
  EXPECT_EQ(parse_error("a\n\n{{ x|xmlattr }}"), "unsupported filter 'xmlattr' at line 3");
  EXPECT_EQ(parse_error("{{ x is startingwith 'a' }}"), "unsupported test 'startingwith' at line 1");
  EXPECT_EQ(parse_error("\n{% include 'x' %}"), "unsupported tag 'include' at line 2");
  EXPECT_EQ(parse_error("{% for x in y recursive %}{% endfor %}"), "unsupported recursive loop at line 1");
  EXPECT_EQ(parse_error("{{ f(*args) }}"), "unsupported argument unpacking at line 1");
}

TEST(JinjaParserTest, RejectsMalformedTemplates) {
  EXPECT_EQ(parse_error("{% if x %}"), "unexpected end of template, expected 'elif' at line 1");
  EXPECT_EQ(parse_error("{% break %}"), "'break' outside of a loop at line 1");
  EXPECT_EQ(parse_error("{% endif %}"), "unsupported tag 'endif' at line 1");
  EXPECT_EQ(parse_error("{{ }}"), "unexpected '}}' at line 1");
  EXPECT_EQ(parse_error("{{ a b }}"), "expected '}}', got 'b' at line 1");
  EXPECT_EQ(parse_error("{{ f(a=1, 2) }}"), "positional argument after keyword argument at line 1");
}

}  // namespace
}  // namespace strata::jinja
