#include "model/tokenizer/added_token_matcher.h"

#include <algorithm>

namespace strata {

AddedTokenMatcher::AddedTokenMatcher(const Vocab& vocab, Scope scope) : nodes_(1) {
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const TokenType type = vocab.types[id];
    const bool matched =
        type == TokenType::kUserDefined ||
        (scope == Scope::kAllAdded && (type == TokenType::kControl || type == TokenType::kUnknown));
    if (matched && !vocab.tokens[id].empty()) insert(vocab.tokens[id], static_cast<TokenId>(id));
  }
}

int32_t AddedTokenMatcher::child(int32_t node, unsigned char byte) const {
  const auto& children = nodes_[node].children;
  const auto it =
      std::lower_bound(children.begin(), children.end(), byte,
                       [](const auto& entry, unsigned char b) { return entry.first < b; });
  return (it != children.end() && it->first == byte) ? it->second : -1;
}

void AddedTokenMatcher::insert(std::string_view text, TokenId id) {
  is_first_byte_[static_cast<unsigned char>(text[0])] = true;
  int32_t node = 0;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
      auto& children = nodes_[node].children;
      const auto it =
          std::lower_bound(children.begin(), children.end(), byte,
                           [](const auto& entry, unsigned char b) { return entry.first < b; });
      children.insert(it, {byte, next});
    }
    node = next;
  }
  // Two ids with one text: the first keeps it, as HF's vocabulary map does.
  if (nodes_[node].token < 0) nodes_[node].token = id;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<TextFragment>& fragments) const {
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (!is_first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    // Longest token starting at pos.
    TokenId best_token = -1;
    size_t best_length = 0;
    int32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node < 0) break;
      if (nodes_[node].token >= 0) {
        best_token = nodes_[node].token;
        best_length = i + 1 - pos;
      }
    }
    if (best_token < 0) {
      ++pos;
      continue;
    }
    if (pos > plain_start) fragments.push_back({text.substr(plain_start, pos - plain_start), -1});
    fragments.push_back({text.substr(pos, best_length), best_token});
    pos += best_length;
    plain_start = pos;
  }
  if (plain_start < text.size()) fragments.push_back({text.substr(plain_start), -1});
}

}  // namespace strata
