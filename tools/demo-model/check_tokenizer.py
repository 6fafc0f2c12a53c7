#!/usr/bin/env python3
"""Checks that Strata's tokenizer and @lenml/tokenizers encode the same ids.

The tokenizer is imported into a small random GGUF model by
`strata-dev make-model --tokenizer data/tokenizer` (the same importer that
writes the demo model), then every held-out document (plain text) and every
held-out chat sample (special-token text parsed, `strata tokenize --special`)
is encoded by `strata tokenize` and by @lenml/tokenizers (reference_ids.mjs).
Held-out text was never seen by the BPE trainer, so rare words and
punctuation take the paths a trained-on text would not. Exits 1 on the first
difference, printing both id lists.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--strata", default=os.path.join(here, "..", "..", "build", "service", "strata"))
    parser.add_argument("--strata-dev", default=os.path.join(here, "..", "..", "build", "dev", "strata-dev"))
    parser.add_argument("--tokenizer", default=os.path.join(here, "data", "tokenizer"))
    parser.add_argument("--corpus", default=os.path.join(here, "data", "corpus"))
    args = parser.parse_args()

    texts = []  # (text, parse_special)
    with open(os.path.join(args.corpus, "heldout.jsonl"), encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            texts.append(("\n\n".join(" ".join(p) for p in doc["paragraphs"]), False))
    sys.path.insert(0, here)
    from shape_data import shape  # noqa: E402
    texts += [(s["text"], True) for s in shape(os.path.join(args.corpus, "heldout.jsonl"), 0)
              if s["kind"] == "chat"]

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "tokenizer-only.gguf")
        subprocess.run([args.strata_dev, "make-model", "--tokenizer", args.tokenizer,
                        "--hidden", "64", "--layers", "1", "--heads", "4", "--kv-heads", "2",
                        "--ffn", "64", "-o", model], check=True, capture_output=True)
        lines = "".join(json.dumps({"text": t}) + "\n" for t, _ in texts)
        reference = subprocess.run(["node", os.path.join(here, "reference_ids.mjs"),
                                    "--tokenizer", args.tokenizer], input=lines, check=True,
                                   capture_output=True, text=True, cwd=here).stdout.splitlines()
        n_tokens = 0
        for (text, special), ref_line in zip(texts, reference):
            command = [args.strata, "tokenize", model, text] + (["--special"] if special else [])
            ours = json.loads(subprocess.run(command, check=True, capture_output=True,
                                             text=True).stdout)
            theirs = json.loads(ref_line)["ids"]
            if ours != theirs:
                print(f"MISMATCH on {text[:80]!r}\n strata: {ours}\n @lenml: {theirs}")
                sys.exit(1)
            n_tokens += len(ours)
    if len(reference) != len(texts):
        sys.exit(f"@lenml answered {len(reference)} of {len(texts)} texts")
    print(f"tokenizers agree: {len(texts)} held-out texts, {n_tokens} tokens")


if __name__ == "__main__":
    main()
