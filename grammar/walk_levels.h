// WalkLevels: the stack sets of a walk down a byte trie (or down a sorted token list), one
// level per depth, so that moving to a sibling or a shorter prefix recomputes only the
// levels below the common prefix. Frames pushed by the walk are cut off when it ends.
//
// Used inside one mask computation: one thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "grammar/parse_stack.h"

namespace strata::grammar {

class WalkLevels {
 public:
  // Level 0 is `start`.
  WalkLevels(ParseStacks& stacks, std::span<const Frame> start);
  ~WalkLevels();
  WalkLevels(const WalkLevels&) = delete;
  WalkLevels& operator=(const WalkLevels&) = delete;

  struct Step {
    bool live = false;      // some stack took the byte
    bool finished = false;  // ... and may be emptied without another byte
  };
  // Computes level `depth` (>= 1) from level depth - 1 by `byte`; deeper levels are
  // dropped. Level depth - 1 must have been computed for the same prefix.
  Step descend(size_t depth, uint8_t byte);

 private:
  ParseStacks& stacks_;
  size_t arena_start_;
  std::vector<Frame> tops_;           // live tops of all levels, level by level
  std::vector<size_t> level_end_;     // [d]: end in tops_ of level d (level d starts at [d - 1])
  std::vector<size_t> arena_after_;   // [d]: the arena's size once level d was computed
  std::vector<Frame> scratch_;
};

}  // namespace strata::grammar
