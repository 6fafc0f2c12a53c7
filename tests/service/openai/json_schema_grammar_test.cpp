#include "service/openai/json_schema_grammar.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dev/hf_tokenizer_import.h"
#include "grammar/grammar_matcher.h"
#include "grammar/token_matcher.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/support/temp_folder.h"

namespace strata::openai {
namespace {

namespace g = strata::grammar;

bool matches(const g::Grammar& grammar, std::string_view text) {
  g::GrammarMatcher matcher(std::make_shared<const g::Grammar>(grammar));
  return matcher.accept_bytes(text) && matcher.can_end();
}

Json parse(std::string_view text) { return Json::parse(text); }

TEST(JsonSchemaGrammar, PropertiesInSchemaOrderRequiredAndOptional) {
  g::Grammar grammar = json_schema_grammar(parse(R"({"type": "object", "properties": {
      "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}},
      "required": ["b"]})"));
  EXPECT_TRUE(matches(grammar, R"({"b":1})"));
  EXPECT_TRUE(matches(grammar, R"({"a":"x","b":1,"c":true})"));
  EXPECT_TRUE(matches(grammar, R"({"a": "x", "b": -1})"));
  EXPECT_TRUE(matches(grammar, R"({"b":1, "c":false})"));
  EXPECT_FALSE(matches(grammar, R"({"a":"x"})"));            // b is required
  EXPECT_FALSE(matches(grammar, R"({"b":1,"a":"x"})"));      // schema order
  EXPECT_FALSE(matches(grammar, R"({"b":1,"d":2})"));        // strict: no others
  EXPECT_FALSE(matches(grammar, R"({ "b":1})"));             // whitespace rule
  EXPECT_FALSE(matches(grammar, R"({"b":1,  "c":true})"));
  EXPECT_FALSE(matches(grammar, R"({"b":1.5})"));
}

TEST(JsonSchemaGrammar, AdditionalPropertiesDefaultIsAnOption) {
  Json schema = parse(R"({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})");
  EXPECT_FALSE(matches(json_schema_grammar(schema), R"({"id":1,"x":"y"})"));
  g::Grammar open = json_schema_grammar(schema, {.strict_additional_properties = false});
  EXPECT_TRUE(matches(open, R"({"id":1,"x":"y","z":[1,{"a":null}]})"));
  EXPECT_FALSE(matches(open, R"({"id":1,"id":2})"));  // no second "id"
  EXPECT_TRUE(matches(open, R"({"id":1,"idx":2})"));
}

TEST(JsonSchemaGrammar, RecursiveReferences) {
  g::Grammar grammar = json_schema_grammar(parse(R"({"type": "object", "properties": {
      "value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
      "required": ["value", "next"], "additionalProperties": false})"));
  EXPECT_TRUE(matches(grammar, R"({"value":1,"next":{"value":2,"next":null}})"));
  EXPECT_FALSE(matches(grammar, R"({"value":1,"next":{"value":2}})"));
}

TEST(JsonSchemaGrammar, ArraysWithBoundsAndPrefixItems) {
  g::Grammar grammar = json_schema_grammar(parse(R"({"type": "array", "prefixItems": [{"type": "string"}],
      "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})"));
  EXPECT_TRUE(matches(grammar, R"(["a",1])"));
  EXPECT_TRUE(matches(grammar, R"(["a", 1, 2])"));
  EXPECT_FALSE(matches(grammar, R"(["a"])"));
  EXPECT_FALSE(matches(grammar, R"(["a",1,2,3])"));
  EXPECT_FALSE(matches(grammar, R"([1,1])"));
}

TEST(JsonSchemaGrammar, EnumConstAndFormats) {
  g::Grammar grammar = json_schema_grammar(parse(R"({"type": "object", "properties": {
      "e": {"enum": ["x", 2, null]}, "c": {"const": {"k": [1]}}, "d": {"type": "string", "format": "date"}},
      "required": ["e", "c", "d"]})"));
  EXPECT_TRUE(matches(grammar, R"({"e":null,"c":{"k":[1]},"d":"2024-02-28"})"));
  EXPECT_FALSE(matches(grammar, R"({"e":"y","c":{"k":[1]},"d":"2024-02-28"})"));
  EXPECT_FALSE(matches(grammar, R"({"e":2,"c":{"k":[1]},"d":"2024-02-30"})"));
}

TEST(JsonSchemaGrammar, JsonObjectIsAnyObject) {
  g::Grammar grammar = json_object_grammar();
  EXPECT_TRUE(matches(grammar, R"({})"));
  EXPECT_TRUE(matches(grammar, R"({"a":[1,"b",{"c":null}], "d":true})"));
  EXPECT_FALSE(matches(grammar, R"([])"));
}

struct BadSchema {
  const char* schema;
  const char* pointer;
  const char* words;  // expected in the message
};

class JsonSchemaErrors : public ::testing::TestWithParam<BadSchema> {};

TEST_P(JsonSchemaErrors, NameTheKeywordAndItsPointer) {
  const BadSchema& bad = GetParam();
  try {
    json_schema_grammar(parse(bad.schema));
    FAIL() << "accepted " << bad.schema;
  } catch (const JsonSchemaError& error) {
    EXPECT_EQ(error.pointer(), bad.pointer) << error.what();
    EXPECT_NE(std::string(error.what()).find(bad.words), std::string::npos) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Unsupported, JsonSchemaErrors,
    ::testing::Values(
        BadSchema{R"({"type": "object", "properties": {"x": {"not": {"type": "null"}}}})", "/properties/x/not", "'not'"},
        BadSchema{R"({"type": "object", "patternProperties": {"^a": {}}})", "/patternProperties", "'patternProperties'"},
        BadSchema{R"({"type": "array", "items": {"type": "integer", "multipleOf": 3}})", "/items/multipleOf", "'multipleOf'"},
        BadSchema{R"({"type": "array", "uniqueItems": true})", "/uniqueItems", "'uniqueItems'"},
        BadSchema{R"({"properties": {"a/b": {"if": {}}}})", "/properties/a~1b/if", "'if'"},
        BadSchema{R"({"type": "string", "format": "hostname"})", "/format", "'hostname'"},
        BadSchema{R"({"type": "string", "pattern": "(?<=a)b"})", "/pattern", "lookaround"},
        BadSchema{R"({"$ref": "https://example.com/schema"})", "/$ref", "within the schema"},
        BadSchema{R"({"$ref": "#/$defs/missing"})", "/$ref", "leads nowhere"},
        BadSchema{R"({"type": "string", "minLength": 5, "maxLength": 2})", "", "minLength"},
        BadSchema{R"({"type": "integer", "minimum": 5, "exclusiveMaximum": 5})", "", "no integer"},
        BadSchema{R"({"type": "tuple"})", "/type", "unknown type"},
        BadSchema{R"({"type": "object", "properties": {"a": {}}, "required": ["b"]})", "/required/0", "'b'"},
        BadSchema{R"({"anyOf": []})", "/anyOf", "non-empty"},
        BadSchema{R"({"type": "object", "properties": {"self": {"$ref": "#"}}, "required": ["self"]})", "", "no finite"},
        BadSchema{R"({"anyOf": [{"$ref": "#"}, {"type": "null"}]})", "", "no finite"},
        BadSchema{R"(false)", "", "false"}));

// --- The acceptance test: random models under real vocabularies, checked by ajv. ---

// A tokenizer as a model carries it: HF files -> GGUF metadata -> Tokenizer.
std::shared_ptr<const g::TokenVocabulary> load_vocabulary(const std::string& name) {
  GgufWriter writer;
  for (auto& [key, value] : import_hf_tokenizer(resolve_hf_tokenizer_dir(name))) writer.set(key, std::move(value));
  std::vector<std::byte> bytes = writer.serialize();
  GgufFile file = GgufFile::parse(bytes);
  std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_gguf(file);
  std::vector<g::VocabularyToken> tokens(static_cast<size_t>(tokenizer->n_vocab()));
  for (TokenId id = 0; id < tokenizer->n_vocab(); ++id) {
    g::VocabularyToken& token = tokens[static_cast<size_t>(id)];
    switch (tokenizer->token_type(id)) {
      case TokenType::kNormal:
      case TokenType::kByte:
      case TokenType::kUserDefined:
        token = {tokenizer->token_bytes(id), g::TokenKind::kNormal};
        break;
      default:
        token.kind = tokenizer->is_end_of_generation(id) ? g::TokenKind::kEndOfSequence : g::TokenKind::kSpecial;
    }
  }
  return std::make_shared<const g::TokenVocabulary>(std::move(tokens));
}

enum class ModelKind { kUniform, kStructural, kShort };

struct SamplingStats {
  size_t n_masks = 0;
  double mask_seconds = 0;
};

bool has_bit(const std::vector<uint32_t>& mask, size_t id) { return (mask[id / 32] >> (id % 32)) & 1; }

// One output of a random model: uniform over the allowed tokens, or (kStructural) half the
// time over those with JSON punctuation, or (kShort) over tokens of one or two bytes.
// Past `length_cap` tokens it follows the shortest completion, longest token first.
std::string generate(const std::shared_ptr<g::TokenMaskCache>& cache, ModelKind kind, uint32_t seed,
                     size_t length_cap, SamplingStats& stats) {
  const g::TokenVocabulary& vocabulary = cache->vocabulary();
  g::TokenMatcher matcher(cache);
  std::mt19937 rng(seed);
  std::vector<uint32_t> mask(matcher.n_mask_words());
  std::string text;
  for (size_t step = 0; !matcher.is_terminated(); ++step) {
    auto start = std::chrono::steady_clock::now();
    matcher.fill_next_token_mask(mask);
    stats.mask_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++stats.n_masks;
    std::vector<g::TokenId> allowed, preferred;
    for (size_t id = 0; id < vocabulary.n_tokens(); ++id) {
      if (!has_bit(mask, id)) continue;
      auto token = static_cast<g::TokenId>(id);
      allowed.push_back(token);
      std::string_view bytes = vocabulary.token_bytes(token);
      bool structural = bytes.find_first_of("{}[]\",:") != std::string_view::npos;
      if ((kind == ModelKind::kStructural && structural) || (kind == ModelKind::kShort && bytes.size() <= 2)) {
        preferred.push_back(token);
      }
    }
    EXPECT_FALSE(allowed.empty()) << "no token allowed after: " << text;
    if (allowed.empty()) break;
    g::TokenId token = allowed[rng() % allowed.size()];
    if (!preferred.empty() && (kind == ModelKind::kShort || rng() % 2 == 0)) token = preferred[rng() % preferred.size()];
    if (step >= length_cap) {
      std::string rest = matcher.byte_matcher().shortest_completion();
      token = rest.empty() ? vocabulary.end_tokens()[0] : -1;
      size_t best = 0;
      for (g::TokenId candidate : allowed) {
        std::string_view bytes = vocabulary.token_bytes(candidate);
        if (!rest.empty() && bytes.size() > best && std::string_view(rest).starts_with(bytes)) {
          best = bytes.size();
          token = candidate;
        }
      }
      EXPECT_GE(token, 0) << "the mask allows no token of the shortest completion \"" << rest << "\"";
      if (token < 0) break;
    }
    EXPECT_TRUE(matcher.accept_token(token));
    if (vocabulary.token_kind(token) == g::TokenKind::kNormal) text += vocabulary.token_bytes(token);
  }
  return text;
}

std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(STRATA_SOURCE_DIR "/tests/data/json_schemas")) {
    if (entry.path().extension() == ".json") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  pclose(pipe);
  return out;
}

struct CorpusRun {
  const char* tokenizer;
  uint32_t outputs_per_schema;
};

class JsonSchemaCorpus : public ::testing::TestWithParam<CorpusRun> {};

// STRATA_CORPUS_OUTPUTS=N caps the outputs per schema: the sanitizer build checks memory,
// not coverage, and builds masks several times slower.
uint32_t outputs_per_schema(uint32_t wanted) {
  const char* cap = std::getenv("STRATA_CORPUS_OUTPUTS");
  return cap != nullptr ? std::min(wanted, static_cast<uint32_t>(std::atoi(cap))) : wanted;
}

TEST_P(JsonSchemaCorpus, EveryOutputParsesAndValidates) {
  CorpusRun run = GetParam();
  run.outputs_per_schema = outputs_per_schema(run.outputs_per_schema);
  auto vocabulary = load_vocabulary(run.tokenizer);
  std::vector<std::filesystem::path> files = corpus_files();
  ASSERT_GE(files.size(), 50u);
  Json batch = {{"cases", Json::array()}};
  SamplingStats stats;
  size_t n_outputs = 0;
  for (const std::filesystem::path& path : files) {
    SCOPED_TRACE(path.filename().string());
    Json schema = Json::parse(std::ifstream(path));
    auto grammar = std::make_shared<const g::Grammar>(json_schema_grammar(schema));
    auto cache = std::make_shared<g::TokenMaskCache>(grammar, vocabulary);
    Json outputs = Json::array();
    for (uint32_t i = 0; i < run.outputs_per_schema; ++i) {
      auto kind = static_cast<ModelKind>(i % 3);
      size_t cap = 8 + (i * 37) % 120;
      std::string text = generate(cache, kind, 1000 * i + static_cast<uint32_t>(n_outputs), cap, stats);
      Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      EXPECT_FALSE(parsed.is_discarded()) << "nlohmann cannot parse: " << text;
      outputs.push_back(text);
      ++n_outputs;
    }
    batch["cases"].push_back({{"name", path.filename().string()}, {"schema", schema}, {"outputs", outputs}});
  }
  std::printf("%s: %zu outputs, %zu masks, %.1f us per mask on average\n", run.tokenizer, n_outputs,
              stats.n_masks, 1e6 * stats.mask_seconds / static_cast<double>(stats.n_masks));

  testing::TempFolder folder("json-schema-corpus");
  std::string batch_path = folder.path() + "/batch.json";
  std::ofstream(batch_path) << batch.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string report = run_command(std::string(STRATA_NODE_EXECUTABLE) + " " + STRATA_SOURCE_DIR +
                                   "/tools/node/json_schema_check.mjs " + batch_path);
  Json results = Json::parse(report, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(results.is_object() && results.contains("results")) << "the checker failed: " << report;
  ASSERT_EQ(results["results"].size(), files.size());
  for (const Json& result : results["results"]) {
    EXPECT_EQ(result["n_invalid"].get<int>(), 0) << result.dump(2);
    EXPECT_EQ(result["n_outputs"].get<uint32_t>(), run.outputs_per_schema);
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, JsonSchemaCorpus,
                         ::testing::Values(CorpusRun{"qwen3", 12}, CorpusRun{"llama3", 6}),
                         [](const auto& info) { return std::string(info.param.tokenizer); });

}  // namespace
}  // namespace strata::openai
