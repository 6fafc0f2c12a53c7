#include "model/tokenizer/vocab.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/tokenizer_keys.h"

namespace strata {
namespace {

namespace keys = tokenizer_keys;

// Writes `writer` to memory and reads the vocabulary back.
Vocab round_trip(const GgufWriter& writer) {
  const std::vector<std::byte> bytes = writer.serialize();
  const GgufFile file = GgufFile::parse(bytes);
  return read_vocab(file);
}

GgufWriter llama_writer() {
  GgufWriter writer;
  writer.set(keys::kModel, "llama");
  writer.set(keys::kTokens, GgufValue::string_array({"<unk>", "<s>", "</s>",
                                                     "\xE2\x96\x81"
                                                     "a"}));
  writer.set(keys::kScores, GgufValue::f32_array({0, 0, 0, -1}));
  writer.set(keys::kTokenTypes, GgufValue::i32_array({2, 3, 3, 1}));
  return writer;
}

GgufWriter gpt2_writer(const std::string& pre) {
  GgufWriter writer;
  writer.set(keys::kModel, "gpt2");
  writer.set(keys::kPre, pre);
  writer.set(keys::kTokens, GgufValue::string_array({"a", "b", "ab", "<|begin_of_text|>",
                                                     "<|endoftext|>", "<|im_end|>"}));
  writer.set(keys::kTokenTypes, GgufValue::i32_array({1, 1, 1, 3, 3, 3}));
  writer.set(keys::kMerges, GgufValue::string_array({"a b"}));
  writer.set(keys::kBosId, uint32_t{3});
  return writer;
}

TEST(ReadVocab, SentencePieceDefaultsAreLlamaCpps) {
  const Vocab vocab = round_trip(llama_writer());
  EXPECT_EQ(vocab.model, TokenizerModel::kSentencePiece);
  EXPECT_EQ(vocab.bos, 1);
  EXPECT_EQ(vocab.eos, 2);
  EXPECT_EQ(vocab.unk, 0);
  EXPECT_TRUE(vocab.add_bos);
  EXPECT_FALSE(vocab.add_eos);
  EXPECT_TRUE(vocab.add_space_prefix);
  EXPECT_EQ(vocab.types[0], TokenType::kUnknown);
  EXPECT_EQ(vocab.scores[3], -1.0f);
}

TEST(ReadVocab, KeysOverrideDefaults) {
  GgufWriter writer = llama_writer();
  writer.set(keys::kAddBos, false);
  writer.set(keys::kAddSpacePrefix, false);
  writer.set(keys::kEosId, uint32_t{1});
  const Vocab vocab = round_trip(writer);
  EXPECT_FALSE(vocab.add_bos);
  EXPECT_FALSE(vocab.add_space_prefix);
  EXPECT_EQ(vocab.eos, 1);
}

TEST(ReadVocab, Llama3AddsBosByDefaultOthersDoNot) {
  EXPECT_TRUE(round_trip(gpt2_writer("llama-bpe")).add_bos);
  EXPECT_FALSE(round_trip(gpt2_writer("qwen2")).add_bos);
  EXPECT_FALSE(round_trip(gpt2_writer("qwen2")).add_space_prefix);
}

TEST(ReadVocab, EndOfTurnByTextUnlessNamed) {
  EXPECT_EQ(round_trip(gpt2_writer("qwen2")).eot, 5);  // <|im_end|> before <|endoftext|>
  GgufWriter writer = gpt2_writer("qwen2");
  writer.set(keys::kEotId, uint32_t{4});
  EXPECT_EQ(round_trip(writer).eot, 4);
}

TEST(ReadVocab, OutOfRangeSpecialIdIsIgnored) {
  GgufWriter writer = gpt2_writer("qwen2");
  writer.set(keys::kEosId, uint32_t{99});
  EXPECT_EQ(round_trip(writer).eos, std::nullopt);
}

TEST(ReadVocab, MalformedMetadataIsAnError) {
  GgufWriter no_model;
  no_model.set(keys::kTokens, GgufValue::string_array({"a"}));
  EXPECT_THROW(round_trip(no_model), TokenizerError);

  GgufWriter unigram = llama_writer();
  unigram.set(keys::kModel, "t5");
  EXPECT_THROW(round_trip(unigram), TokenizerError);

  GgufWriter short_scores = llama_writer();
  short_scores.set(keys::kScores, GgufValue::f32_array({0, 0}));
  EXPECT_THROW(round_trip(short_scores), TokenizerError);

  GgufWriter no_merges;
  no_merges.set(keys::kModel, "gpt2");
  no_merges.set(keys::kTokens, GgufValue::string_array({"a"}));
  EXPECT_THROW(round_trip(no_merges), TokenizerError);
}

}  // namespace
}  // namespace strata
