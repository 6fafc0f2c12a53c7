#include "model/tokenizer/bpe_encoder.h"

#include <queue>
#include <string>
#include <utility>

#include "model/tokenizer/byte_level.h"

namespace strata {

namespace {

struct Symbol {
  TokenId id;
  int32_t prev;
  int32_t next;
  bool merged_away;  // absorbed into its left neighbour
};

struct QueuedMerge {
  int32_t rank;
  int32_t left;  // symbol index
  TokenId result;

  // std::priority_queue pops the largest: invert so that the lowest rank, then
  // the leftmost position, comes first.
  friend bool operator<(const QueuedMerge& a, const QueuedMerge& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

BpeEncoder::BpeEncoder(const Vocab& vocab, bool ignore_merges) : ignore_merges_(ignore_merges) {
  ids_.reserve(vocab.tokens.size());
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    ids_.insert_or_assign(std::string_view(vocab.tokens[id]), static_cast<TokenId>(id));
  }

  for (int byte = 0; byte < 256; ++byte) {
    const std::string text = byte_level_encode(std::string(1, static_cast<char>(byte)));
    const auto it = ids_.find(text);
    byte_ids_[byte] = (it == ids_.end()) ? -1 : it->second;
  }

  merges_.reserve(vocab.merges.size());
  std::string joined;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& merge = vocab.merges[rank];
    // "left right"; searching from 1 keeps a left part that is itself " " intact.
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) continue;
    const std::string_view left(merge.data(), space);
    const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
    joined.assign(left).append(right);
    const auto left_it = ids_.find(left);
    const auto right_it = ids_.find(right);
    const auto result_it = ids_.find(joined);
    if (left_it == ids_.end() || right_it == ids_.end() || result_it == ids_.end()) continue;
    // A repeated pair keeps its first (best) rank.
    merges_.try_emplace(pair_key(left_it->second, right_it->second),
                        Merge{static_cast<int32_t>(rank), result_it->second});
  }
}

void BpeEncoder::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const auto it = ids_.find(byte_level_encode(word));
    if (it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }

  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (char c : word) {
    const TokenId id = byte_ids_[static_cast<uint8_t>(c)];
    // A byte the vocabulary cannot spell is dropped, as HF's BPE does without
    // an unk token (no byte-level vocabulary in practice lacks one).
    if (id < 0) continue;
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, false});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  std::priority_queue<QueuedMerge> queue;
  const auto queue_pair = [&](int32_t left) {
    const int32_t right = symbols[left].next;
    if (right < 0) return;
    const auto it = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (it != merges_.end()) queue.push({it->second.rank, left, it->second.result});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) queue_pair(i);

  while (!queue.empty()) {
    const QueuedMerge top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.left];
    if (left.merged_away || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // Stale if either side changed since queuing: the pair no longer makes
    // the same token.
    const auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.result != top.result) continue;

    left.id = top.result;
    right.merged_away = true;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.left;
    if (left.prev >= 0) queue_pair(left.prev);
    queue_pair(top.left);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

void BpeEncoder::encode_words(const std::vector<std::string_view>& words,
                              std::vector<TokenId>& out) const {
  // word -> where its tokens already are in `out`: [first, first + count).
  std::unordered_map<std::string_view, std::pair<size_t, size_t>> seen;
  for (std::string_view word : words) {
    if (word.size() == 1) {  // nothing to merge, nothing worth caching
      encode_word(word, out);
      continue;
    }
    const auto it = seen.find(word);
    if (it != seen.end()) {
      const auto [first, count] = it->second;
      for (size_t i = 0; i < count; ++i) out.push_back(out[first + i]);
      continue;
    }
    const size_t first = out.size();
    encode_word(word, out);
    seen.emplace(word, std::pair<size_t, size_t>{first, out.size() - first});
  }
}

}  // namespace strata
