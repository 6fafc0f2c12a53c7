#!/usr/bin/env python3
"""The bigram baseline the demo model's held-out perplexity must beat.

An interpolated bigram model over the model's own training tokens
(data/gpu/train.bin): p(b | a) = lam * count(a b) / count(a) + (1 - lam) * p1(b),
with p1 the add-one unigram. lam is chosen on data/gpu/val.bin (the held-out
stream), which makes the baseline as strong as a bigram model can be here.
Prints its token perplexity on tests/data/demo_model_heldout.json, encoded as
the test encodes it (with the leading <|endoftext|>; reference_ids.mjs), for
kMaxHeldoutPerplexity in tests/engine/demo_model_test.cpp.
"""
import argparse
import json
import os
import subprocess

import numpy as np


def bigram_nll(prev, nxt, bigrams, unigram_p, prev_counts, lam):
    """Total negative log-likelihood of next tokens `nxt` after `prev`."""
    keys = prev.astype(np.int64) * len(unigram_p) + nxt
    pair = np.array([bigrams.get(int(k), 0) for k in keys], dtype=np.float64)
    denom = np.maximum(prev_counts[prev], 1)
    p = lam * pair / denom + (1 - lam) * unigram_p[nxt]
    return float(-np.log(p).sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.join(here, "data", "gpu"))
    parser.add_argument("--tokenizer", default=os.path.join(here, "data", "tokenizer"))
    parser.add_argument("--sample", default=os.path.join(here, "..", "..", "tests", "data",
                                                         "demo_model_heldout.json"))
    args = parser.parse_args()

    with open(os.path.join(args.data, "train.json")) as f:
        vocab = json.load(f)["vocab_size"]
    train = np.fromfile(os.path.join(args.data, "train.bin"), dtype="<u2").astype(np.int64)
    val = np.fromfile(os.path.join(args.data, "val.bin"), dtype="<u2").astype(np.int64)
    unigram_p = (np.bincount(train, minlength=vocab) + 1.0) / (len(train) + vocab)
    keys, counts = np.unique(train[:-1] * vocab + train[1:], return_counts=True)
    bigrams = dict(zip(keys.tolist(), counts.tolist()))
    prev_counts = np.bincount(train[:-1], minlength=vocab)

    best = min((bigram_nll(val[:-1], val[1:], bigrams, unigram_p, prev_counts, lam) / (len(val) - 1),
                lam) for lam in np.arange(0.5, 1.0, 0.05))
    lam = best[1]
    print(f"lambda {lam:.2f}: held-out stream perplexity {np.exp(best[0]):.1f}")

    with open(args.sample, encoding="utf-8") as f:
        texts = [t["text"] for t in json.load(f)["texts"]]
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = subprocess.run(["node", os.path.join(here, "reference_ids.mjs"), "--tokenizer",
                          args.tokenizer], input=lines, check=True, capture_output=True,
                         text=True, cwd=here).stdout.splitlines()
    nll, n = 0.0, 0
    for line in out:
        ids = np.array(json.loads(line)["ids"], dtype=np.int64)
        nll += bigram_nll(ids[:-1], ids[1:], bigrams, unigram_p, prev_counts, lam)
        n += len(ids) - 1
    print(f"sample: {n} tokens, bigram perplexity {np.exp(nll / n):.1f}")


if __name__ == "__main__":
    main()
