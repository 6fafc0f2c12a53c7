#include "grammar/grammar_builder.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"

namespace strata::grammar {

// The state of one build(): the flat grammar as it grows. Helper rules are appended
// after the declared ones while their parents are being lowered.
struct GrammarBuilder::Lowering {
  std::vector<GrammarRule> rules;
  std::vector<std::vector<std::vector<Element>>> alternatives;  // per rule, before flattening
  std::vector<ByteSet> byte_sets;

  RuleId new_rule(std::string name) {
    rules.push_back(GrammarRule{std::move(name), {}});
    alternatives.emplace_back();
    return static_cast<RuleId>(rules.size() - 1);
  }

  uint32_t byte_set_index(const ByteSet& set) {
    // Consecutive literals repeat sets often; a short look back keeps the table small.
    size_t look_back = std::min<size_t>(byte_sets.size(), 64);
    for (size_t i = byte_sets.size() - look_back; i < byte_sets.size(); ++i) {
      if (byte_sets[i] == set) return static_cast<uint32_t>(i);
    }
    byte_sets.push_back(set);
    return static_cast<uint32_t>(byte_sets.size() - 1);
  }

  // Defines `rule` as `expr`: a top-level choice gives one alternative per item.
  void define(RuleId rule, const GrammarExpr& expr) {
    if (expr.kind == GrammarExpr::Kind::kChoice) {
      if (expr.items.empty()) {
        throw std::invalid_argument(str_cat("grammar: rule ", rules[rule].name,
                                            " has no alternatives, so it can never match"));
      }
      for (const GrammarExpr& item : expr.items) add_alternative(rule, item);
    } else {
      add_alternative(rule, expr);
    }
  }

  void add_alternative(RuleId rule, const GrammarExpr& expr) {
    std::vector<Element> out;
    std::string name = rules[rule].name;  // a copy: lowering appends to `rules`
    lower(expr, name, out);
    alternatives[rule].push_back(std::move(out));
  }

  void lower(const GrammarExpr& expr, const std::string& parent, std::vector<Element>& out) {
    switch (expr.kind) {
      case GrammarExpr::Kind::kBytes:
        out.push_back(Element{Element::Kind::kBytes, byte_set_index(expr.bytes)});
        return;
      case GrammarExpr::Kind::kRule:
        out.push_back(Element{Element::Kind::kRule, expr.rule});
        return;
      case GrammarExpr::Kind::kSequence:
        for (const GrammarExpr& item : expr.items) lower(item, parent, out);
        return;
      case GrammarExpr::Kind::kChoice: {
        RuleId helper = new_rule(parent + "_choice");
        define(helper, expr);
        out.push_back(Element{Element::Kind::kRule, helper});
        return;
      }
      case GrammarExpr::Kind::kRepeat:
        lower_repeat(expr, parent, out);
        return;
    }
  }

  void lower_repeat(const GrammarExpr& expr, const std::string& parent, std::vector<Element>& out) {
    if (expr.max_count < expr.min_count) {
      throw std::invalid_argument(str_cat("grammar: repetition {", expr.min_count, ",",
                                          expr.max_count, "} in ", parent, " has min > max"));
    }
    const GrammarExpr& item = expr.items[0];
    for (uint32_t i = 0; i < expr.min_count; ++i) lower(item, parent, out);
    if (expr.max_count == expr.min_count) return;
    if (expr.max_count == kUnbounded) {
      // R ::= item R | ""
      RuleId star = new_rule(parent + "_star");
      std::vector<Element> loop;
      lower(item, parent, loop);
      loop.push_back(Element{Element::Kind::kRule, star});
      alternatives[star].push_back(std::move(loop));
      alternatives[star].emplace_back();
      out.push_back(Element{Element::Kind::kRule, star});
      return;
    }
    // O_1 ::= item | "";  O_k ::= item O_{k-1} | ""
    RuleId inner = 0;
    for (uint32_t k = 1; k <= expr.max_count - expr.min_count; ++k) {
      RuleId level = new_rule(str_cat(parent, "_opt", k));
      std::vector<Element> body;
      lower(item, parent, body);
      if (k > 1) body.push_back(Element{Element::Kind::kRule, inner});
      alternatives[level].push_back(std::move(body));
      alternatives[level].emplace_back();
      inner = level;
    }
    out.push_back(Element{Element::Kind::kRule, inner});
  }

  Grammar finish(RuleId root) {
    std::vector<Element> elements;
    for (size_t r = 0; r < rules.size(); ++r) {
      for (std::vector<Element>& alternative : alternatives[r]) {
        rules[r].alternatives.push_back(static_cast<uint32_t>(elements.size()));
        elements.insert(elements.end(), alternative.begin(), alternative.end());
        elements.push_back(Element{Element::Kind::kEnd, 0});
      }
    }
    return Grammar(std::move(rules), std::move(elements), std::move(byte_sets), root);
  }
};

RuleId GrammarBuilder::declare(std::string name) {
  std::string unique = name;
  for (int n = 2; std::find(names_.begin(), names_.end(), unique) != names_.end(); ++n) {
    unique = str_cat(name, "_", n);
  }
  names_.push_back(std::move(unique));
  definitions_.emplace_back();
  return static_cast<RuleId>(names_.size() - 1);
}

void GrammarBuilder::define(RuleId rule, GrammarExpr expr) {
  if (definitions_.at(rule).has_value()) {
    throw std::logic_error(str_cat("grammar: rule ", names_[rule], " defined twice"));
  }
  definitions_[rule] = std::move(expr);
}

RuleId GrammarBuilder::add(std::string name, GrammarExpr expr) {
  RuleId rule = declare(std::move(name));
  define(rule, std::move(expr));
  return rule;
}

Grammar GrammarBuilder::build(RuleId root) {
  Lowering lowering;
  for (const std::string& name : names_) lowering.new_rule(name);
  for (RuleId r = 0; r < names_.size(); ++r) {
    if (!definitions_[r]) {
      throw std::invalid_argument(str_cat("grammar: rule ", names_[r], " is declared but never defined"));
    }
    lowering.define(r, *definitions_[r]);
  }
  return lowering.finish(root);
}

}  // namespace strata::grammar
