#include "model/chat/jinja/jinja_token_stream.h"

#include <algorithm>

#include "model/chat/jinja/jinja_error.h"

namespace strata::jinja {
namespace {

// How deeply statements and expressions may nest: far beyond any real template, and
// shallow enough that parsing and rendering never exhaust the stack.
constexpr int kMaxNesting = 200;

}  // namespace

const Token& TokenStream::peek(size_t ahead) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }

const Token& TokenStream::advance() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }

bool TokenStream::at_operator(std::string_view op) const {
  return current().kind == TokenKind::kOperator && current().text == op;
}

bool TokenStream::at_name(std::string_view name) const {
  return current().kind == TokenKind::kName && current().text == name;
}

bool TokenStream::skip_operator(std::string_view op) {
  if (!at_operator(op)) return false;
  advance();
  return true;
}

bool TokenStream::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  advance();
  return true;
}

void TokenStream::fail(const std::string& what) const {
  throw ParseError(what + " at line " + std::to_string(current().line), current().line);
}

std::string TokenStream::describe_current() const {
  switch (current().kind) {
    case TokenKind::kEnd: return "end of template";
    case TokenKind::kBlockEnd: return "'%}'";
    case TokenKind::kVariableEnd: return "'}}'";
    case TokenKind::kData: return "template text";
    default: return "'" + current().text + "'";
  }
}

void TokenStream::expect_operator(std::string_view op) {
  if (!skip_operator(op)) fail("expected '" + std::string(op) + "', got " + describe_current());
}

void TokenStream::expect(TokenKind kind, std::string_view what) {
  if (current().kind != kind) fail("expected " + std::string(what) + ", got " + describe_current());
  advance();
}

std::string TokenStream::expect_name() {
  if (current().kind != TokenKind::kName) fail("expected a name, got " + describe_current());
  return advance().text;
}

TokenStream::NestingGuard::NestingGuard(TokenStream& stream) : stream_(stream) {
  if (++stream_.nesting_ > kMaxNesting) {
    --stream_.nesting_;
    stream_.fail("template nests deeper than " + std::to_string(kMaxNesting) + " levels");
  }
}

}  // namespace strata::jinja
