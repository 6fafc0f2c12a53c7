#include "grammar/walk_levels.h"

#include "common/check.h"

namespace strata::grammar {

WalkLevels::WalkLevels(ParseStacks& stacks, std::span<const Frame> start)
    : stacks_(stacks), arena_start_(stacks.size()) {
  tops_.assign(start.begin(), start.end());
  level_end_.push_back(tops_.size());
  arena_after_.push_back(arena_start_);
}

WalkLevels::~WalkLevels() { stacks_.truncate(arena_start_); }

WalkLevels::Step WalkLevels::descend(size_t depth, uint8_t byte) {
  STRATA_CHECK(depth >= 1 && depth <= level_end_.size(), "walk level ", depth, " out of order");
  level_end_.resize(depth);
  arena_after_.resize(depth);
  tops_.resize(level_end_[depth - 1]);
  stacks_.truncate(arena_after_[depth - 1]);
  size_t parent_begin = depth >= 2 ? level_end_[depth - 2] : 0;
  scratch_.clear();
  stacks_.advance(std::span<const Frame>(tops_).subspan(parent_begin, tops_.size() - parent_begin),
                  byte, scratch_);
  Step step;
  for (const Frame& top : scratch_) {
    tops_.push_back(top);
    step.live = true;
    step.finished = step.finished || stacks_.can_finish(top);
  }
  level_end_.push_back(tops_.size());
  arena_after_.push_back(stacks_.size());
  return step;
}

}  // namespace strata::grammar
