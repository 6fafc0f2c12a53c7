// ParseStacks: the pushdown part of the matcher. A parse stack is a chain of frames,
// each the position of the next element to match in one rule's alternative. A stack's
// top is a Frame value; the frames below it are immutable and live in one arena, so
// stacks share them, a set of stacks is a list of tops, and undoing work is cutting the
// arena back.
//
// Tops are kept unexpanded: a top may stand at a rule reference or at the end of an
// alternative. advance() expands a top only into the alternatives whose first bytes
// (Grammar::first_bytes) hold the byte being matched, so a rule of many alternatives
// (a JSON string's character) costs one path per byte, not one per alternative.
//
// Only a rule reference with more to match after it pushes a frame (its return point);
// one that is last in its alternative is a tail call, so right recursion
// (R ::= x R | "") runs in constant stack depth.
//
// Owned by one matcher or one mask computation: one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "grammar/grammar.h"

namespace strata::grammar {

inline constexpr uint32_t kNoFrame = std::numeric_limits<uint32_t>::max();  // below the bottom

struct Frame {
  uint32_t position = 0;       // the next element to match
  uint32_t parent = kNoFrame;  // the frame below (its position: where to go on), an arena index
  bool operator==(const Frame&) const = default;
};

class ParseStacks {
 public:
  explicit ParseStacks(const Grammar& grammar) : grammar_(&grammar) {}

  const Grammar& grammar() const { return *grammar_; }
  const Frame& frame(uint32_t index) const { return frames_[index]; }
  size_t size() const { return frames_.size(); }
  // Drops the frames pushed after size() was `size`; tops made since are invalid.
  void truncate(size_t size) { frames_.resize(size); }

  // Pushes one frame as it is; returns its index. To build a stack.
  uint32_t push_frame(uint32_t position, uint32_t parent);
  // For each of `tops`, every way to match `byte` next: the stacks after it are appended
  // to `out`. Stacks reached twice through one frame are added once.
  // `tops` must not alias `out`.
  void advance(std::span<const Frame> tops, uint8_t byte, std::vector<Frame>& out);
  // Whether the stack under `top` may be emptied without another byte.
  bool can_finish(const Frame& top) const;
  // The bytes the stack under `top` may take next.
  ByteSet next_bytes(const Frame& top) const;

 private:
  void scan(Frame top, uint8_t byte, std::vector<Frame>& out);
  void add_successor(Frame next, std::vector<Frame>& out) const;
  bool may_start_with(uint32_t position, uint8_t byte) const {
    return grammar_->first_bytes(position).contains(byte) || grammar_->nullable_to_end(position);
  }

  const Grammar* grammar_;
  std::vector<Frame> frames_;
  // Frames popped into during one advance(): a second pop into one would find the same
  // stacks again, so it is skipped.
  std::vector<uint32_t> popped_into_;
  size_t step_begin_ = 0;  // where this advance() began appending to its `out`
};

}  // namespace strata::grammar
