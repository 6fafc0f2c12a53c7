#include "model/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include "model/tokenizer/pre_tokenizer.h"
#include "tests/model/tokenizer/test_vocabs.h"

namespace strata {
namespace {

using test::add_merge;
using test::add_token;
using test::bpe_vocab;
using test::spm_byte;
using test::spm_vocab;
using Ids = std::vector<TokenId>;

constexpr EncodeOptions kPlain{.add_special = false, .parse_special = false};
constexpr EncodeOptions kParse{.add_special = false, .parse_special = true};

// --- SentencePiece ---------------------------------------------------------

TEST(SpmTokenizer, MergesHighestScoreFirst) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81", TokenType::kNormal, -100);
  const TokenId a = add_token(vocab, "a", TokenType::kNormal, -100);
  const TokenId b = add_token(vocab, "b", TokenType::kNormal, -100);
  const TokenId c = add_token(vocab, "c", TokenType::kNormal, -100);
  const TokenId ab = add_token(vocab, "ab", TokenType::kNormal, -1);
  const TokenId bc = add_token(vocab, "bc", TokenType::kNormal, -2);
  {
    Tokenizer tokenizer(vocab);
    EXPECT_EQ(tokenizer.encode("abc", kPlain), (Ids{space, ab, c}));
  }
  vocab.scores[bc] = 0;  // now "bc" wins
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("abc", kPlain), (Ids{space, a, bc}));
  (void)b;
}

TEST(SpmTokenizer, EqualScoresMergeLeftmostFirst) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  const TokenId a = add_token(vocab, "a");
  const TokenId aa = add_token(vocab, "aa", TokenType::kNormal, -1);
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("aaa", kPlain), (Ids{space, aa, a}));
}

TEST(SpmTokenizer, SpacesBecomeMetaspaceAndBosIsAdded) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  const TokenId a = add_token(vocab, "a");
  const TokenId space_a = add_token(vocab,
                                    "\xE2\x96\x81"
                                    "a",
                                    TokenType::kNormal, -1);
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("a a"), (Ids{*vocab.bos, space_a, space_a}));
  EXPECT_EQ(tokenizer.encode(" a", kPlain), (Ids{space, space_a}));
  EXPECT_EQ(tokenizer.encode("", {.add_special = true}), (Ids{*vocab.bos}));
  EXPECT_EQ(tokenizer.encode("", kPlain), Ids{});
  (void)a;
}

TEST(SpmTokenizer, UnknownCharactersFallBackToBytes) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  Tokenizer tokenizer(vocab);
  // "é" = C3 A9; a 4-byte emoji becomes 4 byte tokens.
  EXPECT_EQ(tokenizer.encode("\xC3\xA9", kPlain), (Ids{space, spm_byte(0xC3), spm_byte(0xA9)}));
  EXPECT_EQ(tokenizer.encode("\xF0\x9F\x98\x80", kPlain),
            (Ids{space, spm_byte(0xF0), spm_byte(0x9F), spm_byte(0x98), spm_byte(0x80)}));
}

TEST(SpmTokenizer, InvalidUtf8BecomesReplacementCharacter) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("\xFF", kPlain),
            (Ids{space, spm_byte(0xEF), spm_byte(0xBF), spm_byte(0xBD)}));
}

TEST(SpmTokenizer, TextAfterSpecialTokenGetsItsOwnPrefix) {
  Vocab vocab = spm_vocab();
  const TokenId space_a = add_token(vocab,
                                    "\xE2\x96\x81"
                                    "a",
                                    TokenType::kNormal, -1);
  add_token(vocab, "\xE2\x96\x81");
  add_token(vocab, "a");
  Tokenizer tokenizer(vocab);
  // Llama 2's legacy behaviour (HF and llama.cpp): "▁" before each fragment.
  EXPECT_EQ(tokenizer.encode("a</s>a", kParse), (Ids{space_a, *vocab.eos, space_a}));
}

TEST(SpmTokenizer, SpecialTokensAreTextUnlessParsed) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("<s>", kParse), (Ids{*vocab.bos}));
  EXPECT_EQ(tokenizer.encode("<s>", kPlain),
            (Ids{space, spm_byte('<'), spm_byte('s'), spm_byte('>')}));
}

TEST(SpmTokenizer, ByteTokensAreNeverMergedFromText) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  for (const char* piece : {"<", "0", "x", "4", "1", ">", "<0", "x4", "1>", "<0x4"}) {
    add_token(vocab, piece, TokenType::kNormal, -1);
  }
  Tokenizer tokenizer(vocab);
  const Ids ids = tokenizer.encode("<0x41>", kPlain);
  EXPECT_EQ(ids.front(), space);
  for (TokenId id : ids) EXPECT_NE(tokenizer.token_type(id), TokenType::kByte);
}

// --- byte-level BPE --------------------------------------------------------

TEST(BpeTokenizer, MergesLowestRankFirst) {
  Vocab vocab = bpe_vocab("gpt-2");
  const TokenId ll = add_merge(vocab, "l", "l");
  const TokenId el = add_merge(vocab, "e", "l");
  {
    Tokenizer tokenizer(vocab);
    EXPECT_EQ(tokenizer.encode("ell", kPlain), (Ids{'e', ll}));
  }
  std::swap(vocab.merges[0], vocab.merges[1]);  // "e l" now ranks first
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("ell", kPlain), (Ids{el, 'l'}));
}

TEST(BpeTokenizer, SpacesAreByteLevelCharacters) {
  Vocab vocab = bpe_vocab("gpt-2");
  const TokenId space_h = add_merge(vocab, "\xC4\xA0", "h");  // "Ġh"
  const TokenId hi = add_merge(vocab, "h", "i");
  const TokenId space_hi = add_merge(vocab, "\xC4\xA0h", "i");
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("hi hi", kPlain), (Ids{hi, space_hi}));
  EXPECT_EQ(tokenizer.decode(Ids{hi, space_hi}), "hi hi");
  (void)space_h;
}

TEST(BpeTokenizer, IgnoreMergesTakesWholeWords) {
  Vocab vocab = bpe_vocab("llama-bpe");
  const TokenId ab = add_merge(vocab, "a", "b");
  const TokenId abc = add_token(vocab, "abc");  // no merge makes it
  Tokenizer llama3(vocab);
  EXPECT_EQ(llama3.encode("abc", kPlain), (Ids{abc}));
  vocab.pre = "gpt-2";
  Tokenizer gpt2(vocab);
  EXPECT_EQ(gpt2.encode("abc", kPlain), (Ids{ab, 'c'}));
}

TEST(BpeTokenizer, Qwen2NormalizesToNfc) {
  Vocab vocab = bpe_vocab("qwen2");
  Tokenizer tokenizer(vocab);
  // "e" + U+0301 composes to "é" (C3 A9) before the byte-level split.
  EXPECT_EQ(tokenizer.encode("e\xCC\x81", kPlain), (Ids{0xC3, 0xA9}));
}

TEST(BpeTokenizer, UserDefinedTokensAlwaysMatchControlOnlyWhenParsing) {
  Vocab vocab = bpe_vocab("qwen2");
  const TokenId think = add_token(vocab, "<think>", TokenType::kUserDefined);
  const TokenId im_end = add_token(vocab, "<|im_end|>", TokenType::kControl);
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("<think>x<|im_end|>", kParse), (Ids{think, 'x', im_end}));
  const Ids plain = tokenizer.encode("<think>x<|im_end|>", kPlain);
  ASSERT_GE(plain.size(), 3u);
  EXPECT_EQ(plain[0], think);
  EXPECT_EQ(plain[1], 'x');
  EXPECT_EQ(tokenizer.decode(plain), "<think>x<|im_end|>");
}

TEST(BpeTokenizer, AddedTokensMatchLeftmostLongest) {
  Vocab vocab = bpe_vocab("gpt-2");
  const TokenId short_token = add_token(vocab, "<a>", TokenType::kControl);
  const TokenId long_token = add_token(vocab, "<a><b>", TokenType::kControl);
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("<a><b><a>", kParse), (Ids{long_token, short_token}));
}

TEST(BpeTokenizer, EndOfGenerationTokensByText) {
  Vocab vocab = bpe_vocab("qwen2");
  const TokenId endoftext = add_token(vocab, "<|endoftext|>", TokenType::kControl);
  const TokenId im_end = add_token(vocab, "<|im_end|>", TokenType::kControl);
  vocab.eot = find_eot_by_text(vocab.tokens);
  Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.eot(), im_end);  // the chat-turn end wins over <|endoftext|>
  EXPECT_TRUE(tokenizer.is_end_of_generation(endoftext));
  EXPECT_TRUE(tokenizer.is_end_of_generation(im_end));
  EXPECT_FALSE(tokenizer.is_end_of_generation('a'));
}

TEST(BpeTokenizer, UnsupportedPreTokenizerIsAnError) {
  Vocab vocab = bpe_vocab("no-such-pre");
  EXPECT_THROW(Tokenizer{vocab}, TokenizerError);
}

// --- pre-tokenizer ----------------------------------------------------------

std::vector<std::string> split(std::string_view pre, std::string_view text) {
  PreTokenizer pre_tokenizer(*find_pre_tokenizer_spec(pre));
  std::vector<std::string_view> words;
  pre_tokenizer.split(text, words);
  return {words.begin(), words.end()};
}

using Words = std::vector<std::string>;

TEST(PreTokenizer, Llama3GroupsDigitsByThree) {
  EXPECT_EQ(split("llama-bpe", "I'm 12345"), (Words{"I", "'m", " ", "123", "45"}));
  EXPECT_EQ(split("qwen2", "I'm 12345"), (Words{"I", "'m", " ", "1", "2", "3", "4", "5"}));
}

TEST(PreTokenizer, WhitespaceRunsKeepTheLastSpaceForTheNextWord) {
  EXPECT_EQ(split("llama-bpe", "a  b\n\n c"), (Words{"a", " ", " b", "\n\n", " c"}));
  EXPECT_EQ(split("gpt-2", "a  b"), (Words{"a", " ", " b"}));
}

TEST(PreTokenizer, ContractionsAreCaseInsensitive) {
  EXPECT_EQ(split("llama-bpe", "WE'LL"), (Words{"WE", "'LL"}));
  EXPECT_EQ(split("gpt-2", "WE'LL"), (Words{"WE", "'", "LL"}));  // GPT-2's are not
}

TEST(PreTokenizer, MongolianVowelSeparatorIsNotWhitespace) {
  // Oniguruma's \s excludes U+180E (PCRE2's includes it): the space before it
  // joins the punctuation-like run instead of standing alone.
  EXPECT_EQ(split("llama-bpe",
                  "a \xE1\xA0\x8E"
                  "b"),
            (Words{"a", " \xE1\xA0\x8E", "b"}));
}

TEST(PreTokenizer, TranslatesWhitespaceClasses) {
  EXPECT_EQ(
      pcre2_regex_from_hf(R"(\s+(?!\S)|[^\s\p{L}])"),
      R"([\t\n\x{0B}\f\r\x{85}\p{Z}]+(?![^\t\n\x{0B}\f\r\x{85}\p{Z}])|[^\t\n\x{0B}\f\r\x{85}\p{Z}\p{L}])");
}

}  // namespace
}  // namespace strata
