// GrammarBuilder: declares rules, defines each by a GrammarExpr, and lowers them to a
// Grammar. Declaring before defining lets rules refer to each other, recursion
// included (a JSON Schema $ref to an enclosing schema).
//
// Lowering: a choice inside a sequence, and each repetition, become helper rules;
// x{m,n} is m copies of x then n-m nested optionals (x (x (x)?)?)?, so a position in
// the flat grammar also tells how many repetitions are left; x{m,} ends in R ::= x R |
// "", which the matcher runs without growing its stack (the reference is last).
//
// One builder is used by one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/grammar_expr.h"

namespace strata::grammar {

class GrammarBuilder {
 public:
  // A new rule, to be defined once; `name` is for messages (made unique if taken).
  RuleId declare(std::string name);
  // Throws std::logic_error if `rule` was already defined.
  void define(RuleId rule, GrammarExpr expr);
  // Declares and defines.
  RuleId add(std::string name, GrammarExpr expr);
  bool is_defined(RuleId rule) const { return definitions_[rule].has_value(); }

  // Throws std::invalid_argument when a declared rule was never defined, when a choice
  // has no alternatives, or for the reasons Grammar's constructor gives.
  Grammar build(RuleId root);

 private:
  struct Lowering;

  std::vector<std::string> names_;
  std::vector<std::optional<GrammarExpr>> definitions_;
};

}  // namespace strata::grammar
