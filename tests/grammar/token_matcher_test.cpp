#include "grammar/token_matcher.h"

#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "grammar/grammar_builder.h"
#include "grammar/json_grammar.h"
#include "grammar/json_string_regex.h"

namespace strata::grammar {
namespace {

bool has_bit(const std::vector<uint32_t>& mask, size_t id) { return (mask[id / 32] >> (id % 32)) & 1; }

// Every printable ASCII byte, the two bytes of "é" alone and together, and tokens that
// span several JSON symbols.
std::shared_ptr<const TokenVocabulary> json_vocabulary() {
  std::vector<VocabularyToken> tokens;
  for (int b = 0x20; b < 0x7F; ++b) tokens.push_back({std::string(1, static_cast<char>(b)), TokenKind::kNormal});
  for (const char* text : {"\xC3", "\xA9", "\xC3\xA9", "{\"", "\"}", "\"},{\"", "\":", "\": \"", "\",\"",
                           "\", \"", "true", "null", "[{", "}]", "}]}", "1.5", "-0", "00", "abc", "\\n",
                           "\\u00e9", "\\ud800", "]}", ",\"", "\"\"", " \"", "{}", "[]", "e+5"}) {
    tokens.push_back({text, TokenKind::kNormal});
  }
  tokens.push_back({"<|im_start|>", TokenKind::kSpecial});
  tokens.push_back({"", TokenKind::kNormal});
  tokens.push_back({"<|end|>", TokenKind::kEndOfSequence});
  return std::make_shared<const TokenVocabulary>(std::move(tokens));
}

std::shared_ptr<const Grammar> any_json_object() {
  GrammarBuilder builder;
  JsonGrammar json(builder);
  RuleId root = builder.add("root", json.any_object());
  return std::make_shared<const Grammar>(builder.build(root));
}

// Shaped like a compiled schema: an optional member, bounded strings, a pattern, an
// integer range, an array of objects.
std::shared_ptr<const Grammar> schema_like() {
  GrammarBuilder builder;
  JsonGrammar json(builder);
  GrammarExpr code = sequence({literal("\""), compile_json_string_regex("^[A-Z]{2}-\\d{1,3}(x|yz)?$", json).contents,
                               literal("\"")});
  RuleId item = builder.add("item", sequence({literal("{\"n\":"), json.integer(-20, 300), literal(",\"s\":"),
                                              json.string(0, 4), literal("}")}));
  RuleId root = builder.add("root", sequence({literal("{"), optional(sequence({literal("\"a\":"), json.string(1, 6),
                                                                               json.comma()})),
                                              literal("\"code\":"), std::move(code), json.comma(), literal("\"items\":["),
                                              optional(sequence({rule_ref(item), repeat(sequence({json.comma(), rule_ref(item)}), 0, 3)})),
                                              literal("]}")}));
  return std::make_shared<const Grammar>(builder.build(root));
}

// The mask, token by token, from the byte matcher alone.
std::vector<uint32_t> brute_force_mask(GrammarMatcher& matcher, const TokenVocabulary& vocabulary) {
  std::vector<uint32_t> mask(vocabulary.n_mask_words(), 0);
  for (size_t id = 0; id < vocabulary.n_tokens(); ++id) {
    auto token = static_cast<TokenId>(id);
    bool allowed = false;
    if (vocabulary.token_kind(token) == TokenKind::kNormal) {
      allowed = !vocabulary.token_bytes(token).empty() && matcher.can_accept(vocabulary.token_bytes(token));
    } else if (vocabulary.token_kind(token) == TokenKind::kEndOfSequence) {
      allowed = matcher.can_end();
    }
    if (allowed) mask[id / 32] |= uint32_t{1} << (id % 32);
  }
  return mask;
}

class TokenMatcherRandomWalk : public ::testing::TestWithParam<std::tuple<uint32_t, bool>> {};

TEST_P(TokenMatcherRandomWalk, MaskEqualsBruteForceAlongRandomOutputs) {
  auto [context_frames, schema_shaped] = GetParam();
  auto vocabulary = json_vocabulary();
  auto cache = std::make_shared<TokenMaskCache>(schema_shaped ? schema_like() : any_json_object(), vocabulary,
                                                TokenMaskCacheOptions{.context_frames = context_frames});
  std::mt19937 rng(1234 + context_frames);
  for (int walk = 0; walk < 30; ++walk) {
    TokenMatcher matcher(cache);
    GrammarMatcher reference(cache->grammar());
    std::vector<uint32_t> mask(matcher.n_mask_words());
    for (int step = 0; step < 200 && !matcher.is_terminated(); ++step) {
      matcher.fill_next_token_mask(mask);
      ASSERT_EQ(mask, brute_force_mask(reference, *vocabulary)) << "walk " << walk << " step " << step;
      std::vector<TokenId> allowed;
      for (size_t id = 0; id < vocabulary->n_tokens(); ++id) {
        if (has_bit(mask, id)) allowed.push_back(static_cast<TokenId>(id));
      }
      ASSERT_FALSE(allowed.empty());
      TokenId token = allowed[rng() % allowed.size()];
      if (step > 40) {  // finish: the shortest completion's first byte, or the end token
        std::string rest = reference.shortest_completion();
        token = rest.empty() ? vocabulary->end_tokens()[0] : static_cast<TokenId>(static_cast<uint8_t>(rest[0]) - 0x20);
      }
      ASSERT_TRUE(matcher.accept_token(token));
      if (vocabulary->token_kind(token) == TokenKind::kNormal) {
        ASSERT_TRUE(reference.accept_bytes(vocabulary->token_bytes(token)));
      }
    }
    EXPECT_TRUE(matcher.is_terminated()) << "walk " << walk;
  }
}

INSTANTIATE_TEST_SUITE_P(ContextFrames, TokenMatcherRandomWalk,
                         ::testing::Combine(::testing::Values(1u, 2u, 4u, 8u), ::testing::Bool()));

TokenId id_of(const TokenVocabulary& vocabulary, std::string_view text) {
  for (size_t id = 0; id < vocabulary.n_tokens(); ++id) {
    if (vocabulary.token_bytes(static_cast<TokenId>(id)) == text) return static_cast<TokenId>(id);
  }
  return -1;
}

TEST(TokenMatcher, TokensSpanningSeveralSymbols) {
  GrammarBuilder builder;
  JsonGrammar json(builder);
  RuleId item = builder.add("item", sequence({literal("{\"a\":"), json.string(), literal("}")}));
  RuleId root = builder.add("root", sequence({literal("["), rule_ref(item),
                                              repeat(sequence({literal(","), rule_ref(item)}), 0, kUnbounded),
                                              literal("]")}));
  auto vocabulary = json_vocabulary();
  auto cache = std::make_shared<TokenMaskCache>(std::make_shared<const Grammar>(builder.build(root)), vocabulary);
  TokenMatcher matcher(cache);
  std::vector<uint32_t> mask(matcher.n_mask_words());
  for (std::string_view text : {"[{", "\"", "a", "\":", "\"", "abc", "\\n", "\xC3\xA9", "\"},{\"", "a", "\":", "\"\"", "}]"}) {
    TokenId token = id_of(*vocabulary, text);
    matcher.fill_next_token_mask(mask);
    ASSERT_TRUE(has_bit(mask, static_cast<size_t>(token))) << text;
    ASSERT_TRUE(matcher.accept_token(token)) << text;
  }
  EXPECT_TRUE(matcher.can_end());
  matcher.fill_next_token_mask(mask);
  TokenId end = vocabulary->end_tokens()[0];
  EXPECT_TRUE(has_bit(mask, static_cast<size_t>(end)));
  EXPECT_FALSE(has_bit(mask, static_cast<size_t>(id_of(*vocabulary, "<|im_start|>"))));
  EXPECT_TRUE(matcher.accept_token(end));
  EXPECT_TRUE(matcher.is_terminated());
  matcher.fill_next_token_mask(mask);
  for (uint32_t word : mask) EXPECT_EQ(word, 0u);
  EXPECT_FALSE(matcher.accept_token(id_of(*vocabulary, "a")));
  matcher.rollback(2);  // the end token and "}]"
  EXPECT_FALSE(matcher.is_terminated());
  EXPECT_FALSE(matcher.can_end());
  EXPECT_TRUE(matcher.accept_token(id_of(*vocabulary, "}]")));
}

TEST(TokenMatcher, RefusesSpecialUnknownAndEmptyTokens) {
  auto vocabulary = json_vocabulary();
  TokenMatcher matcher(std::make_shared<TokenMaskCache>(any_json_object(), vocabulary));
  EXPECT_FALSE(matcher.accept_token(id_of(*vocabulary, "<|im_start|>")));
  EXPECT_FALSE(matcher.accept_token(id_of(*vocabulary, "")));
  EXPECT_FALSE(matcher.accept_token(-1));
  EXPECT_FALSE(matcher.accept_token(static_cast<TokenId>(vocabulary->n_tokens())));
  EXPECT_FALSE(matcher.accept_token(vocabulary->end_tokens()[0]));
  EXPECT_FALSE(matcher.accept_token(id_of(*vocabulary, "[]")));
  EXPECT_TRUE(matcher.accept_token(id_of(*vocabulary, "{}")));
  std::vector<uint32_t> wrong_size(matcher.n_mask_words() + 1);
  EXPECT_THROW(matcher.fill_next_token_mask(wrong_size), std::invalid_argument);
}

TEST(TokenMatcher, CacheIsSharedAcrossMatchers) {
  auto cache = std::make_shared<TokenMaskCache>(any_json_object(), json_vocabulary());
  TokenMatcher first(cache), second(cache);
  std::vector<uint32_t> a(first.n_mask_words()), b(second.n_mask_words());
  first.fill_next_token_mask(a);
  size_t entries = cache->n_entries();
  second.fill_next_token_mask(b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(cache->n_entries(), entries);
}

}  // namespace
}  // namespace strata::grammar
