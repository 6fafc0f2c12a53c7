#!/usr/bin/env python3
"""Golden logits from Hugging Face transformers for Strata's CPU forward pass.

For each config below: `strata-dev make-model` writes the model (F32 and F16)
with seeded random weights; this script reads the same GGUF files with its own
reader, loads the weights into the transformers model of that architecture
(undoing llama.cpp's Q/K row permutation for llama), runs fixed prompts in
float64, and records logits at every prompt position and a 32-token greedy
continuation. A seed is accepted only when every greedy choice wins by a clear
margin, so float32 rounding in Strata cannot flip a near tie.

Run on the GPU machine (it has torch and transformers): bench/gpu/goldens.sh.
Output: tests/data/hf_goldens.json (committed).
"""
import argparse
import inspect
import json
import os
import subprocess
import sys

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_read import read_gguf  # noqa: E402

CONFIGS = [
    dict(name="llama", arch="llama", tokenizer="llama2", hidden=256, layers=4, heads=8,
         kv_heads=2, ffn=512, ctx=1024, rope_theta=10000.0, tied=False),
    dict(name="llama_rope_scaled", arch="llama", tokenizer="llama2", hidden=256, layers=2,
         heads=4, kv_heads=2, ffn=512, ctx=1024, rope_theta=500000.0, tied=True,
         rope_scaling=8.0),
    dict(name="qwen2", arch="qwen2", tokenizer="qwen3", hidden=256, layers=4, heads=8,
         kv_heads=2, ffn=512, ctx=1024, rope_theta=1000000.0, tied=True),
    dict(name="qwen3", arch="qwen3", tokenizer="qwen3", hidden=256, layers=4, heads=8,
         kv_heads=2, head_dim=64, ffn=512, ctx=1024, rope_theta=1000000.0, tied=False),
]
PROMPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "Strata keeps KV pages in three tiers: VRAM, host RAM and NVMe. 東京 🚀",
]
N_GREEDY = 32
N_RANDOM_IDS = 32
N_TOP = 8
MIN_MARGIN = 2e-3  # logit gap between the top two choices at every greedy step


def make_model_args(cfg, seed):
    """`strata-dev make-model` arguments, less --type and -o."""
    args = ["--arch", cfg["arch"], "--tokenizer", cfg["tokenizer"], "--hidden", str(cfg["hidden"]),
            "--layers", str(cfg["layers"]), "--heads", str(cfg["heads"]),
            "--kv-heads", str(cfg["kv_heads"]), "--ffn", str(cfg["ffn"]), "--ctx", str(cfg["ctx"]),
            "--rope-theta", repr(cfg["rope_theta"]), "--seed", str(seed)]
    if "head_dim" in cfg:
        args += ["--head-dim", str(cfg["head_dim"])]
    if cfg.get("tied"):
        args += ["--tied-output"]
    if "rope_scaling" in cfg:
        args += ["--rope-scaling", "llama3", "--rope-scaling-factor", repr(cfg["rope_scaling"])]
    return args


def hf_config(cfg, meta, n_vocab):
    arch = cfg["arch"]
    head_dim = cfg.get("head_dim", cfg["hidden"] // cfg["heads"])
    cls = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "qwen3": transformers.Qwen3Config}[arch]
    kwargs = dict(vocab_size=n_vocab, hidden_size=cfg["hidden"], intermediate_size=cfg["ffn"],
                  num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
                  num_key_value_heads=cfg["kv_heads"], head_dim=head_dim,
                  max_position_embeddings=cfg["ctx"],
                  rms_norm_eps=meta[f"{arch}.attention.layer_norm_rms_epsilon"],
                  tie_word_embeddings=cfg.get("tied", False))
    if arch == "llama":
        kwargs.update(attention_bias=False, mlp_bias=False)
    rope = {"rope_type": "default"}
    if "rope_scaling" in cfg:
        rope = {"rope_type": "llama3", "factor": cfg["rope_scaling"], "low_freq_factor": 1.0,
                "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    if "rope_parameters" in inspect.signature(cls.__init__).parameters:  # transformers 5
        kwargs["rope_parameters"] = dict(rope, rope_theta=cfg["rope_theta"])
    else:
        kwargs["rope_theta"] = cfg["rope_theta"]
        if rope["rope_type"] != "default":
            kwargs["rope_scaling"] = rope
    config = cls(**kwargs)
    config._attn_implementation = "eager"  # plain softmax(QK^T)V, in float64
    return config


def unpermute_qk(w, n_head):
    """Undo llama.cpp's permute(): GGUF rotates interleaved pairs, HF rotates halves."""
    out_dim, in_dim = w.shape
    return (w.reshape(n_head, out_dim // n_head // 2, 2, in_dim).swapaxes(1, 2)
            .reshape(out_dim, in_dim))


def hf_state_dict(cfg, tensors):
    sd = {"model.embed_tokens.weight": tensors["token_embd.weight"],
          "model.norm.weight": tensors["output_norm.weight"],
          "lm_head.weight": tensors.get("output.weight", tensors["token_embd.weight"])}
    names = {"attn_norm.weight": "input_layernorm.weight",
             "ffn_norm.weight": "post_attention_layernorm.weight",
             "attn_q.weight": "self_attn.q_proj.weight", "attn_k.weight": "self_attn.k_proj.weight",
             "attn_v.weight": "self_attn.v_proj.weight",
             "attn_output.weight": "self_attn.o_proj.weight",
             "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
             "attn_v.bias": "self_attn.v_proj.bias",
             "attn_q_norm.weight": "self_attn.q_norm.weight",
             "attn_k_norm.weight": "self_attn.k_norm.weight",
             "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
             "ffn_down.weight": "mlp.down_proj.weight"}
    for layer in range(cfg["layers"]):
        for gguf_name, hf_name in names.items():
            key = f"blk.{layer}.{gguf_name}"
            if key not in tensors:
                continue
            w = tensors[key]
            if cfg["arch"] == "llama" and gguf_name == "attn_q.weight":
                w = unpermute_qk(w, cfg["heads"])
            if cfg["arch"] == "llama" and gguf_name == "attn_k.weight":
                w = unpermute_qk(w, cfg["kv_heads"])
            sd[f"model.layers.{layer}.{hf_name}"] = w
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()}


def load_hf_model(cfg, path):
    meta, tensors = read_gguf(path)
    n_vocab = tensors["token_embd.weight"].shape[0]
    model_cls = {"llama": transformers.LlamaForCausalLM, "qwen2": transformers.Qwen2ForCausalLM,
                 "qwen3": transformers.Qwen3ForCausalLM}[cfg["arch"]]
    model = model_cls(hf_config(cfg, meta, n_vocab)).to(torch.float64).eval()
    missing, unexpected = model.load_state_dict(hf_state_dict(cfg, tensors), strict=False)
    missing = [m for m in missing if not m.endswith("rotary_emb.inv_freq")]
    assert not missing and not unexpected, (missing, unexpected)
    head_dim = cfg.get("head_dim", cfg["hidden"] // cfg["heads"])
    check_rope_freqs(model, cfg, tensors.get("rope_freqs.weight", np.ones(head_dim // 2)))
    return model, n_vocab


def check_rope_freqs(model, cfg, factors):
    """HF's inv_freq must equal base^(-2i/d) / factor_i (factors from rope_freqs.weight, or
    1): proves the config reached the model whatever the transformers version."""
    head_dim = cfg.get("head_dim", cfg["hidden"] // cfg["heads"])
    base = cfg["rope_theta"]
    expected = 1.0 / (base ** (np.arange(0, head_dim, 2) / head_dim)) / factors
    got = model.model.rotary_emb.inv_freq.double().numpy()
    assert np.allclose(got, expected, rtol=1e-5), (got, expected)


@torch.no_grad()
def run_prompt(model, ids):
    """Logits at every prompt position, then a greedy continuation."""
    prompt_logits = model(torch.tensor([ids])).logits[0].numpy()
    seq, greedy, margins = list(ids), [], []
    logits = prompt_logits[-1]
    for _ in range(N_GREEDY):
        top2 = np.sort(logits)[-2:]
        margins.append(float(top2[1] - top2[0]))
        token = int(np.argmax(logits))
        greedy.append(token)
        seq.append(token)
        logits = model(torch.tensor([seq])).logits[0, -1].numpy()
    return prompt_logits, greedy, min(margins)


def position_record(logits_row, random_ids):
    top = [int(i) for i in np.argsort(-logits_row)[:N_TOP]]
    ids = top + [i for i in random_ids if i not in top]
    return {"ids": ids, "logits": [round(float(logits_row[i]), 6) for i in ids]}


def golden_for_config(cfg, strata_dev, tokenizer_dirs, work, base_seed):
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(os.path.join(tokenizer_dirs[cfg["tokenizer"]], "tokenizer.json"))
    for seed in range(base_seed, base_seed + 20):
        paths, results = {}, {}
        for wtype in ("f32", "f16"):
            args = make_model_args(cfg, seed) + ["--type", wtype]
            args[args.index("--tokenizer") + 1] = tokenizer_dirs[cfg["tokenizer"]]
            paths[wtype] = os.path.join(work, f"{cfg['name']}_{wtype}.gguf")
            subprocess.run([strata_dev, "make-model", *args, "-o", paths[wtype]], check=True)
        rng = np.random.default_rng(seed)
        prompts, worst = [], float("inf")
        models = {w: load_hf_model(cfg, p) for w, p in paths.items()}
        n_vocab = models["f32"][1]
        for text in PROMPTS:
            ids = tokenizer.encode(text).ids
            random_ids = [int(i) for i in rng.choice(n_vocab, N_RANDOM_IDS, replace=False)]
            record = {"text": text, "ids": ids}
            for wtype, (model, _) in models.items():
                logits, greedy, margin = run_prompt(model, ids)
                worst = min(worst, margin)
                record[f"positions_{wtype}"] = [position_record(row, random_ids) for row in logits]
                record[f"greedy_{wtype}"] = greedy
            prompts.append(record)
        print(f"{cfg['name']} seed {seed}: smallest greedy margin {worst:.5f}", flush=True)
        if worst >= MIN_MARGIN:
            return {"name": cfg["name"], "seed": seed, "min_greedy_margin": worst,
                    "make_model_args": make_model_args(cfg, seed),
                    "n_vocab": n_vocab, "prompts": prompts}
    raise RuntimeError(f"{cfg['name']}: no seed gave clear greedy margins")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strata-dev", required=True, help="path to the strata-dev binary")
    parser.add_argument("--tokenizers", required=True,
                        help="folder holding tokenizer-NAME/models/tokenizer.json")
    parser.add_argument("--work", default="/tmp/strata-goldens")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tokenizer_dirs = {name: os.path.join(args.tokenizers, f"tokenizer-{name}", "models")
                      for name in ("llama2", "llama3", "qwen3")}
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    goldens = {"generator": "tools/hf_goldens/make_goldens.py",
               "transformers": transformers.__version__, "torch": torch.__version__,
               "dtype": "float64", "models": []}
    for cfg in CONFIGS:
        goldens["models"].append(golden_for_config(cfg, args.strata_dev, tokenizer_dirs, args.work, 11))
    with open(args.output, "w") as f:
        json.dump(goldens, f, separators=(",", ":"))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
