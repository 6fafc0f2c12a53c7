#include "grammar/token_mask_cache.h"

#include <algorithm>
#include <utility>

#include "grammar/walk_levels.h"

namespace strata::grammar {
namespace {

void set_bit(std::vector<uint32_t>& mask, TokenId id) {
  mask[static_cast<size_t>(id) / 32] |= uint32_t{1} << (id % 32);
}

// Sorts the vocabulary's tokens for one cut state by walking the trie once.
class TrieClassifier {
 public:
  TrieClassifier(const TokenVocabulary& vocabulary, TokenMaskEntry& entry)
      : vocabulary_(vocabulary), entry_(entry) {}

  void walk(ParseStacks& stacks, std::span<const Frame> start) {
    WalkLevels levels(stacks, start);
    std::span<const TrieNode> trie = vocabulary_.trie();
    // [d]: a cut stack may be emptied within the first d bytes of the current path.
    std::vector<uint8_t> escaped(size_t{0xFFFF} + 1, 0);
    for (const Frame& top : start) escaped[0] = escaped[0] || stacks.can_finish(top);
    for (size_t i = 0; i < vocabulary_.n_trie_nodes();) {
      const TrieNode& node = trie[i];
      WalkLevels::Step step = levels.descend(node.depth, node.byte);
      bool escaped_before = escaped[node.depth - 1];
      escaped[node.depth] = escaped_before || step.finished;
      uint32_t own_end = trie[i + 1].tokens_begin;
      if (step.live || step.finished) {
        add(node.tokens_begin, own_end, /*accepted=*/true);
      } else if (escaped_before) {
        add(node.tokens_begin, own_end, /*accepted=*/false);
      }
      if (step.live) {
        ++i;
        continue;
      }
      if (escaped[node.depth]) add(own_end, trie[node.subtree_end].tokens_begin, false);
      i = node.subtree_end;
    }
  }

 private:
  void add(uint32_t begin, uint32_t end, bool accepted) {
    std::span<const TokenId> tokens = vocabulary_.trie_tokens();
    for (uint32_t k = begin; k < end; ++k) {
      if (accepted) {
        set_bit(entry_.accepted, tokens[k]);
      } else {
        entry_.uncertain.push_back(tokens[k]);
      }
    }
  }

  const TokenVocabulary& vocabulary_;
  TokenMaskEntry& entry_;
};

}  // namespace

TokenMaskCache::TokenMaskCache(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const TokenVocabulary> vocabulary,
                               TokenMaskCacheOptions options)
    : grammar_(std::move(grammar)), vocabulary_(std::move(vocabulary)), options_(options) {
  if (options_.context_frames == 0) options_.context_frames = 1;
}

size_t TokenMaskCache::n_entries() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

// The cut stacks (top first), sorted so that the same set gives the same key.
std::string TokenMaskCache::key(const ParseStacks& stacks, std::span<const Frame> tops,
                                std::vector<std::vector<uint32_t>>& cut) const {
  cut.clear();
  for (const Frame& top : tops) {
    std::vector<uint32_t>& positions = cut.emplace_back();
    positions.push_back(top.position);
    for (uint32_t f = top.parent; f != kNoFrame && positions.size() < options_.context_frames;
         f = stacks.frame(f).parent) {
      positions.push_back(stacks.frame(f).position);
    }
  }
  std::sort(cut.begin(), cut.end());
  cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
  std::string out;
  for (const std::vector<uint32_t>& positions : cut) {
    uint32_t n = static_cast<uint32_t>(positions.size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out.append(reinterpret_cast<const char*>(positions.data()), positions.size() * sizeof(uint32_t));
  }
  return out;
}

std::shared_ptr<const TokenMaskEntry> TokenMaskCache::entry(const ParseStacks& stacks,
                                                            std::span<const Frame> tops) {
  std::vector<std::vector<uint32_t>> cut;
  std::string state_key = key(stacks, tops, cut);
  {
    std::lock_guard lock(mutex_);
    auto found = entries_.find(state_key);
    if (found != entries_.end()) return found->second;
  }
  std::shared_ptr<const TokenMaskEntry> built = build(cut);
  std::lock_guard lock(mutex_);
  if (entries_.size() < options_.max_entries) entries_.emplace(std::move(state_key), built);
  return built;
}

std::shared_ptr<const TokenMaskEntry> TokenMaskCache::build(
    const std::vector<std::vector<uint32_t>>& cut) const {
  auto entry = std::make_shared<TokenMaskEntry>();
  entry->accepted.assign(vocabulary_->n_mask_words(), 0);
  ParseStacks stacks(*grammar_);
  std::vector<Frame> start;
  for (const std::vector<uint32_t>& positions : cut) {
    uint32_t parent = kNoFrame;
    for (size_t i = positions.size(); i-- > 1;) parent = stacks.push_frame(positions[i], parent);
    start.push_back(Frame{positions[0], parent});
  }
  TrieClassifier(*vocabulary_, *entry).walk(stacks, start);
  entry->uncertain_common.resize(entry->uncertain.size(), 0);
  for (size_t k = 1; k < entry->uncertain.size(); ++k) {
    std::string_view a = vocabulary_->token_bytes(entry->uncertain[k - 1]);
    std::string_view b = vocabulary_->token_bytes(entry->uncertain[k]);
    size_t common = 0;
    while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
    entry->uncertain_common[k] = static_cast<uint16_t>(common);
  }
  return entry;
}

}  // namespace strata::grammar
