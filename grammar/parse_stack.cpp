#include "grammar/parse_stack.h"

namespace strata::grammar {

uint32_t ParseStacks::push_frame(uint32_t position, uint32_t parent) {
  frames_.push_back(Frame{position, parent});
  return static_cast<uint32_t>(frames_.size() - 1);
}

void ParseStacks::advance(std::span<const Frame> tops, uint8_t byte, std::vector<Frame>& out) {
  popped_into_.clear();
  step_begin_ = out.size();
  for (const Frame& top : tops) scan(top, byte, out);
}

void ParseStacks::scan(Frame top, uint8_t byte, std::vector<Frame>& out) {
  const Element& element = grammar_->element(top.position);
  switch (element.kind) {
    case Element::Kind::kBytes:
      if (grammar_->byte_set_at(top.position).contains(byte)) add_successor(Frame{top.position + 1, top.parent}, out);
      return;
    case Element::Kind::kEnd:
      if (top.parent == kNoFrame) return;
      for (uint32_t seen : popped_into_) {
        if (seen == top.parent) return;
      }
      popped_into_.push_back(top.parent);
      scan(frames_[top.parent], byte, out);
      return;
    case Element::Kind::kRule: {
      if (!may_start_with(top.position, byte)) return;
      uint32_t next = top.position + 1;
      bool tail = grammar_->element(next).kind == Element::Kind::kEnd;
      uint32_t return_frame = kNoFrame;
      bool pushed = false;
      for (uint32_t start : grammar_->rule(element.value).alternatives) {
        if (!may_start_with(start, byte)) continue;
        if (!pushed) {
          return_frame = tail ? top.parent : push_frame(next, top.parent);
          pushed = true;
        }
        scan(Frame{start, return_frame}, byte, out);
      }
      return;
    }
  }
}

// Finished alternatives are left at once (the frame below holds where to go on), so
// every path that returns to the same place gives the same top, kept once.
void ParseStacks::add_successor(Frame next, std::vector<Frame>& out) const {
  while (grammar_->element(next.position).kind == Element::Kind::kEnd && next.parent != kNoFrame) {
    next = frames_[next.parent];
  }
  for (size_t i = step_begin_; i < out.size(); ++i) {
    if (out[i] == next) return;
  }
  out.push_back(next);
}

bool ParseStacks::can_finish(const Frame& top) const {
  if (!grammar_->nullable_to_end(top.position)) return false;
  for (uint32_t f = top.parent; f != kNoFrame; f = frames_[f].parent) {
    if (!grammar_->nullable_to_end(frames_[f].position)) return false;
  }
  return true;
}

ByteSet ParseStacks::next_bytes(const Frame& top) const {
  ByteSet out = grammar_->first_bytes(top.position);
  if (!grammar_->nullable_to_end(top.position)) return out;
  for (uint32_t f = top.parent; f != kNoFrame; f = frames_[f].parent) {
    out |= grammar_->first_bytes(frames_[f].position);
    if (!grammar_->nullable_to_end(frames_[f].position)) break;
  }
  return out;
}

}  // namespace strata::grammar
