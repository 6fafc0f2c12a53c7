#include "model/tokenizer/spm_encoder.h"

#include <algorithm>
#include <queue>

#include "model/tokenizer/utf8.h"

namespace strata {

namespace {

// One symbol of the word being merged: a run of text in a doubly linked list.
struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t offset;  // into the text
  uint32_t length;  // bytes; 0 once merged into its left neighbour
};

struct Bigram {
  float score;
  int32_t left;     // symbol index
  int32_t right;    // symbol index
  uint32_t length;  // bytes of the joined text when queued: detects stale entries

  // Priority order: higher score first, then leftmost (llama.cpp's llm_bigram_spm).
  friend bool operator<(const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

SpmEncoder::SpmEncoder(const Vocab& vocab) : vocab_(vocab) {
  normal_ids_.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] == TokenType::kNormal) {
      normal_ids_.insert_or_assign(std::string_view(vocab.tokens[id]), static_cast<TokenId>(id));
    }
  }
  byte_ids_.fill(-1);
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    if (vocab.types[id] != TokenType::kByte) continue;
    if (const std::optional<uint8_t> byte = byte_token_value(vocab.tokens[id])) {
      byte_ids_[*byte] = static_cast<TokenId>(id);
    }
  }
}

void SpmEncoder::encode(std::string_view text, std::vector<TokenId>& out) const {
  if (text.empty()) return;

  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const size_t length =
        std::min(utf8::sequence_length(static_cast<uint8_t>(text[offset])), text.size() - offset);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, offset + length == text.size() ? -1 : index + 1,
                       static_cast<uint32_t>(offset), static_cast<uint32_t>(length)});
    offset += length;
  }

  std::priority_queue<Bigram> queue;
  const auto try_add_bigram = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t length = symbols[left].length + symbols[right].length;
    const auto it = normal_ids_.find(text.substr(symbols[left].offset, length));
    if (it == normal_ids_.end()) return;
    queue.push({vocab_.scores[it->second], left, right, length});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add_bigram(i - 1, i);

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    // Symbols only grow, so an unchanged total length means neither side
    // has merged with anything since this pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) {
      continue;
    }
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add_bigram(left.prev, bigram.left);
    try_add_bigram(bigram.left, left.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = text.substr(symbols[i].offset, symbols[i].length);
    // Merged symbols are tokens by construction; a single character may not be.
    const auto it = normal_ids_.find(piece);
    if (it != normal_ids_.end()) {
      out.push_back(it->second);
      continue;
    }
    // Byte fallback; if the vocabulary lacks one of the bytes, the whole
    // character becomes <unk> (HF's BPE with byte_fallback does the same).
    const bool all_bytes_known = std::all_of(piece.begin(), piece.end(), [&](char byte) {
      return byte_ids_[static_cast<uint8_t>(byte)] >= 0;
    });
    if (all_bytes_known) {
      for (char byte : piece) out.push_back(byte_ids_[static_cast<uint8_t>(byte)]);
    } else if (vocab_.unk) {
      out.push_back(*vocab_.unk);
    }
  }
}

}  // namespace strata
