#include "grammar/grammar.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "common/str_cat.h"

namespace strata::grammar {
namespace {

constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();  // no finite expansion

uint32_t saturating_add(uint32_t a, uint32_t b) {
  return (a == kNever || b == kNever || a > kNever - b) ? kNever : a + b;
}

std::string byte_set_text(const ByteSet& set) {
  auto byte_text = [](unsigned b) -> std::string {
    if (b >= 0x21 && b <= 0x7e && b != '\\' && b != ']' && b != '-' && b != '^') {
      return std::string(1, static_cast<char>(b));
    }
    const char* hex = "0123456789ABCDEF";
    return std::string{'\\', 'x', hex[b >> 4], hex[b & 15]};
  };
  std::string out = "[";
  for (unsigned b = 0; b < 256; ++b) {
    if (!set.contains(static_cast<uint8_t>(b))) continue;
    unsigned last = b;
    while (last + 1 < 256 && set.contains(static_cast<uint8_t>(last + 1))) ++last;
    out += byte_text(b);
    if (last > b) out += "-" + byte_text(last);
    b = last;
  }
  return out + "]";
}

}  // namespace

Grammar::Grammar(std::vector<GrammarRule> rules, std::vector<Element> elements,
                 std::vector<ByteSet> byte_sets, RuleId root)
    : rules_(std::move(rules)),
      elements_(std::move(elements)),
      byte_sets_(std::move(byte_sets)),
      root_(root) {
  check_references();
  compute_min_bytes();
  check_left_recursion();
  compute_first_bytes();
}

// First sets by fixed-point iteration (they only grow). Rules in order and each
// alternative back to front: a chain of nested optionals settles in one pass.
void Grammar::compute_first_bytes() {
  first_bytes_.assign(elements_.size(), ByteSet());
  std::vector<ByteSet> rule_first(rules_.size());
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules_.size(); ++r) {
      ByteSet all;
      for (uint32_t start : rules_[r].alternatives) {
        uint32_t end = start;
        while (elements_[end].kind != Element::Kind::kEnd) ++end;
        for (uint32_t p = end; p-- > start;) {
          const Element& element = elements_[p];
          ByteSet first = element.kind == Element::Kind::kBytes ? byte_sets_[element.value]
                                                                : rule_first[element.value];
          bool nullable = element.kind == Element::Kind::kRule && rule_nullable(element.value);
          if (nullable) first |= first_bytes_[p + 1];
          if (!(first == first_bytes_[p])) {
            first_bytes_[p] = first;
            changed = true;
          }
        }
        all |= first_bytes_[start];
      }
      if (!(all == rule_first[r])) {
        rule_first[r] = all;
        changed = true;
      }
    }
  }
}

void Grammar::check_references() const {
  if (root_ >= rules_.size()) throw std::invalid_argument("grammar: the root rule does not exist");
  if (elements_.empty() || elements_.back().kind != Element::Kind::kEnd) {
    throw std::invalid_argument("grammar: the last alternative has no end");
  }
  for (const Element& element : elements_) {
    if (element.kind == Element::Kind::kRule && element.value >= rules_.size()) {
      throw std::invalid_argument(str_cat("grammar: reference to missing rule ", element.value));
    }
    if (element.kind == Element::Kind::kBytes && element.value >= byte_sets_.size()) {
      throw std::invalid_argument("grammar: reference to a missing byte set");
    }
  }
  for (const GrammarRule& rule : rules_) {
    for (uint32_t start : rule.alternatives) {
      if (start >= elements_.size()) {
        throw std::invalid_argument(str_cat("grammar: rule ", rule.name, " starts out of range"));
      }
    }
  }
}

// Shortest expansions by fixed-point iteration: lengths only shrink, so it ends.
void Grammar::compute_min_bytes() {
  min_bytes_rule_.assign(rules_.size(), kNever);
  shortest_alternative_.assign(rules_.size(), 0);
  min_bytes_to_end_.assign(elements_.size(), kNever);
  auto from = [&](uint32_t position) {
    uint32_t total = 0;
    for (; elements_[position].kind != Element::Kind::kEnd; ++position) {
      const Element& element = elements_[position];
      total = saturating_add(total, element.kind == Element::Kind::kBytes
                                        ? 1
                                        : min_bytes_rule_[element.value]);
    }
    return total;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = rules_.size(); r-- > 0;) {
      for (uint32_t a = 0; a < rules_[r].alternatives.size(); ++a) {
        uint32_t length = from(rules_[r].alternatives[a]);
        if (length < min_bytes_rule_[r]) {
          min_bytes_rule_[r] = length;
          shortest_alternative_[r] = a;
          changed = true;
        }
      }
    }
  }
  for (size_t r = 0; r < rules_.size(); ++r) {
    if (min_bytes_rule_[r] == kNever) {
      throw std::invalid_argument(str_cat("grammar: rule ", rules_[r].name, " can never finish"));
    }
  }
  for (size_t p = elements_.size(); p-- > 0;) {
    const Element& element = elements_[p];
    if (element.kind == Element::Kind::kEnd) {
      min_bytes_to_end_[p] = 0;
    } else {
      uint32_t own = element.kind == Element::Kind::kBytes ? 1 : min_bytes_rule_[element.value];
      min_bytes_to_end_[p] = saturating_add(own, min_bytes_to_end_[p + 1]);
    }
  }
}

// A rule reached again before any byte is consumed would make the matcher expand
// forever: reject it here. Edges: rule -> each rule at the front of one of its
// alternatives, behind rules that may match the empty string.
void Grammar::check_left_recursion() const {
  enum class Mark : uint8_t { kNew, kOpen, kDone };
  std::vector<Mark> marks(rules_.size(), Mark::kNew);
  std::vector<std::pair<RuleId, std::vector<RuleId>>> path;  // rule, its unvisited edges
  auto edges = [&](RuleId id) {
    std::vector<RuleId> out;
    for (uint32_t position : rules_[id].alternatives) {
      for (; elements_[position].kind == Element::Kind::kRule; ++position) {
        out.push_back(elements_[position].value);
        if (!rule_nullable(elements_[position].value)) break;
      }
    }
    return out;
  };
  for (RuleId start = 0; start < rules_.size(); ++start) {
    if (marks[start] != Mark::kNew) continue;
    marks[start] = Mark::kOpen;
    path.emplace_back(start, edges(start));
    while (!path.empty()) {
      auto& [id, next] = path.back();
      if (next.empty()) {
        marks[id] = Mark::kDone;
        path.pop_back();
        continue;
      }
      RuleId to = next.back();
      next.pop_back();
      if (marks[to] == Mark::kOpen) {
        throw std::invalid_argument(str_cat("grammar: rule ", rules_[to].name,
                                            " is left-recursive (it can reach itself before "
                                            "matching a byte)"));
      }
      if (marks[to] == Mark::kNew) {
        marks[to] = Mark::kOpen;
        path.emplace_back(to, edges(to));
      }
    }
  }
}

void Grammar::append_shortest_to_end(uint32_t position, std::string& out) const {
  for (; elements_[position].kind != Element::Kind::kEnd; ++position) {
    const Element& element = elements_[position];
    if (element.kind == Element::Kind::kBytes) {
      out += static_cast<char>(byte_sets_[element.value].first());
    } else {
      const GrammarRule& rule = rules_[element.value];
      append_shortest_to_end(rule.alternatives[shortest_alternative_[element.value]], out);
    }
  }
}

std::string Grammar::to_string() const {
  std::string out;
  for (RuleId r = 0; r < rules_.size(); ++r) {
    out += rules_[r].name + " ::=";
    for (size_t a = 0; a < rules_[r].alternatives.size(); ++a) {
      if (a > 0) out += " |";
      for (uint32_t p = rules_[r].alternatives[a]; elements_[p].kind != Element::Kind::kEnd; ++p) {
        out += ' ';
        out += elements_[p].kind == Element::Kind::kBytes ? byte_set_text(byte_sets_[elements_[p].value])
                                                          : rules_[elements_[p].value].name;
      }
      if (elements_[rules_[r].alternatives[a]].kind == Element::Kind::kEnd) out += " \"\"";
    }
    out += '\n';
  }
  return out;
}

}  // namespace strata::grammar
