// GrammarExpr: the right-hand side of a grammar rule as a tree, written by the
// compilers that target the grammar (JSON Schema, regular expressions) and lowered to
// flat alternatives by GrammarBuilder.
//
// Plain values and pure functions: any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "grammar/byte_set.h"

namespace strata::grammar {

using RuleId = uint32_t;

inline constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();

struct GrammarExpr {
  enum class Kind : uint8_t {
    kBytes,     // one byte of `bytes`
    kRule,      // the rule `rule` (may be recursive; see GrammarBuilder::declare)
    kSequence,  // `items` one after the other; empty: matches the empty string
    kChoice,    // one of `items`; empty: matches nothing
    kRepeat,    // items[0] between min_count and max_count times (kUnbounded: no limit)
  };
  Kind kind = Kind::kSequence;
  ByteSet bytes;
  RuleId rule = 0;
  uint32_t min_count = 0;
  uint32_t max_count = 0;
  std::vector<GrammarExpr> items;
};

GrammarExpr bytes(ByteSet set);
GrammarExpr literal(std::string_view text);  // the bytes of `text`, in order
GrammarExpr rule_ref(RuleId rule);
GrammarExpr sequence(std::vector<GrammarExpr> items);
GrammarExpr choice(std::vector<GrammarExpr> items);
GrammarExpr repeat(GrammarExpr item, uint32_t min_count, uint32_t max_count);
GrammarExpr optional(GrammarExpr item);
inline GrammarExpr empty() { return sequence({}); }

}  // namespace strata::grammar
