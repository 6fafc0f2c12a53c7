#include "model/chat/jinja/jinja_parser.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "model/chat/jinja/jinja_error.h"
#include "model/chat/jinja/jinja_expression_parser.h"
#include "model/chat/jinja/jinja_lexer.h"

namespace strata::jinja {
namespace {

// Statements; expressions come from ExpressionParser.
class Parser : public ExpressionParser {
 public:
  explicit Parser(std::vector<Token> tokens) : ExpressionParser(std::move(tokens)) {}

  std::vector<Stmt> parse_all() {
    std::vector<Stmt> body = parse_body({});
    if (current().kind != TokenKind::kEnd) fail("unexpected '" + current().text + "'");
    return body;
  }

 private:

  // Statements up to a {% tag %} named in `end_tags` (left unconsumed: current() is the
  // tag's name) or the end of the template.
  std::vector<Stmt> parse_body(std::initializer_list<std::string_view> end_tags) {
    std::vector<Stmt> body;
    while (true) {
      const Token& token = current();
      if (token.kind == TokenKind::kEnd) {
        if (end_tags.size() != 0) fail("unexpected end of template, expected '" + std::string(*end_tags.begin()) + "'");
        return body;
      }
      if (token.kind == TokenKind::kData) {
        Stmt stmt;
        stmt.kind = StmtKind::kText;
        stmt.line = token.line;
        stmt.text = token.text;
        body.push_back(std::move(stmt));
        advance();
      } else if (token.kind == TokenKind::kVariableBegin) {
        advance();
        Stmt stmt;
        stmt.kind = StmtKind::kPrint;
        stmt.line = token.line;
        stmt.expr = parse_tuple(true);
        expect(TokenKind::kVariableEnd, "'}}'");
        body.push_back(std::move(stmt));
      } else if (token.kind == TokenKind::kBlockBegin) {
        const Token& tag = peek();
        if (tag.kind == TokenKind::kName &&
            std::find(end_tags.begin(), end_tags.end(), tag.text) != end_tags.end()) {
          advance();
          return body;
        }
        advance();
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe_current());
      }
    }
  }

  void end_block() { expect(TokenKind::kBlockEnd, "'%}'"); }

  // The closing tag `name`, at current() (parse_body stopped on it).
  void expect_end_tag(std::string_view name) {
    if (!skip_name(name)) fail("expected '" + std::string(name) + "'");
    end_block();
  }

  Stmt parse_statement() {
    const NestingGuard nesting(*this);
    const int line = current().line;
    if (current().kind != TokenKind::kName) fail("expected a tag name, got " + describe_current());
    const std::string tag = advance().text;
    Stmt stmt;
    stmt.line = line;
    if (tag == "if") {
      parse_if(stmt);
    } else if (tag == "for") {
      parse_for(stmt);
    } else if (tag == "set") {
      parse_set(stmt);
    } else if (tag == "macro") {
      parse_macro(stmt);
    } else if (tag == "call") {
      parse_call_block(stmt);
    } else if (tag == "filter") {
      parse_filter_block(stmt);
    } else if (tag == "generation") {
      stmt.kind = StmtKind::kGeneration;
      end_block();
      stmt.body = parse_body({"endgeneration"});
      expect_end_tag("endgeneration");
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail("'" + tag + "' outside of a loop");
      stmt.kind = tag == "break" ? StmtKind::kBreak : StmtKind::kContinue;
      end_block();
    } else {
      throw ParseError("unsupported tag '" + tag + "' at line " + std::to_string(line), line);
    }
    return stmt;
  }

  void parse_if(Stmt& stmt) {
    stmt.kind = StmtKind::kIf;
    while (true) {
      Branch branch;
      branch.condition = parse_expression();
      end_block();
      branch.body = parse_body({"elif", "else", "endif"});
      stmt.branches.push_back(std::move(branch));
      if (skip_name("elif")) continue;
      if (skip_name("else")) {
        end_block();
        stmt.else_body = parse_body({"endif"});
      }
      expect_end_tag("endif");
      return;
    }
  }

  void parse_for(Stmt& stmt) {
    stmt.kind = StmtKind::kFor;
    stmt.targets = parse_assign_names();
    if (!skip_name("in")) fail("expected 'in', got " + describe_current());
    stmt.expr = parse_tuple(false);
    if (skip_name("if")) stmt.condition = parse_expression();
    if (at_name("recursive")) fail("unsupported recursive loop");
    end_block();
    ++loop_depth_;
    stmt.body = parse_body({"endfor", "else"});
    --loop_depth_;
    if (skip_name("else")) {
      end_block();
      stmt.else_body = parse_body({"endfor"});
    }
    expect_end_tag("endfor");
  }

  // `a`, `a, b`, `(a, b)`: the names a for or set assigns.
  std::vector<std::string> parse_assign_names() {
    std::vector<std::string> names;
    const bool parenthesized = skip_operator("(");
    do {
      if (parenthesized && at_operator(")")) break;
      names.push_back(expect_name());
    } while (skip_operator(","));
    if (parenthesized) expect_operator(")");
    return names;
  }

  void parse_set(Stmt& stmt) {
    if (current().kind == TokenKind::kName && peek().kind == TokenKind::kOperator && peek().text == ".") {
      stmt.targets.push_back(advance().text);
      advance();
      stmt.attribute = expect_name();
    } else {
      stmt.targets = parse_assign_names();
    }
    if (skip_operator("=")) {
      stmt.kind = StmtKind::kSet;
      stmt.expr = parse_tuple(true);
      end_block();
      return;
    }
    if (stmt.targets.size() != 1) fail("expected '=' after a tuple target");
    if (at_operator("|")) fail("unsupported filter on a block set");
    stmt.kind = StmtKind::kSetBlock;
    end_block();
    stmt.body = parse_body({"endset"});
    expect_end_tag("endset");
  }

  std::vector<Param> parse_params() {
    std::vector<Param> params;
    expect_operator("(");
    while (!at_operator(")")) {
      if (!params.empty()) expect_operator(",");
      if (at_operator(")")) break;
      Param param;
      param.name = expect_name();
      if (skip_operator("=")) param.default_value = parse_expression();
      params.push_back(std::move(param));
    }
    expect_operator(")");
    return params;
  }

  void parse_macro(Stmt& stmt) {
    stmt.kind = StmtKind::kMacro;
    stmt.text = expect_name();
    stmt.params = parse_params();
    end_block();
    const int saved_loop_depth = loop_depth_;
    loop_depth_ = 0;
    begin_name_scope();
    stmt.body = parse_body({"endmacro"});
    note_macro_uses(stmt);
    loop_depth_ = saved_loop_depth;
    expect_end_tag("endmacro");
  }

  void note_macro_uses(Stmt& stmt) {
    const std::set<std::string> used = end_name_scope();
    stmt.uses_varargs = used.contains("varargs");
    stmt.uses_kwargs = used.contains("kwargs");
    stmt.uses_caller = used.contains("caller");
  }

  void parse_call_block(Stmt& stmt) {
    stmt.kind = StmtKind::kCallBlock;
    if (at_operator("(")) stmt.params = parse_params();
    stmt.expr = parse_expression();
    if (stmt.expr->kind != ExprKind::kCall) fail("expected a call after 'call'");
    end_block();
    begin_name_scope();
    stmt.body = parse_body({"endcall"});
    note_macro_uses(stmt);
    expect_end_tag("endcall");
  }

  void parse_filter_block(Stmt& stmt) {
    stmt.kind = StmtKind::kFilterBlock;
    do {
      stmt.filters.push_back(parse_filter(nullptr));
    } while (skip_operator("|"));
    end_block();
    stmt.body = parse_body({"endfilter"});
    expect_end_tag("endfilter");
  }

  int loop_depth_ = 0;  // break/continue are valid inside a for body (not across a macro)
};

}  // namespace

std::vector<Stmt> parse_template(std::string_view source) { return Parser(tokenize(source)).parse_all(); }

}  // namespace strata::jinja
