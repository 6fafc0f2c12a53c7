#include "grammar/grammar_matcher.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/check.h"

namespace strata::grammar {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)), stacks_(*grammar_) {
  step_tops_begin_.push_back(0);
  for (uint32_t start : grammar_->rule(grammar_->root()).alternatives) {
    step_tops_.push_back(Frame{start, kNoFrame});
  }
  step_arena_size_.push_back(stacks_.size());
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& other)
    : grammar_(other.grammar_),
      stacks_(other.stacks_),
      step_tops_(other.step_tops_),
      step_tops_begin_(other.step_tops_begin_),
      step_arena_size_(other.step_arena_size_) {}

std::span<const Frame> GrammarMatcher::tops() const {
  return std::span<const Frame>(step_tops_).subspan(step_tops_begin_.back());
}

bool GrammarMatcher::advance_all(std::string_view bytes) {
  scratch_.assign(tops().begin(), tops().end());
  for (char c : bytes) {
    scratch_next_.clear();
    stacks_.advance(scratch_, static_cast<uint8_t>(c), scratch_next_);
    std::swap(scratch_, scratch_next_);
    if (scratch_.empty()) return false;
  }
  return true;
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  size_t arena_size = stacks_.size();
  if (!advance_all(bytes)) {
    stacks_.truncate(arena_size);
    return false;
  }
  step_tops_begin_.push_back(step_tops_.size());
  step_tops_.insert(step_tops_.end(), scratch_.begin(), scratch_.end());
  step_arena_size_.push_back(stacks_.size());
  return true;
}

bool GrammarMatcher::can_accept(std::string_view bytes) {
  size_t arena_size = stacks_.size();
  bool ok = advance_all(bytes);
  stacks_.truncate(arena_size);
  return ok;
}

bool GrammarMatcher::can_end() const {
  auto now = tops();
  return std::any_of(now.begin(), now.end(), [&](const Frame& top) { return stacks_.can_finish(top); });
}

bool GrammarMatcher::can_continue() const {
  return !next_bytes().empty();
}

ByteSet GrammarMatcher::next_bytes() const {
  ByteSet out;
  for (const Frame& top : tops()) out |= stacks_.next_bytes(top);
  return out;
}

void GrammarMatcher::rollback(size_t n) {
  STRATA_CHECK(n <= n_steps(), "rollback of ", n, " steps, only ", n_steps(), " taken");
  if (n == 0) return;
  size_t keep = step_tops_begin_.size() - n;  // steps kept, the start included
  step_tops_.resize(step_tops_begin_[keep]);
  step_tops_begin_.resize(keep);
  step_arena_size_.resize(keep);
  stacks_.truncate(step_arena_size_.back());
}

std::string GrammarMatcher::shortest_completion() const {
  uint64_t best_cost = std::numeric_limits<uint64_t>::max();
  std::span<const Frame> now = tops();
  if (now.empty()) return {};
  Frame best_top = now[0];
  for (const Frame& top : now) {
    uint64_t cost = grammar_->min_bytes_to_end(top.position);
    for (uint32_t f = top.parent; f != kNoFrame; f = stacks_.frame(f).parent) {
      cost += grammar_->min_bytes_to_end(stacks_.frame(f).position);
    }
    if (cost < best_cost) {
      best_cost = cost;
      best_top = top;
    }
  }
  std::string out;
  grammar_->append_shortest_to_end(best_top.position, out);
  for (uint32_t f = best_top.parent; f != kNoFrame; f = stacks_.frame(f).parent) {
    grammar_->append_shortest_to_end(stacks_.frame(f).position, out);
  }
  return out;
}

}  // namespace strata::grammar
