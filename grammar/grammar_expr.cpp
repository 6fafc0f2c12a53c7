#include "grammar/grammar_expr.h"

#include <utility>

namespace strata::grammar {

GrammarExpr bytes(ByteSet set) {
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::kBytes;
  expr.bytes = set;
  return expr;
}

GrammarExpr literal(std::string_view text) {
  std::vector<GrammarExpr> items;
  items.reserve(text.size());
  for (char c : text) items.push_back(bytes(ByteSet::of(static_cast<uint8_t>(c))));
  return sequence(std::move(items));
}

GrammarExpr rule_ref(RuleId rule) {
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::kRule;
  expr.rule = rule;
  return expr;
}

GrammarExpr sequence(std::vector<GrammarExpr> items) {
  if (items.size() == 1) return std::move(items[0]);
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::kSequence;
  expr.items = std::move(items);
  return expr;
}

GrammarExpr choice(std::vector<GrammarExpr> items) {
  if (items.size() == 1) return std::move(items[0]);
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::kChoice;
  expr.items = std::move(items);
  return expr;
}

GrammarExpr repeat(GrammarExpr item, uint32_t min_count, uint32_t max_count) {
  GrammarExpr expr;
  expr.kind = GrammarExpr::Kind::kRepeat;
  expr.min_count = min_count;
  expr.max_count = max_count;
  expr.items.push_back(std::move(item));
  return expr;
}

GrammarExpr optional(GrammarExpr item) { return repeat(std::move(item), 0, 1); }

}  // namespace strata::grammar
