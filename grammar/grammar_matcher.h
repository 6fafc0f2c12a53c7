// GrammarMatcher: matches text against a grammar byte by byte, incrementally. Its state
// is the set of parse stacks that the bytes so far leave alive; each accepted piece of
// text is one step that rollback() undoes in constant time (the arena is cut back).
//
// Copying a matcher copies its arena and history: cheap for a short output, linear in
// the bytes matched so far. Exploration (the token masks) pushes frames above
// mark() and cuts them with release(), leaving the state as it was.
//
// Owned by one sequence: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/byte_set.h"
#include "grammar/grammar.h"
#include "grammar/parse_stack.h"

namespace strata::grammar {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);
  GrammarMatcher(const GrammarMatcher& other);
  GrammarMatcher& operator=(const GrammarMatcher&) = delete;

  const Grammar& grammar() const { return *grammar_; }

  // Matches all of `bytes` as one step; false, and the state unchanged, if some prefix of
  // them leaves no stack alive.
  bool accept_bytes(std::string_view bytes);
  // Whether accept_bytes(bytes) would succeed; the state is unchanged either way.
  bool can_accept(std::string_view bytes);

  // The text so far is a whole sentence of the grammar: the output may end here.
  bool can_end() const;
  // Some byte may still follow.
  bool can_continue() const;
  // The bytes that may come next.
  ByteSet next_bytes() const;

  // Steps taken (successful accept_bytes calls) and still held for rollback.
  size_t n_steps() const { return step_tops_begin_.size() - 1; }
  // Undoes the last `n` steps (at most n_steps()).
  void rollback(size_t n);

  // One of the shortest byte strings that take the text so far to a whole sentence
  // (empty when can_end()); used to force an output to finish at a length limit.
  std::string shortest_completion() const;

  // The current parse stacks' tops (unexpanded: see parse_stack.h); their frames
  // below are in stacks().
  std::span<const Frame> tops() const;
  ParseStacks& stacks() { return stacks_; }
  const ParseStacks& stacks() const { return stacks_; }

 private:
  bool advance_all(std::string_view bytes);  // leaves the result in scratch_

  std::shared_ptr<const Grammar> grammar_;
  ParseStacks stacks_;
  // The tops after each step, back to back; step i's are
  // [step_tops_begin_[i], step_tops_begin_[i + 1]) (the last runs to the end).
  std::vector<Frame> step_tops_;
  std::vector<size_t> step_tops_begin_;
  std::vector<size_t> step_arena_size_;  // per step: the arena's size after it
  std::vector<Frame> scratch_, scratch_next_;
};

}  // namespace strata::grammar
