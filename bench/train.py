"""Training step on CPU: Kiln's MindSpore trainer against a PyTorch reference of the same model, batch and threads.

Run from anywhere:  .venv-train/bin/python bench/train.py [--d-model N] [--threads N] [--steps N] [--rounds N]

Each side runs in its own process: the MindSpore side (bench/train_mindspore.py, in .venv-train) times the
trainer's real compiled step on batches fetched by DataOrder.batch from a packed .bin, and saves its starting
weights; the PyTorch side (bench/train_torch.py, in bench/.venv-torch, created on first use with torch 2.13
CPU and numpy 1.26) loads them, reads the same batches and times the same step written in PyTorch. Warm-up
steps (MindSpore's first compiles the graph) are left out; step times are medians. Prints tokens/s, MFU
against the CPU peak estimate, the data-wait fraction, where each side's step time goes, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from measure import WorkerError, log, reference_python, run_driver, tail  # noqa: E402
from train_shape import shape_args  # noqa: E402

from common.tokens import META_FORMAT, META_NAME, TOKEN_DTYPE, TokenDataset, read_meta  # noqa: E402
from stages.train.flops import cpu_features, cpu_peak_flops, model_flops_per_token  # noqa: E402

TRAIN_PYTHON = REPO / ".venv-train" / "bin" / "python"
REF_VENV = BENCH_DIR / ".venv-torch"
REF_PACKAGES = ("torch==2.13.0", "numpy==1.26.4")
REAL_TOKENS = REPO / "data" / "tokenize" / "train.bin"
GOAL_DATA_WAIT = 0.01
GOAL_RATIO = 0.5


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shape = parser.add_argument_group("model and batch (defaults: configs/train-cpu.yaml, what `make train` trains)")
    shape.add_argument("--d-model", type=int, default=128, help="width (default 128)")
    shape.add_argument("--layers", type=int, default=4, help="blocks (default 4)")
    shape.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    shape.add_argument("--vocab", type=int, default=32000, help="vocabulary (default 32000, the tokenizer's)")
    shape.add_argument("--seq-len", type=int, default=256, help="tokens per sequence (default 256)")
    shape.add_argument("--batch", type=int, default=8, help="sequences per step (default 8)")
    parser.add_argument("--threads", type=int, default=2,
                        help="operator threads of each side: MindSpore threads_num, torch.set_num_threads (default 2)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per side and round (default 20)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="untimed steps first; MindSpore's first compiles (default 3)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternating runs of the two sides (MindSpore, PyTorch, MindSpore, ...; default 1)")
    parser.add_argument("--phases", type=int, default=6,
                        help="interleaved rounds of the forward / backward / norm / optimizer breakdown (0: skip)")
    parser.add_argument("--no-op-profile", action="store_true", help="skip the per-op profiles (3 steps each side)")
    parser.add_argument("--attention", choices=("sdpa", "matmul"), default="sdpa",
                        help="PyTorch attention: scaled_dot_product_attention (default), or mask + softmax "
                             "as Kiln's CPU path")
    parser.add_argument("--tokens", type=Path, default=None,
                        help="packed .bin to read batches from (default: data/tokenize/train.bin when its vocabulary "
                             "is --vocab, else random tokens written to a temporary folder)")
    parser.add_argument("--seed", type=int, default=0, help="weights and data order seed (default 0)")
    parser.add_argument("--skip-torch", action="store_true", help="measure the MindSpore side only")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results",
                        help="folder for train.json (default bench/results)")
    args = parser.parse_args()
    if args.d_model % args.heads or (args.d_model // args.heads) % 2:
        parser.error("--heads must divide --d-model into an even head dimension (RoPE)")
    if args.steps < 1 or args.warmup < 1 or args.rounds < 1:
        parser.error("--steps, --warmup and --rounds must be at least 1")
    return args


def write_random_tokens(folder: Path, vocab: int, n_tokens: int, seed: int, doc_len: int = 1024) -> Path:
    """A packed split in the kiln-tokens/1 format (train.bin, train.idx, meta.json) of random ids below ``vocab``."""
    folder.mkdir(parents=True, exist_ok=True)
    stream = np.random.default_rng(seed).integers(1, vocab, size=n_tokens, dtype=np.int64).astype(TOKEN_DTYPE)
    offsets = np.append(np.arange(0, n_tokens, doc_len, dtype=np.int64), n_tokens)
    stream[offsets[1:] - 1] = 0  # each document ends with EOS, id 0
    stream.tofile(folder / "train.bin")
    offsets.tofile(folder / "train.idx")
    meta = {"format": META_FORMAT, "dtype": TOKEN_DTYPE, "vocab_size": vocab, "eos_id": 0, "seq_len": 2048,
            "splits": {"train": {"bin": "train.bin", "idx": "train.idx", "tokens": n_tokens,
                                 "documents": len(offsets) - 1}}}
    (folder / META_NAME).write_text(json.dumps(meta), encoding="utf-8")
    return folder / "train.bin"


def choose_tokens(args: argparse.Namespace, work: Path) -> tuple[Path, str]:
    """The .bin both sides read, and a line saying what it is."""
    if args.tokens is not None:
        vocab = read_meta(args.tokens.parent / META_NAME)["vocab_size"]
        if vocab > args.vocab:
            sys.exit(f"bench/train.py: {args.tokens} has ids up to {vocab - 1}, beyond --vocab {args.vocab}")
        return args.tokens, f"{args.tokens} (given)"
    if REAL_TOKENS.is_file():
        vocab = read_meta(REAL_TOKENS.parent / META_NAME)["vocab_size"]
        if vocab == args.vocab:
            return REAL_TOKENS, f"{REAL_TOKENS.relative_to(REPO)} (the tokenize stage's output)"
    windows = max(args.batch * (args.warmup + args.steps) * 2, 256)
    log(f"WARNING: no {REAL_TOKENS.relative_to(REPO)} with vocabulary {args.vocab} (run `make data`, or pass "
        "--tokens): training on random token ids, which measures speed but not a loss worth reading")
    path = write_random_tokens(work / "tokens", args.vocab, windows * args.seq_len + 1, args.seed)
    return path, f"random ids below {args.vocab}, {windows * args.seq_len + 1:,} tokens, written to a temporary folder"


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def run_worker(python: Path, script: str, args: list[str], result: Path) -> dict:
    """Run one measured process and return the figures it wrote, with how busy the other processes kept the CPUs."""
    busy, own, began = busy_cpu_seconds(), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run([str(python), str(BENCH_DIR / script), *args], capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_s = after.ru_utime + after.ru_stime - own.ru_utime - own.ru_stime
    if done.returncode:
        raise WorkerError(f"{script} failed (exit {done.returncode}):\n{tail(done.stderr)}")
    figures = json.loads(result.read_text(encoding="utf-8"))
    figures["other_cpu_share"] = max(busy_cpu_seconds() - busy - own_s, 0.0) / (wall * os.cpu_count())
    return figures


def measure_mindspore(args: argparse.Namespace, tokens: Path, work: Path, first: bool) -> dict:
    extra = ["--init", str(work / "init.npz")] if first else []
    if first and args.phases:
        extra += ["--phases", str(args.phases)]
    if first and not args.no_op_profile:
        extra += ["--op-profile", str(work / "ms-profile")]
    result = work / "mindspore.json"
    return run_worker(TRAIN_PYTHON, "train_mindspore.py", [str(tokens), str(result), *shape_args(args), *extra], result)


def measure_torch(args: argparse.Namespace, python: Path, ms_figures: dict, tokens: Path, work: Path,
                  first: bool) -> dict:
    optim = {k: ms_figures["optim"][k] for k in ("weight_decay", "beta1", "beta2", "eps")}
    extra = ["--init", str(work / "init.npz"), "--ffn-dim", str(_hidden(ms_figures)),
             "--clip-norm", repr(ms_figures["clip_norm"]), "--optim", json.dumps(optim), "--attention", args.attention]
    if first and args.phases:
        extra += ["--phases", str(args.phases)]
    if first and not args.no_op_profile:
        extra += ["--op-profile"]
    result = work / "torch.json"
    return run_worker(python, "train_torch.py", [str(tokens), str(result), *shape_args(args), *extra], result)


def _hidden(ms_figures: dict) -> int:
    """The MLP width the trainer's ModelConfig chose (ffn_dim, else 8/3·d rounded up to 64 for SwiGLU)."""
    model = ms_figures["model"]
    if model["ffn_dim"]:
        return model["ffn_dim"]
    return 64 * -(-8 * model["d_model"] // (3 * 64))


def pooled(rounds: list[dict], tokens_per_step: int) -> dict:
    """One side's figures over all its rounds: median step time of every timed step, data wait, tokens/s."""
    timed = [s for r in rounds for s in r["steps"][r["warmup"]:]]
    step_s = float(np.median([s["step_s"] for s in timed]))
    return {"median_step_s": step_s, "min_step_s": min(s["step_s"] for s in timed),
            "tokens_per_s": tokens_per_step / step_s,
            "median_data_s": float(np.median([s["data_s"] for s in timed])),
            "data_wait_fraction": sum(s["data_s"] for s in timed) / sum(s["step_s"] for s in timed),
            "first_step_s": [r["first_step_s"] for r in rounds],
            "round_median_step_s": [r["median_step_s"] for r in rounds], "timed_steps": len(timed),
            "other_cpu_share": [r["other_cpu_share"] for r in rounds]}


def run_bench(args: argparse.Namespace) -> dict:
    if not TRAIN_PYTHON.exists():
        sys.exit(f"bench/train.py: {TRAIN_PYTHON.relative_to(REPO)} is missing: run `make train-venv` first")
    torch_python, skipped = (None, "--skip-torch") if args.skip_torch else reference_python(REF_VENV, list(REF_PACKAGES), "\n".join(REF_PACKAGES).encode(), f"with {' '.join(REF_PACKAGES)}")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="kiln-bench-train-") as tmp:
        work = Path(tmp)
        tokens, tokens_note = choose_tokens(args, work)
        windows = len(TokenDataset(tokens, seq_len=args.seq_len))
        ms_rounds: list[dict] = []
        torch_rounds: list[dict] = []
        for r in range(args.rounds):
            log(f"round {r + 1}/{args.rounds}: MindSpore side ({args.warmup} + {args.steps} steps, "
                f"{args.threads} threads)")
            ms_rounds.append(measure_mindspore(args, tokens, work, first=r == 0))
            if torch_python is None:
                continue
            log(f"round {r + 1}/{args.rounds}: PyTorch side")
            try:
                torch_rounds.append(measure_torch(args, torch_python, ms_rounds[0], tokens, work, first=r == 0))
            except WorkerError as err:
                torch_python, skipped = None, str(err)
    ms0 = ms_rounds[0]
    tokens_per_step = args.batch * args.seq_len
    flops = model_flops_per_token(ms0["parameters"], args.layers, args.d_model, args.seq_len)
    ghz, flops_per_cycle = cpu_features()
    peak = cpu_peak_flops(args.threads, ghz, flops_per_cycle)
    sides = {"mindspore": pooled(ms_rounds, tokens_per_step)}
    if torch_rounds:
        sides["torch"] = pooled(torch_rounds, tokens_per_step)
    for side in sides.values():
        side["mfu"] = side["tokens_per_s"] * flops / peak
        side["model_gflops_per_s"] = side["tokens_per_s"] * flops / 1e9
    ratio = sides["mindspore"]["tokens_per_s"] / sides["torch"]["tokens_per_s"] if "torch" in sides else None
    check = None
    if torch_rounds:
        t0 = torch_rounds[0]
        check = {"loss": [ms0["steps"][0]["loss"], t0["steps"][0]["loss"]],
                 "grad_norm": [ms0["steps"][0]["grad_norm"], t0["steps"][0]["grad_norm"]],
                 "parameters": [ms0["parameters"], t0["parameters"]]}
    return {
        "shape": {"d_model": args.d_model, "layers": args.layers, "heads": args.heads, "ffn_dim": _hidden(ms0),
                  "vocab": args.vocab, "seq_len": args.seq_len, "batch": args.batch, "parameters": ms0["parameters"],
                  "tokens_per_step": tokens_per_step},
        "threads": args.threads, "steps": args.steps, "warmup": args.warmup, "rounds": args.rounds,
        "tokens": {"path": str(tokens), "what": tokens_note, "windows": windows},
        "flops": {"formula": "6*N + 12*L*d*T", "per_token": flops, "per_step": flops * tokens_per_step,
                  "cpu_peak": peak, "cpu_peak_formula": f"{args.threads} cores x {ghz:.2f} GHz x {flops_per_cycle} FLOP/cycle"},
        "load_average": {"before": load_before, "after": os.getloadavg()}, "cpus": os.cpu_count(),
        "mindspore": sides["mindspore"], "torch": sides.get("torch", {"skipped": skipped}),
        "ratio_mindspore_torch": ratio, "same_start": check,
        "phases": {"mindspore": ms0.get("phases"), "torch": torch_rounds[0].get("phases") if torch_rounds else None},
        "op_profile": {"mindspore": ms0.get("op_profile"),
                       "torch": torch_rounds[0].get("op_profile") if torch_rounds else None},
        "versions": {"mindspore": ms0["version"], "torch": torch_rounds[0]["version"] if torch_rounds else None,
                     "torch_attention": args.attention,
                     "torch_adamw": torch_rounds[0]["adamw"] if torch_rounds else None},
        "rounds_raw": {"mindspore": ms_rounds, "torch": torch_rounds},
        "goals": goals(sides["mindspore"], ratio),
    }


def goals(ms_side: dict, ratio: float | None) -> list[dict]:
    return [
        {"goal": f"data wait < {GOAL_DATA_WAIT:.0%} of the MindSpore step time",
         "measured": f"{ms_side['data_wait_fraction']:.3%} ({ms_side['median_data_s'] * 1e3:.2f} ms of "
                     f"{ms_side['median_step_s'] * 1e3:.0f} ms)",
         "met": ms_side["data_wait_fraction"] < GOAL_DATA_WAIT},
        {"goal": f"MindSpore >= {GOAL_RATIO}x the PyTorch reference's tokens/s",
         "measured": f"{ratio:.2f}x" if ratio is not None else "reference skipped",
         "met": ratio >= GOAL_RATIO if ratio is not None else None},
    ]


def _row(label: str, *cells: str) -> str:
    return f"  {label:<34}" + "".join(f"{c:>19}" for c in cells)


def print_report(report: dict) -> None:
    shape, flops, ms_side, t_side = report["shape"], report["flops"], report["mindspore"], report["torch"]
    has_torch = "skipped" not in t_side
    versions = report["versions"]
    print(f"\nTraining step on CPU, fp32, {report['threads']} threads each: Kiln's MindSpore {versions['mindspore']} "
          f"trainer vs PyTorch {versions['torch'] or '(skipped)'} eager")
    print(f"  model: d_model {shape['d_model']}, {shape['layers']} layers, {shape['heads']} heads, SwiGLU "
          f"{shape['ffn_dim']}, vocab {shape['vocab']:,} (tied), RoPE, RMSNorm: {shape['parameters']:,} parameters")
    print(f"  batch {shape['batch']} x seq {shape['seq_len']} = {shape['tokens_per_step']:,} tokens a step; "
          f"{report['warmup']} warm-up + {report['steps']} timed steps per side, {report['rounds']} round(s)")
    print(f"  batches: {report['tokens']['what']}, {report['tokens']['windows']:,} windows")
    print(f"  model FLOPs per token 6·N + 12·L·d·T = {flops['per_token'] / 1e6:.2f} M "
          f"({flops['per_step'] / 1e9:.1f} GFLOP a step); CPU peak estimate {flops['cpu_peak'] / 1e9:.0f} GFLOP/s "
          f"({flops['cpu_peak_formula']})")
    others = ms_side["other_cpu_share"] + (t_side["other_cpu_share"] if has_torch else [])
    print(f"  other processes kept {min(others):.0%}-{max(others):.0%} of the {report['cpus']} CPUs busy while the "
          "sides ran (above a few % step times are noisy: compare runs, or the fastest steps)\n")
    ratio = report["ratio_mindspore_torch"]

    def both(key: str, fmt: str, scale: float = 1.0, ratio_of: bool = False, invert: bool = False) -> list[str]:
        cells = [format(ms_side[key] * scale, fmt), format(t_side[key] * scale, fmt) if has_torch else "—"]
        if ratio_of and has_torch:
            value = t_side[key] / ms_side[key] if invert else ms_side[key] / t_side[key]
            cells.append(f"{value:.2f}x")
        return cells

    print(_row("", "MindSpore", "PyTorch", "MindSpore/PyTorch"))
    print(_row("tokens/s (median step)", *both("tokens_per_s", ",.0f", ratio_of=True)))
    print(_row("step time, median ms", *both("median_step_s", ",.1f", 1e3, ratio_of=True, invert=True)))
    print(_row("step time, fastest ms", *both("min_step_s", ",.1f", 1e3, ratio_of=True, invert=True)))
    print(_row("model GFLOP/s", *both("model_gflops_per_s", ".1f")))
    print(_row("MFU vs CPU peak estimate", *both("mfu", ".1%")))
    print(_row("data wait (DataOrder.batch), ms", *both("median_data_s", ".3f", 1e3)))
    print(_row("data wait, share of step time", *both("data_wait_fraction", ".3%")))
    first = [f"{', '.join(f'{s:.1f}' for s in ms_side['first_step_s'])}",
             f"{', '.join(f'{s:.2f}' for s in t_side['first_step_s'])}" if has_torch else "—"]
    print(_row("first step (compile), s", *first))
    if report["same_start"]:
        check = report["same_start"]
        print(_row("step 0 loss (same weights, batch)", f"{check['loss'][0]:.5f}", f"{check['loss'][1]:.5f}"))
        print(_row("step 0 grad norm", f"{check['grad_norm'][0]:.5f}", f"{check['grad_norm'][1]:.5f}"))
    if report["rounds"] > 1 and has_torch:
        per_round = [t / m for m, t in zip(ms_side["round_median_step_s"], t_side["round_median_step_s"], strict=False)]
        print(_row("ratio per round", ", ".join(f"{r:.2f}" for r in per_round)))
    if not has_torch:
        print(f"\nPyTorch reference SKIPPED: {t_side['skipped']}")
    print_phases(report)
    print_profiles(report)
    print("\nGoals:")
    for goal in report["goals"]:
        state = {True: "met", False: "NOT met", None: "not measured"}[goal["met"]]
        print(f"  [{state}] {goal['goal']}: {goal['measured']}")
    if ratio is not None:
        print(f"\nMindSpore / PyTorch tokens/s: {ratio:.2f}x")


def print_phases(report: dict) -> None:
    ms_p, t_p = report["phases"]["mindspore"], report["phases"]["torch"]
    if not ms_p:
        return
    print(f"\nWhere a step's time goes (fastest of {ms_p['rounds']} interleaved runs of each phase on one batch, ms; "
          "MindSpore compiles each phase as its own graph):")
    labels = [("forward", "forward (loss)"), ("forward_backward", "forward + backward"),
              ("forward_backward_norm", "forward + backward + global norm"), ("step", "whole step (+ clip, AdamW)")]
    m, t = ms_p["min_s"], (t_p or {}).get("min_s")
    print(_row("", "MindSpore", "PyTorch", "MindSpore/PyTorch"))
    for key, label in labels:
        print(_row(label, f"{m[key] * 1e3:,.1f}", f"{t[key] * 1e3:,.1f}" if t else "—",
                   f"{t[key] / m[key]:.2f}x" if t else ""))
    parts = [("backward", "forward_backward", "forward"), ("global norm", "forward_backward_norm", "forward_backward"),
             ("clip + AdamW (+ skip test)", "step", "forward_backward_norm")]
    for label, a, b in parts:
        print(_row(f"  {label}, by difference", f"{(m[a] - m[b]) * 1e3:,.1f}",
                   f"{(t[a] - t[b]) * 1e3:,.1f}" if t else "—"))


def print_profiles(report: dict, top: int = 12) -> None:
    ms_prof, t_prof = report["op_profile"]["mindspore"], report["op_profile"]["torch"]
    for title, prof in (("MindSpore profiler", ms_prof), ("torch.profiler", t_prof)):
        if not prof:
            continue
        if "skipped" in prof:
            print(f"\n{title}: skipped ({prof['skipped']})")
            continue
        walls = prof.get("profiled_step_s") or [float("nan")]
        print(f"\n{title}, 3 steps ({np.median(walls) * 1e3:,.0f} ms a step while profiled): "
              f"{prof['op_ms_per_step']:,.0f} ms of kernel time a step over {prof['ops_per_step']:,.0f} kernel calls; "
              "top op types:")
        for row in prof["by_type"][:top]:
            print(f"  {row['op']:<40}{row['ms']:>9.1f} ms {row['share']:>6.1%}  x{row['calls']:.0f}")


def main() -> None:
    args = parse_args()
    run_driver(lambda: run_bench(args), print_report, args.out, "train.json",
               "bench/train.py: the MindSpore side failed")


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    log(f"bench/train.py took {time.perf_counter() - started:.0f} s")
