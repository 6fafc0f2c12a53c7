// libFuzzer target for the JSON request bodies: POST /v1/chat/completions and
// /v1/completions through prepare_generation (parse, render the chat, tokenize,
// check against the model's limits, as the service does before the engine sees
// a request), and POST /v1/tokenize and /v1/detokenize through their parsers.
// The model is a tiny Llama with the real Llama 2 tokenizer and chat template,
// written once with the project's writer (tests/service/server/tiny_model_file.h).
//
// Input: byte 0 picks the endpoint (bits 0-1: chat, completions, tokenize,
// detokenize) and the limits (bit 2: a 64-token context instead of 2048; bit 3:
// a KV cache of 2 blocks of 16 tokens instead of the whole context); the rest is
// the body, as the client sent it.
//
// Promises checked: nothing throws; a refusal is a 400 (404 for an unknown
// model) whose OpenAI error object names a message and serializes to JSON; an
// accepted generation fits every limit (a non-empty prompt of ids in the
// vocabulary, 1 <= max_tokens, prompt + max_tokens within the context and the
// cache, valid sampling, at most 16 non-empty stop strings), starts with BOS
// when the chat template writes one, and is the completion prompt's own ids or
// text; detokenize accepts exactly arrays of ids below the vocabulary size.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "common/str_cat.h"
#include "model/loaded_model.h"
#include "model/tokenizer/utf8.h"
#include "service/openai/chat_prompt.h"
#include "service/openai/generation_options.h"
#include "service/openai/json_fields.h"
#include "service/openai/tokenize_request.h"
#include "service/server/prepare_generation.h"
#include "tests/service/server/tiny_model_file.h"

namespace strata {
namespace {

using json = nlohmann::ordered_json;  // openai::Json: bodies keep their key order
using openai::ApiError;
using openai::Endpoint;

constexpr int64_t kBlockTokens = 16;
const std::vector<std::string> kModelNames = {"tiny", "tiny-llama.gguf"};

const LoadedModel* model = nullptr;  // from LLVMFuzzerInitialize, never freed

[[noreturn]] void fail(const std::string& what, std::string_view body) {
  std::fprintf(stderr, "request_body_fuzzer: %s\nbody: %.*s\n", what.c_str(),
               static_cast<int>(body.size()), body.data());
  std::abort();
}

void check_error(const ApiError& error, std::string_view body) {
  if (error.status != 400 && error.status != 404) fail(str_cat("status ", error.status), body);
  if (error.type.empty() || error.message.empty()) fail("an error without type or message", body);
  if (error.param && error.param->empty()) fail("an empty param", body);
  if (error.status == 404 && error.code != "model_not_found") fail("a 404 not for the model", body);
  const std::string text = openai::dump_json(openai::error_json(error));
  if (!json::accept(text)) fail("the error object is not JSON: " + text, body);
}

void check_generation(Endpoint endpoint, const json& request_body, const RequestLimits& limits,
                      std::string_view body) {
  auto result = prepare_generation(
      endpoint, request_body,
      ModelLimits{.model = *model, .request = limits, .model_names = kModelNames});
  if (auto* error = std::get_if<ApiError>(&result)) return check_error(*error, body);

  const PreparedGeneration& prepared = std::get<PreparedGeneration>(result);
  const GenerateRequest& request = prepared.request;
  const Tokenizer& tokenizer = model->tokenizer();
  const auto n_prompt = static_cast<int64_t>(request.prompt.size());
  if (n_prompt == 0) fail("an empty prompt was accepted", body);
  for (TokenId id : request.prompt) {
    if (!tokenizer.is_valid(id) || id >= limits.n_vocab) fail(str_cat("prompt id ", id), body);
  }
  if (request.max_tokens < 1 || request.max_tokens > limits.context_length - n_prompt) {
    fail(str_cat("max_tokens ", request.max_tokens, " for ", n_prompt, " prompt tokens"), body);
  }
  const int64_t n_blocks = (n_prompt + request.max_tokens + kBlockTokens - 1) / kBlockTokens;
  if (n_blocks > limits.n_kv_blocks) fail(str_cat("needs ", n_blocks, " KV blocks"), body);
  if (auto problem = request.sampling.validate()) fail("sampling: " + *problem, body);
  if (request.sampling.n_logprobs > 0 && !request.logprobs) fail("alternatives without logprobs", body);
  if (request.stop.size() > openai::GenerationOptions::kMaxStop) fail("too many stops", body);
  for (const std::string& stop : request.stop) {
    if (stop.empty()) fail("an empty stop string", body);
  }
  if (prepared.model != kModelNames.front()) fail("the reply names another model", body);
  if (!prepared.writer) fail("an accepted generation without a reply writer", body);
  // The writer answers in the endpoint's API: only a chat stream opens with a role chunk.
  if (prepared.writer->stream_start().empty() == (endpoint == Endpoint::kChatCompletions)) {
    fail("a reply writer of another endpoint", body);
  }
  if (prepared.include_usage && !request_body.contains("stream_options")) {
    fail("include_usage without stream_options", body);
  }

  if (endpoint == Endpoint::kChatCompletions) {
    // The Llama 2 template writes bos_token as text; it must become the token.
    if (request.prompt.front() != *tokenizer.bos()) fail("a chat prompt not opened by BOS", body);
    return;
  }
  const json& prompt = request_body["prompt"];
  const json& single = prompt.is_array() && prompt.size() == 1 ? prompt[0] : prompt;
  if (single.is_string()) {
    if (request.prompt !=
        tokenizer.encode(single.get<std::string>(), {.add_special = true, .parse_special = true})) {
      fail("the completion prompt is not the text's tokens", body);
    }
    return;
  }
  const json& ids = single.is_array() ? single : prompt;
  std::vector<TokenId> given;
  for (const json& id : ids) given.push_back(static_cast<TokenId>(id.get<int64_t>()));
  if (request.prompt != given) fail("the completion prompt is not the ids given", body);
}

void check_tokenize(const json& request_body, std::string_view body) {
  auto result = openai::parse_tokenize_request(request_body);
  if (auto* error = std::get_if<ApiError>(&result)) return check_error(*error, body);
  const openai::TokenizeRequest& request = std::get<openai::TokenizeRequest>(result);
  std::vector<TokenId> ids;
  if (request.chat) {
    if (request.chat->messages.empty()) fail("a chat without messages was accepted", body);
    try {
      ids = model->encode_chat(openai::chat_template_input(*request.chat)).tokens;
    } catch (const std::invalid_argument&) {
      return;  // Llama 2's template refuses roles that do not alternate
    }
  } else {
    ids = model->tokenizer().encode(
        request.prompt, {.add_special = request.add_special_tokens, .parse_special = true});
  }
  for (TokenId id : ids) {
    if (!model->tokenizer().is_valid(id)) fail(str_cat("tokenize gave id ", id), body);
  }
}

// Whether `body` is what detokenize must accept: an object whose "tokens" is an
// array of integers in [0, n_vocab). Decided from the JSON alone.
bool is_id_array(const json& request_body, int64_t n_vocab) {
  if (!request_body.is_object()) return false;
  auto it = request_body.find("tokens");
  if (it == request_body.end() || !it->is_array()) return false;
  for (const json& id : *it) {
    if (id.is_number_unsigned()) {
      if (id.get<uint64_t>() >= static_cast<uint64_t>(n_vocab)) return false;
    } else if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_vocab) {
      return false;
    }
  }
  return true;
}

void check_detokenize(const json& request_body, std::string_view body) {
  const Tokenizer& tokenizer = model->tokenizer();
  auto result = openai::parse_detokenize_request(request_body, tokenizer.n_vocab());
  const bool accepted = std::holds_alternative<std::vector<TokenId>>(result);
  if (accepted != is_id_array(request_body, tokenizer.n_vocab())) {
    fail(accepted ? "detokenize accepted a non-id" : "detokenize refused valid ids", body);
  }
  if (!accepted) return check_error(std::get<ApiError>(result), body);
  const auto& ids = std::get<std::vector<TokenId>>(result);
  if (ids.size() != request_body["tokens"].size()) fail("detokenize lost ids", body);
  if (!utf8::is_valid(tokenizer.decode(ids, {.strip_leading_space = true}))) {
    fail("detokenized text is not UTF-8", body);
  }
}

}  // namespace
}  // namespace strata

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace strata;
  set_log_level(LogLevel::kError);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    str_cat("strata_request_body_fuzzer_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "tiny-llama.gguf").string();
  testing::write_tiny_model(path);
  model = LoadedModel::open(path).release();
  std::filesystem::remove_all(dir);  // mapped: the bytes stay
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto parsed = openai::parse_json_body(body);
  if (auto* error = std::get_if<ApiError>(&parsed)) {
    check_error(*error, body);
    return 0;
  }
  const json& request_body = std::get<json>(parsed);
  const int64_t context_length = (selector & 4) != 0 ? 64 : 2048;
  const RequestLimits limits{
      .n_vocab = model->config().n_vocab,
      .context_length = context_length,
      .block_tokens = kBlockTokens,
      .n_kv_blocks = (selector & 8) != 0 ? 2 : context_length / kBlockTokens};
  switch (selector & 3) {
    case 0: check_generation(Endpoint::kChatCompletions, request_body, limits, body); break;
    case 1: check_generation(Endpoint::kCompletions, request_body, limits, body); break;
    case 2: check_tokenize(request_body, body); break;
    case 3: check_detokenize(request_body, body); break;
  }
  return 0;
}
