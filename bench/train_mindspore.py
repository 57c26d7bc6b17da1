"""bench/train.py's MindSpore side: the trainer's own compiled step on batches read from a packed .bin.

Run by bench/train.py in .venv-train (MindSpore 2.10, CPU); writes its figures as JSON. Everything measured is
Kiln's trainer as `python -m stages.train` runs it: setup_cpu(threads), GPT(cfg), build_optimizer,
make_train_step(model, optimizer, clip_norm_for(...)), DataOrder.batch on the memory-mapped tokens, and the
int32 Tensors handed to the step, whose loss, gradient norm and flag are read back every step.

The weights it starts from and the learning rate of every step are saved (--init) so that the PyTorch side
starts from the same point: both step-0 losses and gradient norms must agree.
"""

from __future__ import annotations

import argparse
import csv
import glob
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from measure import write_result  # noqa: E402
from train_shape import worker_parser  # noqa: E402

from stages.train.step import setup_cpu  # noqa: E402  (imports MindSpore; the thread count is set in main)


def parse_args() -> argparse.Namespace:
    parser = worker_parser(__doc__)
    parser.add_argument("--init", type=Path, default=None, help="save the initial weights and every step's lr here")
    parser.add_argument("--op-profile", type=Path, default=None,
                        help="profile 3 steps with MindSpore's profiler into this folder and summarise per op")
    return parser.parse_args()


def median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def build(args: argparse.Namespace):
    """The trainer as `python -m stages.train` builds it, at the bench's shape."""
    import mindspore as ms

    from stages.train.config import ModelConfig, OptimConfig
    from stages.train.data import DataOrder, open_tokens
    from stages.train.model import GPT, count_parameters
    from stages.train.optim import build_optimizer, clip_norm_for, lr_table
    from stages.train.step import make_train_step

    ms.set_seed(args.seed)
    tokens = open_tokens(args.tokens, args.seq_len)
    order = DataOrder(len(tokens), args.batch, args.seed)
    cfg = ModelConfig(vocab_size=args.vocab, d_model=args.d_model, n_layers=args.layers, n_heads=args.heads,
                      max_seq_len=args.seq_len)
    optim = OptimConfig()
    total = args.warmup + args.steps
    model = GPT(cfg)
    optimizer = build_optimizer(model, optim, total)
    clip = clip_norm_for(optim, args.batch)
    step_fn = make_train_step(model, optimizer, clip)
    if args.init is not None:
        arrays = {p.name: p.asnumpy() for p in model.trainable_params()}
        arrays["__lr__"] = lr_table(optim, total)
        np.savez(args.init, **arrays)
    info = {"parameters": count_parameters(model), "clip_norm": clip, "windows": len(tokens),
            "model": cfg.model_dump(), "optim": {k: getattr(optim, k) for k in ("lr", "min_lr", "warmup_ratio",
                                                                         "weight_decay", "beta1", "beta2", "eps")}}
    return model, optimizer, step_fn, tokens, order, info


def train(step_fn, tokens, order, total: int) -> dict:
    """Every step as the trainer runs it: fetch the batch (timed apart), then the compiled step."""
    import mindspore as ms
    from mindspore import Tensor

    steps = []
    for step in range(total):
        began = time.perf_counter()
        inputs, labels = order.batch(tokens, step)
        fetched = time.perf_counter()
        loss, grad_norm, applied = step_fn(Tensor(inputs, ms.int32), Tensor(labels, ms.int32))
        loss, grad_norm, applied = float(loss.asnumpy()), float(grad_norm.asnumpy()), bool(applied.asnumpy())
        done = time.perf_counter()
        steps.append({"data_s": fetched - began, "compute_s": done - fetched, "step_s": done - began,
                      "loss": loss, "grad_norm": grad_norm, "applied": applied})
    return {"steps": steps}


def phases(model, optimizer, step_fn, batch: tuple[np.ndarray, np.ndarray], rounds: int) -> dict:
    """Fastest and median of forward only, forward + backward, + the global norm, and the whole step, interleaved.

    Each phase is its own compiled graph whose outputs need all of its work (a graph that computed gradients
    but returned only the loss would have the backward pruned away). The gradients come from ms.grad: a
    standalone ms.value_and_grad graph returning (loss, grads) ran ~20 % slower than ms.grad here, while
    inside the trainer's step value_and_grad costs no more than ms.grad alone.
    """
    import mindspore as ms
    from mindspore import Tensor

    from stages.train.loss import masked_cross_entropy
    from stages.train.step import global_norm

    def forward(inputs: Tensor, labels: Tensor) -> Tensor:
        return masked_cross_entropy(model(inputs), labels)

    grad_fn = ms.grad(forward, None, optimizer.parameters)

    @ms.jit
    def forward_backward_norm(inputs: Tensor, labels: Tensor) -> Tensor:
        return global_norm(grad_fn(inputs, labels))

    runs = {"forward": ms.jit(forward), "forward_backward": ms.jit(grad_fn),
            "forward_backward_norm": forward_backward_norm, "step": step_fn}
    inputs, labels = Tensor(batch[0], ms.int32), Tensor(batch[1], ms.int32)
    compile_s = {}
    for name, fn in runs.items():
        began = time.perf_counter()
        out = fn(inputs, labels)
        (out[0] if isinstance(out, tuple) else out).asnumpy()
        compile_s[name] = time.perf_counter() - began
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            began = time.perf_counter()
            out = runs[name](inputs, labels)
            (out[0] if isinstance(out, tuple) else out).asnumpy()
            times[name].append(time.perf_counter() - began)
    return {"median_s": {name: median(t) for name, t in times.items()},
            "min_s": {name: min(t) for name, t in times.items()}, "first_call_s": compile_s,
            "rounds": rounds}


def summarise_profile(folder: Path, steps: int) -> dict:
    """Per op type and top single ops (ms per step) from the profiler's CPU op table."""
    found = glob.glob(str(folder / "*" / "FRAMEWORK" / "cpu_op_detail_info_*.csv"))
    if not found:
        return {"skipped": f"no cpu_op_detail_info csv under {folder}"}
    with open(found[0], newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_type: Counter = Counter()
    calls: Counter = Counter()
    for row in rows:
        by_type[row["op_type"]] += float(row["op_total_time(ms)"]) / steps
        calls[row["op_type"]] += int(row["op_occurrences"]) / steps
    total = sum(by_type.values())
    top = sorted(rows, key=lambda r: -float(r["op_total_time(ms)"]))[:12]
    return {"op_ms_per_step": total, "ops_per_step": sum(calls.values()),
            "by_type": [{"op": op, "ms": ms_, "share": ms_ / total, "calls": calls[op]}
                        for op, ms_ in by_type.most_common()],
            "top_ops": [{"op": r["full_op_name"], "ms": float(r["op_total_time(ms)"]) / steps} for r in top]}


def op_profile(step_fn, batch: tuple[np.ndarray, np.ndarray], folder: Path, steps: int = 3) -> dict:
    """Profile ``steps`` whole steps with MindSpore's profiler (CPU op timings) and summarise them."""
    import mindspore as ms
    from mindspore import Tensor

    inputs, labels = Tensor(batch[0], ms.int32), Tensor(batch[1], ms.int32)
    walls = []
    try:
        profiler = ms.Profiler(output_path=str(folder))
        for _ in range(steps):
            began = time.perf_counter()
            step_fn(inputs, labels)[0].asnumpy()
            walls.append(time.perf_counter() - began)
        profiler.analyse()
    except Exception as err:  # the profiler is a diagnostic: its failure must not lose the run's figures
        return {"skipped": f"MindSpore profiler failed: {err}"}
    return {**summarise_profile(folder, steps), "profiled_step_s": walls}


def main() -> None:
    args = parse_args()
    import mindspore as ms

    setup_cpu(args.threads)
    started = time.perf_counter()
    model, optimizer, step_fn, tokens, order, info = build(args)
    build_s = time.perf_counter() - started
    run = train(step_fn, tokens, order, args.warmup + args.steps)
    timed = run["steps"][args.warmup:]
    result = {
        "side": "mindspore", "version": ms.__version__, "threads": args.threads, **info,
        "build_s": build_s, "first_step_s": run["steps"][0]["step_s"], "warmup": args.warmup,
        "steps": run["steps"],
        "median_step_s": median([s["step_s"] for s in timed]),
        "min_step_s": min(s["step_s"] for s in timed),
        "median_data_s": median([s["data_s"] for s in timed]),
        "data_wait_fraction": sum(s["data_s"] for s in timed) / sum(s["step_s"] for s in timed),
    }
    batch = order.batch(tokens, 0)
    if args.phases:
        result["phases"] = phases(model, optimizer, step_fn, batch, args.phases)
    if args.op_profile is not None:
        result["op_profile"] = op_profile(step_fn, batch, args.op_profile)
    write_result(args.result, result)


if __name__ == "__main__":
    main()
