#!/usr/bin/env python3
"""Trains Strata's demo model: a small Llama on the shaped Brown Corpus token stream.

The model is a plain Llama in Hugging Face's layout and names (RMSNorm, RoPE
rotating halves as transformers does, SwiGLU, grouped-query attention, tied
embeddings by default), so its weights load into transformers'
LlamaForCausalLM unchanged and `strata-dev import-weights` converts them to
GGUF as llama.cpp converts any HF Llama (Q/K rows permuted for GGUF's RoPE).

Training runs for a fixed time budget (--minutes), not a step count: after
a few warm-up steps the measured step rate fixes the number of steps (at most
--max-epochs passes over the data), and the cosine learning-rate schedule is
laid over exactly those steps. The held-out loss is measured every
--eval-every steps over the whole validation stream, and the weights with the
lowest held-out loss are the ones saved (a corpus of 1M words is overfitted
long before a GPU's quarter hour is up).

Output in --out (each file under --shard-mib MiB):
  config.json                        LlamaConfig as transformers writes it
  model-0000N-of-0000M.safetensors   bf16 weights, HF names, sharded
  model.safetensors.index.json       which shard holds which tensor
  train_report.json                  shape, parameters, steps, time, held-out loss
                                     curve, best held-out loss, the transformers
                                     cross-check when transformers is installed

Works with torch 1.13 (CPU smoke test) and 2.x (CUDA, bf16 autocast,
torch.compile when it works, fused AdamW, flash attention through
scaled_dot_product_attention).
"""
import argparse
import inspect
import json
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------- the model

class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        # In float32 as transformers' LlamaRMSNorm, whatever autocast does.
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.heads, cfg.kv_heads, cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden, cfg.heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden, cfg.kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden, cfg.kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.heads * cfg.head_dim, cfg.hidden, bias=False)
        self.dropout = cfg.dropout
        self.has_sdpa = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)  # [t, head_dim]; keep autocast's dtype
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.n_kv_heads != self.n_heads:
            repeat = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(repeat, dim=1)
            v = v.repeat_interleave(repeat, dim=1)
        p = self.dropout if self.training else 0.0
        if self.has_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            probs = F.dropout(scores.masked_fill(mask, float("-inf")).softmax(-1), p)
            y = probs @ v
        return self.o_proj(y.transpose(1, 2).reshape(b, t, -1))


class Mlp(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.up_proj = nn.Linear(cfg.hidden, cfg.ffn, bias=False)
        self.down_proj = nn.Linear(cfg.ffn, cfg.hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.mlp = Mlp(cfg)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x, cos, sin):
        x = x + self.dropout(self.self_attn(self.input_layernorm(x), cos, sin))
        return x + self.dropout(self.mlp(self.post_attention_layernorm(x)))


class LlamaBody(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab, cfg.hidden)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden, cfg.norm_eps)


class Llama(nn.Module):
    """Parameter names as transformers' LlamaForCausalLM (model.*, lm_head)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = LlamaBody(cfg)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab, bias=False)
        if cfg.tied:
            self.lm_head.weight = self.model.embed_tokens.weight
        inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2).float() / cfg.head_dim))
        angles = torch.outer(torch.arange(cfg.ctx).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)  # [ctx, head_dim], halves as transformers
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        self.apply(self._init)
        # GPT-2's scaled init of the projections that write into the residual stream.
        for name, p in self.named_parameters():
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.model.norm(x))


class Shape:
    """The model's hyperparameters, from the command line."""

    def __init__(self, args, vocab):
        self.vocab, self.hidden, self.layers = vocab, args.hidden, args.layers
        self.heads, self.kv_heads, self.ffn = args.heads, args.kv_heads, args.ffn
        self.head_dim = args.hidden // args.heads
        self.ctx, self.rope_theta, self.norm_eps = args.ctx, args.rope_theta, 1e-5
        self.tied, self.dropout = not args.untied, args.dropout
        if args.hidden % args.heads or args.heads % args.kv_heads or self.head_dim % 2:
            raise SystemExit("--hidden must split into --heads of even size, and --heads "
                             "into --kv-heads groups")


def hf_config(shape, special):
    """config.json as transformers' LlamaConfig.save_pretrained writes it."""
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": shape.vocab, "hidden_size": shape.hidden,
        "intermediate_size": shape.ffn, "num_hidden_layers": shape.layers,
        "num_attention_heads": shape.heads, "num_key_value_heads": shape.kv_heads,
        "head_dim": shape.head_dim, "max_position_embeddings": shape.ctx,
        "rms_norm_eps": shape.norm_eps, "rope_theta": shape.rope_theta, "rope_scaling": None,
        "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
        "attention_dropout": 0.0, "initializer_range": 0.02,
        "tie_word_embeddings": shape.tied, "torch_dtype": "bfloat16",
        "bos_token_id": special["<|endoftext|>"], "eos_token_id": special["<|im_end|>"],
        "pad_token_id": special["<|endoftext|>"],
    }


# ---------------------------------------------------------------- data

def load_stream(data_dir, name):
    with open(os.path.join(data_dir, f"{name}.json")) as f:
        meta = json.load(f)
    ids = np.fromfile(os.path.join(data_dir, f"{name}.bin"), dtype="<u2")
    if len(ids) != meta["n_tokens"]:
        raise SystemExit(f"{name}.bin holds {len(ids)} tokens, {name}.json says {meta['n_tokens']}")
    return torch.from_numpy(ids.astype(np.int64)), meta


def random_batch(stream, batch, ctx, generator):
    """`batch` random windows of ctx + 1 tokens; inputs and next-token targets."""
    starts = torch.randint(0, len(stream) - ctx - 1, (batch,), generator=generator,
                           device=stream.device)
    windows = stream[starts[:, None] + torch.arange(ctx + 1, device=stream.device)]
    return windows[:, :-1], windows[:, 1:]


@torch.no_grad()
def heldout_loss(model, stream, ctx, batch, autocast):
    """Mean next-token loss over the whole held-out stream in non-overlapping windows."""
    model.eval()
    n_windows = (len(stream) - 1) // ctx
    total, count = 0.0, 0
    for first in range(0, n_windows, batch):
        idx = torch.arange(first, min(first + batch, n_windows), device=stream.device)
        windows = stream[idx[:, None] * ctx + torch.arange(ctx + 1, device=stream.device)]
        with autocast():
            logits = model(windows[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                               windows[:, 1:].reshape(-1), reduction="sum")
        total += loss.item()
        count += windows[:, 1:].numel()
    model.train()
    return total / count


# ---------------------------------------------------------------- saving

def write_safetensors(path, tensors):
    """The safetensors format: u64 little-endian header length, JSON header, raw data."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, t in tensors.items():
        t = t.detach().to("cpu", torch.bfloat16).contiguous()
        blob = t.view(torch.int16).numpy().astype("<i2").tobytes()
        header[name] = {"dtype": "BF16", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)  # data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for blob in blobs:
            f.write(blob)


def save_weights(out_dir, state, shard_bytes):
    """bf16 shards of at most shard_bytes each and HF's index of them."""
    shards, current, size = [], {}, 0
    for name, t in state.items():
        n = t.numel() * 2
        if current and size + n > shard_bytes:
            shards.append(current)
            current, size = {}, 0
        current[name] = t
        size += n
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        file = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_safetensors(os.path.join(out_dir, file), shard)
        weight_map.update({name: file for name in shard})
    total = sum(t.numel() * 2 for t in state.values())
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    return [f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]


def exported_state(model):
    """The state dict as transformers saves it: lm_head left out when tied."""
    state = {k: v for k, v in model.state_dict().items()}
    if model.cfg.tied:
        state.pop("lm_head.weight", None)
    return state


def check_against_transformers(out_dir, model, stream, ctx):
    """Loads the saved config and weights into transformers' LlamaForCausalLM and
    compares logits with this script's model in float32: proves the layout is HF's."""
    try:
        import transformers
    except ImportError:
        return {"skipped": "transformers is not installed"}
    try:
        config = transformers.AutoConfig.from_pretrained(out_dir)
        config._attn_implementation = "eager"
        hf = transformers.LlamaForCausalLM(config).float().eval()
        state = {k: v.float().cpu() for k, v in exported_state(model).items()}
        missing, unexpected = hf.load_state_dict(state, strict=False)
        missing = [m for m in missing if not m.endswith("inv_freq") and m != "lm_head.weight"]
        if missing or unexpected:
            return {"error": f"missing {missing}, unexpected {unexpected}"}
        mine = Llama(model.cfg).float().eval()
        mine.load_state_dict({k: v.float().cpu() for k, v in model.state_dict().items()})
        ids = stream[:ctx].cpu()[None]
        with torch.no_grad():
            diff = (hf(ids).logits - mine(ids)).abs().max().item()
        return {"transformers": transformers.__version__, "max_abs_logit_diff": diff}
    except Exception as e:  # a report, never a reason to lose the trained weights
        return {"error": repr(e)}


# ---------------------------------------------------------------- training

def learning_rate(step, warmup, total, peak, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return floor + 0.5 * (peak - floor) * (1 + math.cos(math.pi * progress))


def make_optimizer(model, args, device):
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    extra = {}
    if device.type == "cuda" and "fused" in inspect.signature(torch.optim.AdamW).parameters:
        extra["fused"] = True
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), eps=1e-8, **extra)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.join(here, "data", "gpu"),
                        help="directory holding train.bin/.json and val.bin/.json")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--minutes", type=float, default=10.0, help="training time budget")
    parser.add_argument("--max-epochs", type=float, default=20.0,
                        help="at most this many passes over the training tokens")
    parser.add_argument("--hidden", type=int, default=384)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--heads", type=int, default=6)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--ffn", type=int, default=1024)
    parser.add_argument("--ctx", type=int, default=512)
    parser.add_argument("--rope-theta", type=float, default=10000.0)
    parser.add_argument("--untied", action="store_true", help="a separate output head")
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--batch", type=int, default=64, help="sequences per step")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--min-lr-ratio", type=float, default=0.1)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--weight-decay", type=float, default=0.1)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--shard-mib", type=float, default=15.0)
    parser.add_argument("--seed", type=int, default=1961)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()

    start = time.time()
    budget_s = args.minutes * 60
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    os.makedirs(args.out, exist_ok=True)

    train, meta = load_stream(args.data, "train")
    val, _ = load_stream(args.data, "val")
    train, val = train.to(device), val.to(device)
    shape = Shape(args, meta["vocab_size"])
    model = Llama(shape).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} on {device}; {n_params / 1e6:.2f}M parameters; "
          f"train {len(train)} tokens, held-out {len(val)}", flush=True)

    use_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()

    def autocast():
        if use_bf16:
            return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return torch.autocast(device_type="cpu", enabled=False)

    forward = model
    if device.type == "cuda" and hasattr(torch, "compile") and not args.no_compile:
        forward = torch.compile(model)
    optimizer = make_optimizer(model, args, device)
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)

    tokens_per_step = args.batch * args.ctx
    max_steps = max(1, int(args.max_epochs * len(train) / tokens_per_step))
    total_steps = max_steps  # replaced by the time budget once the step rate is known
    rate_probe = (10, 30)  # steps between which the step rate is timed (after compiling)
    best = {"loss": float("inf"), "step": -1, "state": None}
    curve = []
    step, probe_t = 0, None

    def evaluate():
        loss = heldout_loss(model, val, args.ctx, args.batch, autocast)
        curve.append({"step": step, "minutes": round((time.time() - start) / 60, 2),
                      "heldout_loss": round(loss, 4)})
        if loss < best["loss"]:
            best.update(loss=loss, step=step,
                        state={k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()})
        print(f"step {step}/{total_steps}: held-out loss {loss:.4f} (best {best['loss']:.4f} "
              f"at {best['step']}), {(time.time() - start) / 60:.1f} min", flush=True)

    model.train()
    while step < total_steps:
        if step == rate_probe[0]:
            if device.type == "cuda":
                torch.cuda.synchronize()
            probe_t = time.time()
        if step == rate_probe[1] and probe_t is not None:
            if device.type == "cuda":
                torch.cuda.synchronize()
            step_s = (time.time() - probe_t) / (rate_probe[1] - rate_probe[0])
            # Leave room for the evaluations still to come and for saving.
            eval_s = 0.02 * budget_s + 10
            affordable = step + int((budget_s - (time.time() - start) - eval_s) / step_s)
            total_steps = max(step + 1, min(max_steps, affordable))
            print(f"{step_s * 1000:.1f} ms a step, {tokens_per_step / step_s:.0f} tokens/s: "
                  f"{total_steps} steps ({total_steps * tokens_per_step / len(train):.1f} epochs)",
                  flush=True)
        lr = learning_rate(step, args.warmup, total_steps, args.lr, args.lr * args.min_lr_ratio)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = random_batch(train, args.batch, args.ctx, generator)
        try:
            with autocast():
                logits = forward(x)
        except Exception as e:  # torch.compile fails on some setups: train without it
            if forward is model:
                raise
            print(f"torch.compile failed ({e!r}); training without it", flush=True)
            forward = model
            with autocast():
                logits = forward(x)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        if step % 20 == 0 or step == 1:
            print(f"step {step}: train loss {loss.item():.4f}, lr {lr:.2e}", flush=True)
        if step % args.eval_every == 0 or step == total_steps:
            evaluate()
        if time.time() - start > budget_s:
            print("time budget spent; stopping early", flush=True)
            if not curve or curve[-1]["step"] != step:
                evaluate()
            break

    model.load_state_dict(best["state"])
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(hf_config(shape, meta["special"]), f, indent=1)
    shards = save_weights(args.out, exported_state(model), int(args.shard_mib * 2**20))
    report = {
        "parameters": n_params, "shape": vars(args), "train_tokens": len(train),
        "heldout_tokens": len(val), "steps": step, "tokens_seen": step * tokens_per_step,
        "epochs": round(step * tokens_per_step / len(train), 2),
        "best_step": best["step"], "heldout_loss": round(best["loss"], 4),
        "heldout_perplexity": round(math.exp(best["loss"]), 2),
        "minutes": round((time.time() - start) / 60, 2), "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "curve": curve, "shards": shards,
    }
    report["transformers_check"] = check_against_transformers(args.out, model, val, min(args.ctx, 128))
    with open(os.path.join(args.out, "train_report.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k not in ("curve", "shape")}, indent=1))


if __name__ == "__main__":
    main()
