#include "grammar/token_vocabulary.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::grammar {
namespace {

TEST(TokenVocabulary, TrieIsPreorderWithSubtreeRanges) {
  TokenVocabulary vocabulary({{"ab", TokenKind::kNormal},
                              {"a", TokenKind::kNormal},
                              {"<s>", TokenKind::kSpecial},
                              {"b", TokenKind::kNormal},
                              {"abc", TokenKind::kNormal},
                              {"", TokenKind::kNormal},
                              {"</s>", TokenKind::kEndOfSequence},
                              {"ab", TokenKind::kNormal}});
  EXPECT_EQ(vocabulary.n_tokens(), 8u);
  EXPECT_EQ(vocabulary.n_mask_words(), 1u);
  ASSERT_EQ(vocabulary.end_tokens().size(), 1u);
  EXPECT_EQ(vocabulary.end_tokens()[0], 6);
  // Nodes: a, ab, abc, b (+ sentinel). Specials, the end token and "" are left out.
  ASSERT_EQ(vocabulary.n_trie_nodes(), 4u);
  auto trie = vocabulary.trie();
  EXPECT_EQ(trie[0].byte, 'a');
  EXPECT_EQ(trie[0].subtree_end, 3u);
  EXPECT_EQ(trie[1].depth, 2u);
  EXPECT_EQ(trie[2].depth, 3u);
  EXPECT_EQ(trie[3].byte, 'b');
  std::vector<TokenId> order(vocabulary.trie_tokens().begin(), vocabulary.trie_tokens().end());
  EXPECT_EQ(order, (std::vector<TokenId>{1, 0, 7, 4, 3}));
  // "ab" holds two tokens; "a"'s subtree holds four.
  EXPECT_EQ(trie[2].tokens_begin - trie[1].tokens_begin, 2u);
  EXPECT_EQ(trie[trie[0].subtree_end].tokens_begin - trie[0].tokens_begin, 4u);
}

TEST(TokenVocabulary, BytesSortUnsigned) {
  TokenVocabulary vocabulary({{"\xC3\xA9", TokenKind::kNormal}, {"z", TokenKind::kNormal}});
  EXPECT_EQ(vocabulary.trie_tokens()[0], 1);  // 'z' (0x7A) before 0xC3
}

TEST(TokenVocabulary, RejectsEmptyVocabulary) {
  EXPECT_THROW(TokenVocabulary({}), std::invalid_argument);
}

}  // namespace
}  // namespace strata::grammar
