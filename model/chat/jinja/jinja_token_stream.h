// A cursor over a template's tokens with the checks both parsers (statements and
// expressions) share; every failure is a ParseError naming the current line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/chat/jinja/jinja_lexer.h"

namespace strata::jinja {

class TokenStream {
 public:
  explicit TokenStream(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(size_t ahead = 1) const;
  // Moves past current() (never past the final kEnd) and returns it.
  const Token& advance();

  bool at_operator(std::string_view op) const;
  bool at_name(std::string_view name) const;
  // Moves past the operator or name if it is current(); says whether it did.
  bool skip_operator(std::string_view op);
  bool skip_name(std::string_view name);

  [[noreturn]] void fail(const std::string& what) const;
  // current() as an error message names it: "'x'", "end of template", ...
  std::string describe_current() const;
  void expect_operator(std::string_view op);
  void expect(TokenKind kind, std::string_view what);
  std::string expect_name();

  // One more level of nesting (a statement or expression inside another) for the rest of
  // a C++ scope. Nesting is bounded so parsing and rendering never exhaust the stack.
  class NestingGuard {
   public:
    explicit NestingGuard(TokenStream& stream);
    ~NestingGuard() { --stream_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    TokenStream& stream_;
  };

 private:
  std::vector<Token> tokens_;  // ends with kEnd
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace strata::jinja
