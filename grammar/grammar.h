// Grammar: a context-free grammar over bytes in the flat form the matcher walks.
//
// Each rule is a list of alternatives; each alternative is a run of elements in one
// array, ended by a kEnd element. A position is an index into that array, so a parse
// stack is a list of positions (grammar/parse_stack.h). Built by GrammarBuilder from
// GrammarExpr trees; the constructor checks what the matcher relies on.
//
// Immutable after construction: any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "grammar/byte_set.h"
#include "grammar/grammar_expr.h"

namespace strata::grammar {

struct Element {
  enum class Kind : uint8_t { kBytes, kRule, kEnd };
  Kind kind = Kind::kEnd;
  uint32_t value = 0;  // kBytes: index into the byte sets; kRule: the rule's id
};

struct GrammarRule {
  std::string name;                   // for messages and to_string()
  std::vector<uint32_t> alternatives;  // the position of each alternative's first element
};

class Grammar {
 public:
  // Throws std::invalid_argument when a rule refers to itself before consuming a byte
  // (left recursion, which would never stop expanding), when a rule can never finish,
  // or when an element refers to a rule or byte set that does not exist.
  Grammar(std::vector<GrammarRule> rules, std::vector<Element> elements,
          std::vector<ByteSet> byte_sets, RuleId root);

  RuleId root() const { return root_; }
  size_t n_rules() const { return rules_.size(); }
  size_t n_elements() const { return elements_.size(); }
  const GrammarRule& rule(RuleId id) const { return rules_[id]; }
  const Element& element(uint32_t position) const { return elements_[position]; }
  // The byte set of the kBytes element at `position`.
  const ByteSet& byte_set_at(uint32_t position) const {
    return byte_sets_[elements_[position].value];
  }

  // The fewest bytes that take the alternative holding `position` from there to its end.
  uint32_t min_bytes_to_end(uint32_t position) const { return min_bytes_to_end_[position]; }
  // Whether the alternative holding `position` may match the empty string from there.
  bool nullable_to_end(uint32_t position) const { return min_bytes_to_end_[position] == 0; }
  // The bytes that may come first from `position` on, within its alternative.
  const ByteSet& first_bytes(uint32_t position) const { return first_bytes_[position]; }

  // Appends one of the shortest byte strings that take `position` to its alternative's end.
  void append_shortest_to_end(uint32_t position, std::string& out) const;

  // GBNF-like text, one rule a line, for messages and tests.
  std::string to_string() const;

 private:
  void check_references() const;
  void compute_min_bytes();
  void check_left_recursion() const;
  void compute_first_bytes();
  bool rule_nullable(RuleId id) const { return min_bytes_rule_[id] == 0; }

  std::vector<GrammarRule> rules_;
  std::vector<Element> elements_;
  std::vector<ByteSet> byte_sets_;
  RuleId root_ = 0;
  std::vector<uint32_t> min_bytes_rule_;       // per rule: its shortest expansion, bytes
  std::vector<uint32_t> shortest_alternative_;  // per rule: the alternative that has it
  std::vector<uint32_t> min_bytes_to_end_;     // per position, as min_bytes_to_end()
  std::vector<ByteSet> first_bytes_;           // per position, as first_bytes()
};

}  // namespace strata::grammar
