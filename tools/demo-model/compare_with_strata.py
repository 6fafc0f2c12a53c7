#!/usr/bin/env python3
"""Checks that Strata runs the trained weights as train.py's own model does.

Loads the checkpoint train.py wrote (config.json + safetensors shards) into
train.py's PyTorch Llama, and greedily continues a few plain and ChatML
prompts (up to --tokens tokens, stopping at <|endoftext|> or <|im_end|>) on
the prompt ids `strata run --json` reports; then compares with the tokens
Strata generated from a GGUF that `strata-dev import-weights` wrote from the
same checkpoint. Export the GGUF with --type f32 for this check: quantized
weights may flip near ties. Exits 1 when any continuation differs.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import Llama  # noqa: E402

PROMPTS = [("The history of the city", False), ("When the war was over, the old man", False),
           ("The committee said that the", False),
           ("The jury said the election was conducted fairly.", True),
           ("She walked to the window and looked out at the rain.", True)]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype={"BF16": "<u2", "F32": "<f4"}[info["dtype"]])
        if info["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = torch.from_numpy(raw.copy()).reshape(info["shape"])
    return out


def load_model(ckpt):
    with open(os.path.join(ckpt, "config.json")) as f:
        c = json.load(f)

    class Shape:
        vocab, hidden, layers = c["vocab_size"], c["hidden_size"], c["num_hidden_layers"]
        heads, kv_heads, ffn = c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"]
        head_dim, ctx, rope_theta = c["head_dim"], c["max_position_embeddings"], c["rope_theta"]
        norm_eps, tied, dropout = c["rms_norm_eps"], c["tie_word_embeddings"], 0.0

    model = Llama(Shape()).eval()
    state = {}
    for file in sorted(os.listdir(ckpt)):
        if file.endswith(".safetensors"):
            state.update(read_safetensors(os.path.join(ckpt, file)))
    if Shape.tied:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state)
    return model, {c["bos_token_id"], c["eos_token_id"]}


@torch.no_grad()
def greedy(model, ids, n, stops):
    ids, out = list(ids), []
    for _ in range(n):
        token = int(model(torch.tensor([ids]))[0, -1].argmax())
        out.append(token)
        ids.append(token)
        if token in stops:
            break
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="train.py's output directory")
    parser.add_argument("--gguf", required=True, help="the same weights through import-weights")
    parser.add_argument("--strata", default="build/service/strata")
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()

    model, stops = load_model(args.checkpoint)
    failed, n_compared = False, 0
    for text, chat in PROMPTS:
        command = [args.strata, "run", "-m", args.gguf, "-p", text, "-n", str(args.tokens),
                   "--temp", "0", "--json"] + (["--chat"] if chat else [])
        result = json.loads(subprocess.run(command, check=True, capture_output=True,
                                           text=True).stdout)
        ours = greedy(model, result["prompt_tokens"], args.tokens, stops)
        n_compared += len(ours)
        same = ours == result["tokens"]
        failed |= not same
        print(f"{'same' if same else 'DIFFERENT'}: {text!r} ({len(ours)} tokens)")
        if not same:
            print(f"  torch:  {ours}\n  strata: {result['tokens']}")
    print(f"{n_compared} greedy tokens compared")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
