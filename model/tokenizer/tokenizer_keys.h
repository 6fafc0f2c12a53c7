// GGUF metadata keys of a tokenizer, spelled as llama.cpp's convert_hf_to_gguf.py
// writes them, so files made elsewhere load here and files made here load there.
// The importer (service/dev) writes these keys; read_vocab() reads them.
#pragma once

namespace strata::tokenizer_keys {

// "llama": SentencePiece-style BPE over code points with byte fallback.
// "gpt2":  byte-level BPE with merges and a regex pre-tokenizer.
inline constexpr char kModel[] = "tokenizer.ggml.model";
// Which pre-tokenizer (regex split, normalization) a "gpt2" model uses:
// "llama-bpe" (Llama 3), "qwen2" (Qwen2/Qwen3), "gpt-2", ... (pre_tokenizer.h).
inline constexpr char kPre[] = "tokenizer.ggml.pre";
inline constexpr char kTokens[] = "tokenizer.ggml.tokens";          // [string], id order
inline constexpr char kScores[] = "tokenizer.ggml.scores";          // [f32], id order
inline constexpr char kTokenTypes[] = "tokenizer.ggml.token_type";  // [i32], TokenType
inline constexpr char kMerges[] = "tokenizer.ggml.merges";          // [string] "left right"
inline constexpr char kBosId[] = "tokenizer.ggml.bos_token_id";
inline constexpr char kEosId[] = "tokenizer.ggml.eos_token_id";
inline constexpr char kEotId[] = "tokenizer.ggml.eot_token_id";
inline constexpr char kEomId[] = "tokenizer.ggml.eom_token_id";
inline constexpr char kUnknownId[] = "tokenizer.ggml.unknown_token_id";
inline constexpr char kPaddingId[] = "tokenizer.ggml.padding_token_id";
inline constexpr char kAddBos[] = "tokenizer.ggml.add_bos_token";
inline constexpr char kAddEos[] = "tokenizer.ggml.add_eos_token";
inline constexpr char kAddSpacePrefix[] = "tokenizer.ggml.add_space_prefix";
inline constexpr char kChatTemplate[] = "tokenizer.chat_template";

}  // namespace strata::tokenizer_keys
