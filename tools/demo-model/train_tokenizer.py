#!/usr/bin/env python3
"""Trains the demo model's byte-level BPE tokenizer and writes it as Hugging Face files.

The tokenizer is Llama 3's kind: text is split with Llama 3's pre-tokenizer
regex, each piece is mapped to GPT-2's byte-level alphabet (every byte one
printable character, a space "Ġ"), and BPE merges are learned over those
pieces. Three special tokens follow the learned vocabulary: <|endoftext|>
(document separator, also BOS), <|im_start|> and <|im_end|> (ChatML turns).

Training is the classic incremental algorithm: count every distinct piece
once, keep a count for each adjacent symbol pair and the set of pieces it
occurs in, and after each merge update only the pieces that held the merged
pair. The best pair comes from a heap with stale entries skipped, so a merge
costs time in proportion to the pieces it touches, not to the corpus. Ties
break by the pair's text, so the result is the same on every machine.

Writes to --out:
  tokenizer.json         model BPE (ignore_merges, as Llama 3), the Llama 3 Split
                         regex + ByteLevel pre-tokenizer, a post-processor that
                         adds <|endoftext|> first, the ByteLevel decoder
  tokenizer_config.json  bos <|endoftext|>, eos <|im_end|>, the ChatML chat template
"""
import argparse
import collections
import heapq
import json
import os

import regex  # Debian's python3-regex: \p{L}, \p{N} as the Llama 3 regex needs

# Llama 3's tokenizer.json Split regex (model/tokenizer/pre_tokenizer.cpp: kLlama3Regex).
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
                   "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
                   "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def bytes_to_unicode():
    """GPT-2's byte -> printable character map (HF ByteLevel uses the same)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars = list(printable)
    n = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


def count_pieces(paths):
    """Distinct pre-tokenizer pieces of the corpus (as byte strings) and their counts."""
    split = regex.compile(LLAMA3_REGEX)
    counts = collections.Counter()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                counts.update(m.encode("utf-8") for m in split.findall(line))
    return counts


class BpeTrainer:
    """Incremental BPE over distinct pieces; symbols are ints indexing self.symbols."""

    def __init__(self, piece_counts, byte_chars):
        self.symbols = [byte_chars[b] for b in range(256)]  # id -> token text
        self.ids = {text: i for i, text in enumerate(self.symbols)}  # token text -> id
        self.words = [list(piece) for piece in piece_counts]  # symbol ids per piece
        self.counts = list(piece_counts.values())
        self.pair_counts = collections.Counter()
        self.pair_words = collections.defaultdict(set)  # pair -> indices of pieces holding it
        for w, word in enumerate(self.words):
            for pair in zip(word, word[1:]):
                self.pair_counts[pair] += self.counts[w]
                self.pair_words[pair].add(w)
        self.heap = [self._entry(pair) for pair in self.pair_counts]
        heapq.heapify(self.heap)
        self.merges = []

    def _entry(self, pair):
        # Highest count first; among equals the smaller (left, right) text.
        return (-self.pair_counts[pair], self.symbols[pair[0]], self.symbols[pair[1]], pair)

    def _best_pair(self):
        while self.heap:
            neg_count, _, _, pair = heapq.heappop(self.heap)
            if self.pair_counts.get(pair, 0) == -neg_count and neg_count < 0:
                return pair
        return None

    def merge_once(self):
        """Merges the most frequent pair; False when no pair is left."""
        pair = self._best_pair()
        if pair is None:
            return False
        # Two merges can spell the same token ("a"+"bc", "ab"+"c"): the second
        # reuses its id, so every token text has one id, as tokenizer.json needs.
        text = self.symbols[pair[0]] + self.symbols[pair[1]]
        new_id = self.ids.get(text)
        if new_id is None:
            new_id = len(self.symbols)
            self.symbols.append(text)
            self.ids[text] = new_id
        self.merges.append((self.symbols[pair[0]], self.symbols[pair[1]]))
        touched = set()
        for w in self.pair_words.pop(pair):
            word, count = self.words[w], self.counts[w]
            for old in zip(word, word[1:]):
                self.pair_counts[old] -= count
                touched.add(old)
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
                    merged.append(new_id)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            self.words[w] = merged
            for new in zip(merged, merged[1:]):
                self.pair_counts[new] += count
                self.pair_words[new].add(w)
                touched.add(new)
        for p in touched:
            if self.pair_counts[p] <= 0:
                del self.pair_counts[p]
                self.pair_words.pop(p, None)
            else:
                heapq.heappush(self.heap, self._entry(p))
        return True


def tokenizer_json(symbols, merges):
    first_special = len(symbols)
    added = [{"id": first_special + i, "content": text, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for i, text in enumerate(SPECIAL_TOKENS)]
    bos = SPECIAL_TOKENS[0]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [first_special], "tokens": [bos]}}},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                  "vocab": {text: i for i, text in enumerate(symbols)},
                  "merges": [[left, right] for left, right in merges]},
    }


def tokenizer_config(n_learned):
    decoder = {str(n_learned + i): {"content": text, "lstrip": False, "normalized": False,
                                    "rstrip": False, "single_word": False, "special": True}
               for i, text in enumerate(SPECIAL_TOKENS)}
    return {"added_tokens_decoder": decoder, "bos_token": "<|endoftext|>",
            "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
            "chat_template": CHATML_TEMPLATE, "clean_up_tokenization_spaces": False,
            "model_max_length": 512, "tokenizer_class": "PreTrainedTokenizerFast"}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--text", nargs="+",
                        default=[os.path.join(here, "data", "corpus", "train.txt")],
                        help="training text files (never the held-out set)")
    parser.add_argument("--vocab-size", type=int, default=8192,
                        help="total tokens: 256 bytes + merges + the special tokens")
    parser.add_argument("--out", default=os.path.join(here, "data", "tokenizer"))
    args = parser.parse_args()

    n_learned = args.vocab_size - len(SPECIAL_TOKENS)  # bytes + tokens merges make
    if n_learned <= 256:
        raise SystemExit(f"--vocab-size {args.vocab_size} leaves no room for merges")
    counts = count_pieces(args.text)
    print(f"{len(counts)} distinct pieces, {sum(counts.values())} in all")
    trainer = BpeTrainer(counts, bytes_to_unicode())
    while len(trainer.symbols) < n_learned and trainer.merge_once():
        if len(trainer.merges) % 1000 == 0:
            print(f"{len(trainer.merges)} merges, last {trainer.merges[-1]}", flush=True)
    if len(trainer.symbols) < n_learned:
        print(f"the corpus ran out of pairs after {len(trainer.merges)} merges")

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(trainer.symbols, trainer.merges), f, ensure_ascii=False, indent=1)
    with open(os.path.join(args.out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_config(len(trainer.symbols)), f, ensure_ascii=False, indent=1)
    print(f"wrote {args.out}: {len(trainer.symbols) + len(SPECIAL_TOKENS)} tokens")


if __name__ == "__main__":
    main()
