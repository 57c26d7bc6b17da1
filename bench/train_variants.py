"""A/B of formulations of the MindSpore training step, interleaved in one process on one batch.

Run from anywhere:  .venv-train/bin/python bench/train_variants.py [VARIANT ...] [--d-model N] [--rounds N]

Every variant is the trainer's step (stages/train: GPT, build_optimizer, make_train_step) with one piece
written another way; all start from the same weights (same seed) and get the same batch, so their step-0
losses and gradient norms must agree, which is printed as a check that the math is the same. Each is
compiled, then the variants take turns for --rounds rounds (order reversed every other round, so that a
burst of load from other processes hits all of them alike); the median and fastest step of each, and its
ratio to `trainer` (what stages/train does now), are printed. This is how the findings in bench/README.md
("train: where the time goes") were measured.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import mindspore as ms  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402

from stages.train import model as kiln_model  # noqa: E402
from stages.train.config import ModelConfig, OptimConfig  # noqa: E402
from stages.train.loss import IGNORE_INDEX, masked_cross_entropy  # noqa: E402
from stages.train.optim import build_optimizer, clip_norm_for  # noqa: E402
from stages.train.step import global_norm, make_train_step, setup_cpu  # noqa: E402

# ---- the pieces written another way -------------------------------------------------------------------------


class HeadBroadcast(kiln_model.GPT):
    """Tied head as ops.matmul(x, tableᵀ) on 3-D x: MindSpore broadcasts the table to (batch, d, vocab)."""

    def construct(self, tokens: Tensor) -> Tensor:
        x = self.wte(tokens)
        for block in self.blocks:
            x = block(x)
        x = self.final_norm(x)
        return ops.cast(ops.matmul(x, ops.transpose(self.wte.embedding_table, (1, 0))), ms.float32)


def _attention(cell: kiln_model.Attention, q: Tensor, k: Tensor, v: Tensor, batch: int, seq: int, width: int,
               rope: Callable = kiln_model.apply_rope) -> Tensor:
    cos, sin = cell.cos[:seq], cell.sin[:seq]
    out = cell._matmul_attention(rope(q, cos, sin), rope(k, cos, sin), v, seq)
    return cell.proj(ops.transpose(out, (0, 2, 1, 3)).reshape(batch, seq, width))


class QkvIndex(kiln_model.Attention):
    """q, k, v = qkv[0], qkv[1], qkv[2] (three StridedSlice kernels) instead of one Unstack."""

    def construct(self, x: Tensor) -> Tensor:
        batch, seq, width = x.shape
        qkv = ops.transpose(self.qkv(x).reshape(batch, seq, 3, self.n_heads, self.head_dim), (2, 0, 3, 1, 4))
        return _attention(self, qkv[0], qkv[1], qkv[2], batch, seq, width)


def rope_split(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """apply_rope with the halves taken by one Split instead of two slices."""
    x32 = ops.cast(x, ms.float32)
    x1, x2 = ops.split(x32, x.shape[-1] // 2, -1)
    return ops.cast(ops.concat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1), x.dtype)


class RopeSplit(kiln_model.Attention):
    def construct(self, x: Tensor) -> Tensor:
        batch, seq, width = x.shape
        qkv = self.qkv(x).reshape(batch, seq, 3, self.n_heads, self.head_dim)
        q, k, v = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 0)
        return _attention(self, q, k, v, batch, seq, width, rope=rope_split)


def matmul_core(cell: kiln_model.Attention, q: Tensor, k: Tensor, v: Tensor, seq: int) -> Tensor:
    """The attention core as it was: ops.matmul(q, transpose(k)), 4-D softmax, ops.matmul(probs, v)."""
    scores = ops.cast(ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))), ms.float32) * cell.scale
    probs = ops.softmax(scores + cell.causal_mask[:seq, :seq], -1)
    return ops.matmul(ops.cast(probs, v.dtype), v)


class AttentionMatmul(kiln_model.Attention):
    """The trainer's attention with the core as it was (matmul_core)."""

    def construct(self, x: Tensor) -> Tensor:
        batch, seq, width = x.shape
        qkv = self.qkv(x).reshape(batch, seq, 3, self.n_heads, self.head_dim)
        q, k, v = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 0)
        cos, sin = self.cos[:seq], self.sin[:seq]
        out = matmul_core(self, kiln_model.apply_rope(q, cos, sin), kiln_model.apply_rope(k, cos, sin), v, seq)
        return self.proj(ops.transpose(out, (0, 2, 1, 3)).reshape(batch, seq, width))


class AttentionBefore(kiln_model.Attention):
    """The attention as it was: qkv[0], qkv[1], qkv[2] and matmul_core."""

    def construct(self, x: Tensor) -> Tensor:
        batch, seq, width = x.shape
        qkv = ops.transpose(self.qkv(x).reshape(batch, seq, 3, self.n_heads, self.head_dim), (2, 0, 3, 1, 4))
        q, k, v = qkv[0], qkv[1], qkv[2]
        cos, sin = self.cos[:seq], self.sin[:seq]
        out = matmul_core(self, kiln_model.apply_rope(q, cos, sin), kiln_model.apply_rope(k, cos, sin), v, seq)
        return self.proj(ops.transpose(out, (0, 2, 1, 3)).reshape(batch, seq, width))


def norm_scalar_sum(grads: tuple[Tensor, ...]) -> Tensor:
    """The global norm with each gradient reduced to a scalar in one ops.sum."""
    return ops.sqrt(ops.addn([ops.sum(ops.square(ops.cast(g, ms.float32))) for g in grads]))


def loss_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """ops.cross_entropy (sum over the kept positions) / their count."""
    flat, lab = ops.cast(logits.reshape(-1, logits.shape[-1]), ms.float32), labels.reshape(-1)
    kept = ops.cast(lab != IGNORE_INDEX, ms.float32)
    return ops.cross_entropy(flat, lab, ignore_index=IGNORE_INDEX, reduction="sum") / ops.maximum(kept.sum(), 1.0)


def loss_logsumexp(logits: Tensor, labels: Tensor) -> Tensor:
    """logsumexp(logits) - logits[label] instead of log_softmax + gather."""
    x = ops.cast(logits, ms.float32)
    mask = labels != IGNORE_INDEX
    picked = ops.gather_elements(x, -1, ops.expand_dims(ops.where(mask, labels, ops.zeros_like(labels)), -1))
    weights = ops.cast(mask, ms.float32)
    return ((ops.logsumexp(x, -1) - picked.squeeze(-1)) * weights).sum() / ops.maximum(weights.sum(), 1.0)


def custom_step(model: nn.Cell, optimizer: nn.Optimizer, clip_norm: float, loss_fn: Callable = masked_cross_entropy,
                norm_fn: Callable = global_norm, jit_level: str = "O0") -> Callable:
    """make_train_step (single process) with its loss, global norm or jit level swapped."""

    def forward(inputs: Tensor, labels: Tensor) -> Tensor:
        return loss_fn(model(inputs), labels)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    one = Tensor([1], ms.int32)
    max_norm = Tensor(clip_norm, ms.float32)

    def train_step(inputs: Tensor, labels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        loss, grads = grad_fn(inputs, labels)
        grad_norm = norm_fn(grads)
        applied = ops.logical_and(ops.isfinite(loss), ops.isfinite(grad_norm))
        if applied:
            scale = max_norm / ops.maximum(grad_norm, max_norm)
            optimizer(tuple([g * ops.cast(scale, g.dtype) for g in grads]))
        else:
            ops.assign_add(optimizer.global_step, one)
        return loss, grad_norm, applied

    return ms.jit(train_step, jit_level=jit_level)


VARIANTS: dict[str, str] = {
    "trainer": "stages/train as it is",
    "before": "the trainer before this bench: head_broadcast + qkv_index + attention_matmul + norm_scalar_sum",
    "head_broadcast": "tied head as ops.matmul(3-D x, 2-D tableᵀ)",
    "qkv_index": "qkv[0], qkv[1], qkv[2] instead of ops.unstack",
    "norm_scalar_sum": "global norm: ops.sum(square(g)) to a scalar in one reduction",
    "attention_matmul": "attention core by ops.matmul(q, transpose(k)) and a 4-D softmax",
    "rope_split": "RoPE halves by ops.split instead of two slices",
    "loss_cross_entropy": "ops.cross_entropy instead of log_softmax + gather_elements",
    "loss_logsumexp": "logsumexp - gathered logit instead of log_softmax + gather_elements",
    "jit_O1": "@ms.jit(jit_level='O1') (no kernel fusion on CPU: same kernels)",
}


MODEL_VARIANTS = ("head_broadcast", "qkv_index", "rope_split", "attention_matmul")


def build(name: str, cfg: ModelConfig, seed: int, clip: float) -> Callable:
    """The step of variant ``name``, from the weights of ``seed``."""
    ms.set_seed(seed)
    model = kiln_model.GPT(cfg)
    attention = {"qkv_index": QkvIndex, "before": AttentionBefore, "rope_split": RopeSplit,
                 "attention_matmul": AttentionMatmul}.get(name)
    for block in model.blocks if attention else ():
        block.attn.__class__ = attention
    if name in ("head_broadcast", "before"):
        model.__class__ = HeadBroadcast
    optimizer = build_optimizer(model, OptimConfig(), total_steps=1000)
    if name == "trainer" or name in MODEL_VARIANTS:
        return make_train_step(model, optimizer, clip)
    if name in ("before", "norm_scalar_sum"):
        return custom_step(model, optimizer, clip, norm_fn=norm_scalar_sum)
    if name == "loss_cross_entropy":
        return custom_step(model, optimizer, clip, loss_fn=loss_cross_entropy)
    if name == "loss_logsumexp":
        return custom_step(model, optimizer, clip, loss_fn=loss_logsumexp)
    if name == "jit_O1":
        return custom_step(model, optimizer, clip, jit_level="O1")
    raise ValueError(f"unknown variant {name!r}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="variants:\n" + "\n".join(f"  {k:<20}{v}" for k, v in VARIANTS.items()))
    parser.add_argument("variants", nargs="*", default=["trainer", "before", "head_broadcast", "qkv_index",
                                                        "attention_matmul", "norm_scalar_sum"],
                        help="variants to compare, the first is the reference (default: trainer and the changes "
                             "this bench led to)")
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10, help="interleaved timed steps per variant (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    return args


def main() -> None:
    args = parse_args()
    setup_cpu(args.threads)
    cfg = ModelConfig(vocab_size=args.vocab, d_model=args.d_model, n_layers=args.layers, n_heads=args.heads,
                      max_seq_len=args.seq_len)
    clip = clip_norm_for(OptimConfig(), args.batch)
    window = np.random.default_rng(args.seed).integers(0, args.vocab, (args.batch, args.seq_len + 1)).astype(np.int32)
    inputs, labels = Tensor(window[:, :-1]), Tensor(window[:, 1:])
    steps, first = {}, {}
    for name in args.variants:
        began = time.perf_counter()
        steps[name] = build(name, cfg, args.seed, clip)
        loss, grad_norm, _ = steps[name](inputs, labels)
        first[name] = (float(loss.asnumpy()), float(grad_norm.asnumpy()), time.perf_counter() - began)
        print(f"compiled {name:<20} step-0 loss {first[name][0]:.6f}, grad norm {first[name][1]:.6f} "
              f"({first[name][2]:.1f} s with the compile)", file=sys.stderr, flush=True)
    times: dict[str, list[float]] = {name: [] for name in args.variants}
    for r in range(args.rounds):
        for name in args.variants if r % 2 == 0 else args.variants[::-1]:
            began = time.perf_counter()
            steps[name](inputs, labels)[0].asnumpy()
            times[name].append(time.perf_counter() - began)
    ref = args.variants[0]
    ref_med, ref_min = float(np.median(times[ref])), min(times[ref])
    print(f"\nStep variants, d_model {args.d_model}, {args.layers} layers, vocab {args.vocab}, batch {args.batch} x "
          f"{args.seq_len}, {args.threads} threads, {args.rounds} interleaved rounds (ms; ratio: time / {ref}'s)")
    print(f"  {'variant':<20}{'median':>9}{'fastest':>9}{'ratio':>8}{'fastest':>9}  "
          f"{'step-0 loss':>12}{'grad norm':>11}")
    for name in args.variants:
        med, low = float(np.median(times[name])), min(times[name])
        print(f"  {name:<20}{med * 1e3:>9.1f}{low * 1e3:>9.1f}{med / ref_med:>8.2f}{low / ref_min:>9.2f}  "
              f"{first[name][0]:>12.6f}{first[name][1]:>11.6f}")
    for name in args.variants:
        print(f"  {name}: {VARIANTS[name]}")


if __name__ == "__main__":
    main()
