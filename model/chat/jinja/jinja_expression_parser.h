// Parses expressions, following Jinja2's grammar and operator precedence (lowest first:
// conditional, or, and, not, comparisons, + -, ~, * / // %, **, unary - +, then postfix
// . [] () and filters and tests). Filters and tests are resolved as they are read, so a
// template using one this engine lacks fails when the model loads.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/chat/jinja/jinja_ast.h"
#include "model/chat/jinja/jinja_token_stream.h"

namespace strata::jinja {

class ExpressionParser : public TokenStream {
 public:
  explicit ExpressionParser(std::vector<Token> tokens) : TokenStream(std::move(tokens)) {}

  // `a` or `a, b` (a tuple); with_condition: `a if b else c` allowed.
  ExprPtr parse_tuple(bool with_condition);
  ExprPtr parse_expression();
  // The filter after a `|`; `subject` is null in a {% filter %} block.
  ExprPtr parse_filter(ExprPtr subject);

  // Collects the variable names expressions read from here to end_name_scope(): a macro
  // accepts extra arguments only where its body reads varargs or kwargs (as Jinja2 does).
  void begin_name_scope() { name_scopes_.emplace_back(); }
  std::set<std::string> end_name_scope();

 private:
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr make_arith(BinaryOp op, int line, ExprPtr left, ExprPtr right);
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_name();
  ExprPtr parse_parenthesized();
  ExprPtr parse_sequence_literal(ExprKind kind, std::string_view close);
  ExprPtr parse_dict_literal();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript();
  void parse_arguments(Expr& node);
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_test(ExprPtr subject);
  bool at_tuple_end() const;
  bool starts_test_argument() const;

  std::vector<std::set<std::string>> name_scopes_;  // innermost last
};

// A new expression node.
ExprPtr make_expr(ExprKind kind, int line);

}  // namespace strata::jinja
