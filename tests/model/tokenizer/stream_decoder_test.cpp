#include "model/tokenizer/stream_decoder.h"

#include <gtest/gtest.h>

#include "tests/model/tokenizer/test_vocabs.h"

namespace strata {
namespace {

using test::add_token;
using test::bpe_vocab;
using test::spm_byte;
using test::spm_vocab;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

TEST(StreamDecoder, EmojiFromByteFallbackTokensAppearsWhole) {
  Tokenizer tokenizer(spm_vocab());
  StreamDecoder decoder(tokenizer);
  // U+1F600 = F0 9F 98 80, one byte token each.
  EXPECT_EQ(decoder.feed(spm_byte(0xF0)), "");
  EXPECT_EQ(decoder.feed(spm_byte(0x9F)), "");
  EXPECT_EQ(decoder.feed(spm_byte(0x98)), "");
  EXPECT_EQ(decoder.feed(spm_byte(0x80)), "\xF0\x9F\x98\x80");
  EXPECT_EQ(decoder.flush(), "");
}

TEST(StreamDecoder, CharacterSplitAcrossByteLevelTokens) {
  Vocab vocab = bpe_vocab("gpt-2");
  // "中" = E4 B8 AD: one token for E4 B8, one for AD followed by "a".
  const TokenId head = add_token(vocab, byte_level_encode("\xE4\xB8"));
  const TokenId tail = add_token(vocab, byte_level_encode("\xAD"
                                                          "a"));
  Tokenizer tokenizer(vocab);
  StreamDecoder decoder(tokenizer);
  EXPECT_EQ(decoder.feed('x'), "x");
  EXPECT_EQ(decoder.feed(head), "");
  EXPECT_EQ(decoder.feed(tail),
            "\xE4\xB8\xAD"
            "a");
}

TEST(StreamDecoder, InvalidBytesBecomeReplacementWithoutStalling) {
  Tokenizer tokenizer(bpe_vocab("gpt-2"));
  StreamDecoder decoder(tokenizer);
  EXPECT_EQ(decoder.feed(0x80), kReplacement);  // can never start a character
  EXPECT_EQ(decoder.feed('a'), "a");
  EXPECT_EQ(decoder.feed(0xF0), "");
  EXPECT_EQ(decoder.feed(0x9F), "");
  // F0 9F followed by 'b' is one invalid maximal subpart.
  EXPECT_EQ(decoder.feed('b'), std::string(kReplacement) + "b");
}

TEST(StreamDecoder, IncompleteTailIsReplacedOnlyAtFlush) {
  Tokenizer tokenizer(bpe_vocab("gpt-2"));
  StreamDecoder decoder(tokenizer);
  EXPECT_EQ(decoder.feed(0xE4), "");
  EXPECT_EQ(decoder.feed(0xB8), "");
  EXPECT_EQ(decoder.flush(), kReplacement);
  EXPECT_EQ(decoder.flush(), "");
  EXPECT_EQ(decoder.feed('z'), "z");  // a fresh stream after flush
}

TEST(StreamDecoder, ControlTokensRenderOnlyWhenAsked) {
  Vocab vocab = spm_vocab();
  const TokenId hello = add_token(vocab, "\xE2\x96\x81Hello");
  Tokenizer tokenizer(vocab);
  StreamDecoder plain(tokenizer);
  EXPECT_EQ(plain.feed(*vocab.bos), "");
  EXPECT_EQ(plain.feed(hello), " Hello");
  StreamDecoder special(tokenizer, {.render_special = true});
  EXPECT_EQ(special.feed(*vocab.bos), "<s>");
}

TEST(StreamDecoder, StripsOnlyTheFirstLeadingSpace) {
  Vocab vocab = spm_vocab();
  const TokenId space = add_token(vocab, "\xE2\x96\x81");
  const TokenId hello = add_token(vocab, "\xE2\x96\x81Hello");
  Tokenizer tokenizer(vocab);
  const std::vector<TokenId> ids = {*vocab.bos, space, hello, hello};
  EXPECT_EQ(tokenizer.decode(ids, {.strip_leading_space = true}), " Hello Hello");
  EXPECT_EQ(tokenizer.decode(ids), "  Hello Hello");
}

}  // namespace
}  // namespace strata
