#!/usr/bin/env python3
"""Shapes the extracted corpus into training samples, so the chat format means something.

Two kinds of sample, each a string the tokenizer encodes as Strata would
encode a prompt (special-token text becomes the special token, and the
tokenizer puts <|endoftext|> first):

  plain  a whole document, paragraphs separated by a blank line; the model
         learns to write English and ends a document with <|endoftext|>
         (the next sample's first token).
  chat   one ChatML exchange per paragraph: the user turn holds the opening
         sentence (two when the first is short), the assistant turn the
         rest of the paragraph (continued into the next one when the rest is
         short, cut at a sentence end when long), rendered exactly as the
         chatml template renders it:
           <|im_start|>user\\n{opening}<|im_end|>\\n<|im_start|>assistant\\n{rest}<|im_end|>\\n

Samples are shuffled with a fixed seed and written as JSON lines
{"kind": "plain"|"chat", "text": ...} to OUT/train_samples.jsonl and
OUT/val_samples.jsonl (from the held-out documents), for tokenize_samples.mjs.
"""
import argparse
import json
import os
import random

MIN_OPENING_WORDS = 8      # a shorter first sentence takes the second one with it
MIN_REPLY_WORDS = 15       # a shorter rest of paragraph runs on into the next paragraph
MAX_REPLY_WORDS = 160      # a longer reply is cut at the last sentence end before this


def n_words(sentences):
    return sum(len(s.split()) for s in sentences)


def chat_text(user, assistant):
    return (f"<|im_start|>user\n{user}<|im_end|>\n"
            f"<|im_start|>assistant\n{assistant}<|im_end|>\n")


def chat_samples(doc):
    """One exchange per paragraph that has something to continue with."""
    paragraphs = doc["paragraphs"]
    samples = []
    for i, paragraph in enumerate(paragraphs):
        opening = paragraph[:1]
        if len(paragraph) > 1 and n_words(opening) < MIN_OPENING_WORDS:
            opening = paragraph[:2]
        parts = [paragraph[len(opening):]] if len(paragraph) > len(opening) else []
        j = i + 1
        while sum(n_words(p) for p in parts) < MIN_REPLY_WORDS and j < len(paragraphs):
            parts.append(paragraphs[j])
            j += 1
        if sum(n_words(p) for p in parts) < MIN_REPLY_WORDS:
            continue
        reply = whole_sentences_within(parts, MAX_REPLY_WORDS)
        samples.append({"kind": "chat", "text": chat_text(" ".join(opening), reply)})
    return samples


def whole_sentences_within(parts, max_words):
    """The paragraphs `parts` (lists of sentences) cut after the last sentence that
    ends within max_words (at least one sentence); paragraphs joined by a blank line."""
    out, words = [], 0
    for part in parts:
        kept = []
        for sentence in part:
            words += len(sentence.split())
            if (out or kept) and words > max_words:
                break
            kept.append(sentence)
        if kept:
            out.append(" ".join(kept))
        if words > max_words:
            break
    return "\n\n".join(out)


def plain_sample(doc):
    return {"kind": "plain", "text": "\n\n".join(" ".join(p) for p in doc["paragraphs"])}


def shape(jsonl_path, seed):
    samples = []
    with open(jsonl_path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            samples.append(plain_sample(doc))
            samples.extend(chat_samples(doc))
    random.Random(seed).shuffle(samples)
    return samples


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--corpus", default=os.path.join(here, "data", "corpus"),
                        help="extract_corpus.py's output")
    parser.add_argument("--out", default=os.path.join(here, "data"))
    parser.add_argument("--seed", type=int, default=1964)
    args = parser.parse_args()

    for split, name in (("train", "train_samples"), ("heldout", "val_samples")):
        samples = shape(os.path.join(args.corpus, f"{split}.jsonl"), args.seed)
        with open(os.path.join(args.out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for sample in samples:
                f.write(json.dumps(sample, ensure_ascii=False) + "\n")
        n_chat = sum(s["kind"] == "chat" for s in samples)
        print(f"{name}: {len(samples) - n_chat} plain documents, {n_chat} chat exchanges")


if __name__ == "__main__":
    main()
