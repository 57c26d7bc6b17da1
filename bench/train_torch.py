"""bench/train.py's PyTorch side: the same model and step as Kiln's trainer, written as a PyTorch user would.

Run by bench/train.py in bench/.venv-torch (torch 2.13 CPU, numpy 1.26); writes its figures as JSON.
Same architecture and shapes as stages/train/model.py with its defaults: token embedding tied to the output
head, pre-norm blocks with RMSNorm (eps 1e-6), fused QKV without biases, rotate-half RoPE (theta 10000),
causal attention (F.scaled_dot_product_attention, or an explicit additive mask and softmax), SwiGLU MLP,
a final RMSNorm; fp32 throughout. Loss: F.cross_entropy with ignore_index -100. Step: backward,
clip_grad_norm_ (global norm), skip when the loss or the norm is not finite (as the trainer does), AdamW
(betas, eps, decay on >= 2-D weights only) at the trainer's learning rate of that step, zero_grad.

It starts from the weights the MindSpore side saved (--init) and reads the same batches (DataOrder.batch on
the same .bin), so both step-0 losses and gradient norms must agree.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from measure import write_result  # noqa: E402
from train_shape import worker_parser  # noqa: E402

from stages.train.data import DataOrder, open_tokens  # noqa: E402  (numpy only)

IGNORE_INDEX = -100


def parse_args() -> argparse.Namespace:
    parser = worker_parser(__doc__)
    parser.add_argument("--init", type=Path, required=True, help="weights and per-step lr saved by the MindSpore side")
    parser.add_argument("--ffn-dim", type=int, required=True)
    parser.add_argument("--clip-norm", type=float, required=True)
    parser.add_argument("--optim", type=str, required=True, help="JSON: weight_decay, beta1, beta2, eps")
    parser.add_argument("--attention", choices=("sdpa", "matmul"), default="sdpa")
    parser.add_argument("--op-profile", action="store_true")
    return parser.parse_args()


def rope_tables(head_dim: int, seq_len: int, theta: float = 10000.0) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(seq_len, dtype=np.float64), inv_freq)
    return torch.tensor(np.cos(angles), dtype=torch.float32), torch.tensor(np.sin(angles), dtype=torch.float32)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, d_model: int, heads: int, seq_len: int, mode: str):
        super().__init__()
        self.heads, self.head_dim, self.mode = heads, d_model // heads, mode
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        mask = torch.triu(torch.full((seq_len, seq_len), -1e9), 1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q, cos[:seq], sin[:seq]), apply_rope(k, cos[:seq], sin[:seq])
        if self.mode == "sdpa":
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + self.mask[:seq, :seq]
            out = torch.softmax(scores, -1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, seq, width))


class MLP(nn.Module):
    def __init__(self, d_model: int, hidden: int):
        super().__init__()
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, d_model: int, heads: int, hidden: int, seq_len: int, mode: str):
        super().__init__()
        self.attn_norm = RMSNorm(d_model)
        self.attn = Attention(d_model, heads, seq_len, mode)
        self.mlp_norm = RMSNorm(d_model)
        self.mlp = MLP(d_model, hidden)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class GPT(nn.Module):
    def __init__(self, vocab: int, d_model: int, layers: int, heads: int, hidden: int, seq_len: int, mode: str):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([Block(d_model, heads, hidden, seq_len, mode) for _ in range(layers)])
        self.final_norm = RMSNorm(d_model)
        cos, sin = rope_tables(d_model // heads, seq_len)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.wte(tokens)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        return F.linear(self.final_norm(x), self.wte.weight)


def load_init(model: GPT, init: dict[str, np.ndarray]) -> None:
    """Copy the MindSpore side's starting weights (same names, but wte.embedding_table is wte.weight)."""
    state = {("wte.weight" if name == "wte.embedding_table" else name): torch.from_numpy(np.array(value))
             for name, value in init.items() if not name.startswith("__")}
    missing, unexpected = model.load_state_dict(state, strict=True)
    assert not missing and not unexpected, (missing, unexpected)


def median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


class Trainer:
    """The reference step: loss, backward, clip, skip if non-finite, AdamW, zero_grad."""

    def __init__(self, model: GPT, args: argparse.Namespace, lrs: np.ndarray):
        optim = json.loads(args.optim)
        params = list(model.parameters())
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": optim["weight_decay"]},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        self.model, self.lrs, self.clip_norm = model, lrs, args.clip_norm
        self.optimizer = torch.optim.AdamW(groups, lr=float(lrs[0]), betas=(optim["beta1"], optim["beta2"]),
                                           eps=optim["eps"])

    def loss(self, inputs: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.model(inputs)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)

    def step(self, step: int, inputs: torch.Tensor, labels: torch.Tensor) -> tuple[float, float, bool]:
        loss = self.loss(inputs, labels)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip_norm)
        applied = bool(torch.isfinite(loss) and torch.isfinite(grad_norm))
        if applied:
            for group in self.optimizer.param_groups:
                group["lr"] = float(self.lrs[min(step, len(self.lrs) - 1)])
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(loss), float(grad_norm), applied


def train(trainer: Trainer, tokens, order: DataOrder, total: int) -> list[dict]:
    steps = []
    for step in range(total):
        began = time.perf_counter()
        inputs, labels = order.batch(tokens, step)
        fetched = time.perf_counter()
        loss, grad_norm, applied = trainer.step(step, torch.from_numpy(inputs).long(), torch.from_numpy(labels).long())
        done = time.perf_counter()
        steps.append({"data_s": fetched - began, "compute_s": done - fetched, "step_s": done - began,
                      "loss": loss, "grad_norm": grad_norm, "applied": applied})
    return steps


def phases(trainer: Trainer, batch: tuple[np.ndarray, np.ndarray], rounds: int, step0: int) -> dict:
    """Medians of forward only (no_grad), forward + backward, + clip_grad_norm_, and the whole step, interleaved."""
    inputs, labels = torch.from_numpy(batch[0]).long(), torch.from_numpy(batch[1]).long()
    params = list(trainer.model.parameters())

    def forward() -> None:
        with torch.no_grad():
            float(trainer.loss(inputs, labels))

    def forward_backward() -> None:
        trainer.loss(inputs, labels).backward()
        trainer.optimizer.zero_grad(set_to_none=True)

    def forward_backward_norm() -> None:
        trainer.loss(inputs, labels).backward()
        float(torch.nn.utils.get_total_norm([p.grad for p in params]))
        trainer.optimizer.zero_grad(set_to_none=True)

    def step() -> None:
        trainer.step(step0, inputs, labels)

    runs = {"forward": forward, "forward_backward": forward_backward, "forward_backward_norm": forward_backward_norm,
            "step": step}
    for fn in runs.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            began = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - began)
    return {"median_s": {name: median(t) for name, t in times.items()},
            "min_s": {name: min(t) for name, t in times.items()}, "rounds": rounds}


def op_profile(trainer: Trainer, batch: tuple[np.ndarray, np.ndarray], step0: int, steps: int = 3) -> dict:
    """torch.profiler over ``steps`` whole steps: self CPU time per aten op, ms per step."""
    from torch.profiler import ProfilerActivity, profile

    inputs, labels = torch.from_numpy(batch[0]).long(), torch.from_numpy(batch[1]).long()
    walls = []
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            began = time.perf_counter()
            trainer.step(step0, inputs, labels)
            walls.append(time.perf_counter() - began)
    by_op: Counter = Counter()
    calls: Counter = Counter()
    for event in prof.key_averages():
        if event.key.startswith("aten::"):
            by_op[event.key] += event.self_cpu_time_total / 1000 / steps
            calls[event.key] += event.count / steps
    total = sum(by_op.values())
    return {"op_ms_per_step": total, "ops_per_step": sum(calls.values()), "profiled_step_s": walls,
            "by_type": [{"op": op, "ms": ms, "share": ms / total, "calls": calls[op]}
                        for op, ms in by_op.most_common()]}


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    started = time.perf_counter()
    init = dict(np.load(args.init))
    lrs = init.pop("__lr__")
    tokens = open_tokens(args.tokens, args.seq_len)
    order = DataOrder(len(tokens), args.batch, args.seed)
    model = GPT(args.vocab, args.d_model, args.layers, args.heads, args.ffn_dim, args.seq_len, args.attention)
    load_init(model, init)
    trainer = Trainer(model, args, lrs)
    build_s = time.perf_counter() - started
    steps = train(trainer, tokens, order, args.warmup + args.steps)
    timed = steps[args.warmup:]
    optimizer_defaults = trainer.optimizer.defaults
    result = {
        "side": "torch", "version": torch.__version__, "threads": torch.get_num_threads(),
        "attention": args.attention, "parameters": sum(p.numel() for p in model.parameters()),
        "adamw": {"foreach": optimizer_defaults.get("foreach"), "fused": optimizer_defaults.get("fused")},
        "build_s": build_s, "first_step_s": steps[0]["step_s"], "warmup": args.warmup, "steps": steps,
        "median_step_s": median([s["step_s"] for s in timed]),
        "min_step_s": min(s["step_s"] for s in timed),
        "median_data_s": median([s["data_s"] for s in timed]),
        "data_wait_fraction": sum(s["data_s"] for s in timed) / sum(s["step_s"] for s in timed),
    }
    batch = order.batch(tokens, 0)
    step0 = args.warmup + args.steps
    if args.phases:
        result["phases"] = phases(trainer, batch, args.phases, step0)
    if args.op_profile:
        result["op_profile"] = op_profile(trainer, batch, step0)
    write_result(args.result, result)


if __name__ == "__main__":
    main()
