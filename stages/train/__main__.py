"""`python -m stages.train`: train the decoder on the packed tokens of a Kiln data run."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from common.errors import KilnError
from common.train_cli import add_trainer_inputs, train_split

if TYPE_CHECKING:
    from stages.train.trainer import RunSummary

DESCRIPTION = """Train the Kiln decoder on the packed tokens that `make data` writes (DATA_DIR/tokenize/train.bin,
with its .idx and meta.json beside it), evaluating on validation.bin from the same folder.

The configuration is one YAML file with the sections model, optim, train, health, parallel and ascend
(see configs/train-cpu.yaml, configs/train-ascend-32npu.yaml); --set section.key=value overrides single
keys. The vocabulary size comes from meta.json (padded to a multiple of parallel.model_parallel).
Everything the run writes goes to --run-dir (default DATA_DIR/train): checkpoints/latest and
checkpoints/best, metrics.jsonl, eval.jsonl, tensorboard/ and run.json.

The first line says which device the run uses and why: train.device_target=auto takes Ascend when it
is usable here (CANN environment sourced, a supported CANN version, an NPU visible, MindSpore's
Ascend plugin loaded) and the CPU otherwise; =ascend where it is not usable exits 2 naming what is
missing, before anything is compiled.

Rerunning the same command resumes from checkpoints/latest (or best, with a warning, when latest is
corrupt); the data order depends only on (seed, step), so the result equals an uninterrupted run.
SIGTERM saves latest and exits with 143. Under msrun or `python -m stages.train.launch` (`make train
NPROC=2`) each process trains one rank of the parallel layout; rank 0 writes the metrics. A process
started as the cluster's scheduler (MS_ROLE=MS_SCHED) only serves the workers.

exit status: 0 done, 2 bad configuration or input, 3 stopped by the health checks, 143 SIGTERM."""

HEALTH_EXIT = 3
SIGTERM_EXIT = 143


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stages.train", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_trainer_inputs(parser, data_dir="root of a data run: reads tokenize/train.bin (default: data)",
                       tokens="training split (default: DATA_DIR/tokenize/train.bin)",
                       config="trainer YAML (default: built-in defaults, a 110M-parameter model)",
                       overrides="override one key, e.g. --set train.steps=50 (repeatable)")
    parser.add_argument("--validation", type=Path, default=None, metavar="BIN",
                        help="held-out split (default: validation.bin beside the training split, if present)")
    parser.add_argument("--run-dir", type=Path, default=None, help="where the run writes (default: DATA_DIR/train)")
    parser.add_argument("--restart", action="store_true",
                        help="ignore existing checkpoints in the run directory and start from step 0")
    return parser


def _summary_lines(summary: RunSummary, run_dir: Path) -> list[str]:
    best = "none (no validation split)" if summary.best_val_loss is None else (
        f"{summary.best_val_loss:.4f} (perplexity {math.exp(summary.best_val_loss):.2f})")
    if summary.last_step <= summary.start_step:
        return [
            f"done: nothing to train, the checkpoint in {run_dir / 'checkpoints'} is already at step "
            f"{summary.start_step} of {summary.total_steps} (raise train.steps to go on, or pass --restart)",
            f"  best val loss   {best}",
            f"  checkpoints     {run_dir / 'checkpoints'}/{{latest,best}}",
        ]
    return [
        f"done: steps {summary.start_step}..{summary.last_step} of {summary.total_steps}, "
        f"{summary.parameters:,} parameters",
        f"  train loss      {summary.first_loss:.4f} -> {summary.last_loss:.4f}",
        f"  best val loss   {best}",
        f"  skipped steps   {summary.skipped}",
        f"  throughput      {summary.median_tokens_per_s:,.0f} tokens/s (median), MFU {summary.median_mfu:.2%}, "
        f"data wait {summary.data_wait_fraction:.2%} of step time",
        f"  checkpoints     {run_dir / 'checkpoints'}/{{latest,best}}",
        f"  metrics         {run_dir / 'metrics.jsonl'}, {run_dir / 'eval.jsonl'}",
        f"  tensorboard     tensorboard --logdir {run_dir / 'tensorboard'}",
    ]


def padded_vocab(vocab_size: int, model_parallel: int) -> int:
    """The embedding's row count: the tokenizer's vocabulary rounded up to a multiple of ``model_parallel`` (the
    table is split by rows; the extra rows are never a target and only ever receive weight decay)."""
    return -(-vocab_size // model_parallel) * model_parallel


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from stages.train.checkpoint import Preempted
        from stages.train.config import load_trainer_config
        from stages.train.data import open_tokens
        from stages.train.device import resolve_device, setup_device
        from stages.train.distributed import is_scheduler, join_world, serve_as_scheduler
        from stages.train.health import TrainingHealthError
        from stages.train.layout import uses_semi_auto

        config = load_trainer_config(args.config, args.overrides)
        device = resolve_device(config.train.device_target, config.train.device_id)
        print(device.describe(config.train.threads), flush=True)
        if is_scheduler():
            setup_device(device, config.train.threads)
            serve_as_scheduler()
            return 0
        tokens_path = train_split(args)
        tokens = open_tokens(tokens_path, config.train.seq_len)
        print(tokens.verify(config.train.verify_tokens), flush=True)
        vocab = padded_vocab(tokens.vocab_size, config.parallel.model_parallel)
        if vocab != tokens.vocab_size:
            print(f"vocabulary of {tokens.vocab_size} ids padded to {vocab} rows, a multiple of "
                  f"parallel.model_parallel={config.parallel.model_parallel}", flush=True)
        config = config.with_vocab_size(vocab)
        if config.train.seq_len is None:  # the packed split's seq_len, so the checkpoint fingerprint holds it
            config = config.replace(train=config.train.replace(seq_len=tokens.seq_len))
        validation_path = args.validation or tokens_path.with_name("validation.bin")
        validation = None
        if args.validation or validation_path.is_file():
            validation = open_tokens(validation_path, tokens.seq_len)
            print(validation.verify(config.train.verify_tokens), flush=True)
        run_dir = args.run_dir or args.data_dir / "train"
        setup_device(device, config.train.threads, config.ascend)
        world = join_world(semi_auto=uses_semi_auto(config.parallel))
        from stages.train.trainer import Trainer

        trainer = Trainer(config, tokens, run_dir, validation=validation, world=world, restart=args.restart,
                          device=device)
        try:
            summary = trainer.run()
        except Preempted as stopped:
            print(f"stopped: {stopped}", file=sys.stderr)
            return SIGTERM_EXIT
        if world.is_main:
            print("\n".join(_summary_lines(summary, run_dir)), flush=True)
    except TrainingHealthError as err:
        print(f"error: {err}", file=sys.stderr)
        return HEALTH_EXIT
    except (KilnError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
