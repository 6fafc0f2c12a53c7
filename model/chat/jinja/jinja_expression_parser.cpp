#include "model/chat/jinja/jinja_expression_parser.h"

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_filters.h"
#include "model/chat/jinja/jinja_tests.h"

namespace strata::jinja {
namespace {

ExprPtr make_binary(ExprKind kind, int line, ExprPtr left, ExprPtr right) {
  ExprPtr expr = make_expr(kind, line);
  expr->operands.push_back(std::move(left));
  expr->operands.push_back(std::move(right));
  return expr;
}

}  // namespace

ExprPtr make_expr(ExprKind kind, int line) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->line = line;
  return expr;
}

std::set<std::string> ExpressionParser::end_name_scope() {
  std::set<std::string> names = std::move(name_scopes_.back());
  name_scopes_.pop_back();
  return names;
}

// `a, b` (a tuple) or a single expression.
ExprPtr ExpressionParser::parse_tuple(bool with_condition) {
  const int line = current().line;
  ExprPtr first = with_condition ? parse_expression() : parse_or();
  if (!at_operator(",")) return first;
  ExprPtr tuple = make_expr(ExprKind::kTuple, line);
  tuple->operands.push_back(std::move(first));
  while (skip_operator(",")) {
    if (at_tuple_end()) break;
    tuple->operands.push_back(with_condition ? parse_expression() : parse_or());
  }
  return tuple;
}

bool ExpressionParser::at_tuple_end() const {
  const Token& t = current();
  return t.kind == TokenKind::kVariableEnd || t.kind == TokenKind::kBlockEnd ||
         (t.kind == TokenKind::kOperator && t.text == ")") ||
         (t.kind == TokenKind::kName && (t.text == "if" || t.text == "in"));
}

ExprPtr ExpressionParser::parse_expression() {
  const NestingGuard nesting(*this);
  ExprPtr expr = parse_or();
  while (at_name("if")) {
    const int line = advance().line;
    ExprPtr conditional = make_expr(ExprKind::kConditional, line);
    conditional->operands.push_back(parse_or());
    conditional->operands.push_back(std::move(expr));
    conditional->operands.push_back(skip_name("else") ? parse_expression() : nullptr);
    expr = std::move(conditional);
  }
  return expr;
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr left = parse_and();
  while (at_name("or")) {
    const int line = advance().line;
    left = make_binary(ExprKind::kOr, line, std::move(left), parse_and());
  }
  return left;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr left = parse_not();
  while (at_name("and")) {
    const int line = advance().line;
    left = make_binary(ExprKind::kAnd, line, std::move(left), parse_not());
  }
  return left;
}

ExprPtr ExpressionParser::parse_not() {
  const NestingGuard nesting(*this);
  if (at_name("not")) {
    ExprPtr expr = make_expr(ExprKind::kNot, advance().line);
    expr->operands.push_back(parse_not());
    return expr;
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  const int line = current().line;
  ExprPtr first = parse_math1();
  ExprPtr compare;
  while (true) {
    CompareOp op;
    if (at_operator("==")) op = CompareOp::kEqual;
    else if (at_operator("!=")) op = CompareOp::kNotEqual;
    else if (at_operator("<")) op = CompareOp::kLess;
    else if (at_operator("<=")) op = CompareOp::kLessEqual;
    else if (at_operator(">")) op = CompareOp::kGreater;
    else if (at_operator(">=")) op = CompareOp::kGreaterEqual;
    else if (at_name("in")) op = CompareOp::kIn;
    else if (at_name("not") && peek().kind == TokenKind::kName && peek().text == "in") {
      advance();
      op = CompareOp::kNotIn;
    } else {
      break;
    }
    advance();
    if (!compare) {
      compare = make_expr(ExprKind::kCompare, line);
      compare->operands.push_back(std::move(first));
    }
    compare->compare_ops.push_back(op);
    compare->operands.push_back(parse_math1());
  }
  return compare ? std::move(compare) : std::move(first);
}

ExprPtr ExpressionParser::make_arith(BinaryOp op, int line, ExprPtr left, ExprPtr right) {
  ExprPtr expr = make_binary(ExprKind::kBinary, line, std::move(left), std::move(right));
  expr->binary_op = op;
  return expr;
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr left = parse_concat();
  while (at_operator("+") || at_operator("-")) {
    const BinaryOp op = current().text == "+" ? BinaryOp::kAdd : BinaryOp::kSubtract;
    const int line = advance().line;
    left = make_arith(op, line, std::move(left), parse_concat());
  }
  return left;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr left = parse_math2();
  while (at_operator("~")) {
    const int line = advance().line;
    left = make_binary(ExprKind::kConcat, line, std::move(left), parse_math2());
  }
  return left;
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr left = parse_pow();
  while (true) {
    BinaryOp op;
    if (at_operator("*")) op = BinaryOp::kMultiply;
    else if (at_operator("/")) op = BinaryOp::kDivide;
    else if (at_operator("//")) op = BinaryOp::kFloorDivide;
    else if (at_operator("%")) op = BinaryOp::kModulo;
    else return left;
    const int line = advance().line;
    left = make_arith(op, line, std::move(left), parse_pow());
  }
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (at_operator("**")) {
    const int line = advance().line;
    left = make_arith(BinaryOp::kPower, line, std::move(left), parse_unary(true));
  }
  return left;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  const NestingGuard nesting(*this);
  ExprPtr node;
  if (at_operator("-") || at_operator("+")) {
    const ExprKind kind = current().text == "-" ? ExprKind::kNegate : ExprKind::kPositive;
    node = make_expr(kind, advance().line);
    node->operands.push_back(parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  return node;
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& token = current();
  const int line = token.line;
  switch (token.kind) {
    case TokenKind::kName: return parse_name();
    case TokenKind::kString: {
      std::string text;
      while (current().kind == TokenKind::kString) text += advance().text;  // 'a' 'b'
      ExprPtr expr = make_expr(ExprKind::kConstant, line);
      expr->constant = Value(std::move(text));
      return expr;
    }
    case TokenKind::kInteger:
    case TokenKind::kFloat: {
      ExprPtr expr = make_expr(ExprKind::kConstant, line);
      expr->constant = token.kind == TokenKind::kInteger ? Value(token.int_value) : Value(token.float_value);
      advance();
      return expr;
    }
    case TokenKind::kOperator:
      if (token.text == "(") return parse_parenthesized();
      if (token.text == "[") return parse_sequence_literal(ExprKind::kList, "]");
      if (token.text == "{") return parse_dict_literal();
      break;
    default: break;
  }
  fail("unexpected " + describe_current());
}

ExprPtr ExpressionParser::parse_name() {
  const Token& token = advance();
  ExprPtr expr = make_expr(ExprKind::kConstant, token.line);
  const std::string& name = token.text;
  if (name == "true" || name == "True") expr->constant = Value(true);
  else if (name == "false" || name == "False") expr->constant = Value(false);
  else if (name == "none" || name == "None") expr->constant = Value::none();
  else {
    expr->kind = ExprKind::kName;
    expr->name = name;
    if (!name_scopes_.empty()) name_scopes_.back().insert(name);
  }
  return expr;
}

// `(expr)`, `()`, `(a,)`, `(a, b)`.
ExprPtr ExpressionParser::parse_parenthesized() {
  const int line = advance().line;
  if (skip_operator(")")) return make_expr(ExprKind::kTuple, line);
  ExprPtr first = parse_expression();
  if (skip_operator(")")) return first;
  ExprPtr tuple = make_expr(ExprKind::kTuple, line);
  tuple->operands.push_back(std::move(first));
  while (skip_operator(",")) {
    if (at_operator(")")) break;
    tuple->operands.push_back(parse_expression());
  }
  expect_operator(")");
  return tuple;
}

ExprPtr ExpressionParser::parse_sequence_literal(ExprKind kind, std::string_view close) {
  ExprPtr list = make_expr(kind, advance().line);
  while (!at_operator(close)) {
    if (!list->operands.empty()) expect_operator(",");
    if (at_operator(close)) break;
    list->operands.push_back(parse_expression());
  }
  expect_operator(close);
  return list;
}

ExprPtr ExpressionParser::parse_dict_literal() {
  ExprPtr dict = make_expr(ExprKind::kDict, advance().line);
  while (!at_operator("}")) {
    if (!dict->operands.empty()) expect_operator(",");
    if (at_operator("}")) break;
    dict->operands.push_back(parse_expression());
    expect_operator(":");
    dict->operands.push_back(parse_expression());
  }
  expect_operator("}");
  return dict;
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr node) {
  while (true) {
    if (at_operator(".")) {
      const int line = advance().line;
      if (current().kind == TokenKind::kInteger) {  // foo.0 is foo[0]
        ExprPtr index = make_expr(ExprKind::kConstant, line);
        index->constant = Value(advance().int_value);
        node = make_binary(ExprKind::kSubscript, line, std::move(node), std::move(index));
        continue;
      }
      ExprPtr attribute = make_expr(ExprKind::kAttribute, line);
      attribute->name = expect_name();
      attribute->operands.push_back(std::move(node));
      node = std::move(attribute);
    } else if (at_operator("[")) {
      const int line = advance().line;
      ExprPtr index = parse_subscript();
      expect_operator("]");
      node = make_binary(ExprKind::kSubscript, line, std::move(node), std::move(index));
    } else if (at_operator("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

// Inside [ ]: an index or a slice start:stop:step.
ExprPtr ExpressionParser::parse_subscript() {
  const int line = current().line;
  ExprPtr start;
  if (!at_operator(":")) {
    start = parse_expression();
    if (!at_operator(":")) return start;
  }
  ExprPtr slice = make_expr(ExprKind::kSlice, line);
  slice->operands.push_back(std::move(start));
  advance();  // ':'
  slice->operands.push_back(at_operator("]") || at_operator(":") ? nullptr : parse_expression());
  ExprPtr step;
  if (skip_operator(":") && !at_operator("]")) step = parse_expression();
  slice->operands.push_back(std::move(step));
  return slice;
}

// Arguments of a call, filter or test: `(a, b, name=c)`, added to `node`.
void ExpressionParser::parse_arguments(Expr& node) {
  expect_operator("(");
  bool first = true;
  while (!at_operator(")")) {
    if (!first) expect_operator(",");
    first = false;
    if (at_operator(")")) break;
    if (at_operator("*") || at_operator("**")) fail("unsupported argument unpacking");
    if (current().kind == TokenKind::kName && peek().kind == TokenKind::kOperator && peek().text == "=") {
      std::string name = advance().text;
      advance();
      node.keywords.emplace_back(std::move(name), parse_expression());
    } else {
      if (!node.keywords.empty()) fail("positional argument after keyword argument");
      node.operands.push_back(parse_expression());
    }
  }
  expect_operator(")");
}

ExprPtr ExpressionParser::parse_call(ExprPtr callee) {
  ExprPtr call = make_expr(ExprKind::kCall, current().line);
  call->operands.push_back(std::move(callee));
  parse_arguments(*call);
  return call;
}

ExprPtr ExpressionParser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (skip_operator("|")) {
      node = parse_filter(std::move(node));
    } else if (at_name("is")) {
      node = parse_test(std::move(node));
    } else if (at_operator("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

// After `|`: name [ (args) ]. `subject` is null in a filter block.
ExprPtr ExpressionParser::parse_filter(ExprPtr subject) {
  const int line = current().line;
  ExprPtr filter = make_expr(ExprKind::kFilter, line);
  filter->name = expect_name();
  filter->filter = find_filter(filter->name);
  if (filter->filter == nullptr) {
    throw ParseError("unsupported filter '" + filter->name + "' at line " + std::to_string(line), line);
  }
  filter->operands.push_back(std::move(subject));
  if (at_operator("(")) parse_arguments(*filter);
  return filter;
}

ExprPtr ExpressionParser::parse_test(ExprPtr subject) {
  const int line = advance().line;  // 'is'
  const bool negated = skip_name("not");
  ExprPtr test = make_expr(ExprKind::kTest, line);
  test->name = expect_name();
  test->test = find_test(test->name);
  if (test->test == nullptr) {
    throw ParseError("unsupported test '" + test->name + "' at line " + std::to_string(line), line);
  }
  test->operands.push_back(std::move(subject));
  if (at_operator("(")) {
    parse_arguments(*test);
  } else if (starts_test_argument()) {
    test->operands.push_back(parse_postfix(parse_primary()));
  }
  if (!negated) return test;
  ExprPtr not_expr = make_expr(ExprKind::kNot, line);
  not_expr->operands.push_back(std::move(test));
  return not_expr;
}

// Jinja2 takes `x is divisibleby 3` / `x is sameas none`: one argument, no parentheses.
bool ExpressionParser::starts_test_argument() const {
  const Token& t = current();
  switch (t.kind) {
    case TokenKind::kName: return t.text != "else" && t.text != "or" && t.text != "and";
    case TokenKind::kString:
    case TokenKind::kInteger:
    case TokenKind::kFloat: return true;
    case TokenKind::kOperator: return t.text == "[" || t.text == "{" || t.text == "(";
    default: return false;
  }
}

std::vector<Token> tokens_;

}  // namespace strata::jinja
