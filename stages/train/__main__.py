"""`python -m stages.train`: train the decoder on a packed token split (single process, CPU)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from common.errors import ConfigError, KilnError
from stages.train.config import ModelConfig, OptimConfig, from_dict

DESCRIPTION = """Train the Kiln decoder on <tokens>.bin (with its .idx and meta.json beside it).

--config reads a YAML file with optional `model:` and `optim:` sections (keys of ModelConfig
and OptimConfig); the vocabulary size comes from meta.json. Batches are windows of seq_len + 1
tokens whose order depends only on (--seed, step). Each step prints one JSON line with the
loss, the gradient norm before clipping, the learning rate, whether the update was applied
(non-finite losses or gradient norms are skipped in the graph) and the step time."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stages.train", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=Path, required=True, metavar="BIN", help="packed training split (.bin)")
    parser.add_argument("--config", type=Path, default=None, metavar="FILE", help="YAML with model/optim sections")
    parser.add_argument("--steps", type=int, default=100, help="optimizer steps (default 100)")
    parser.add_argument("--global-batch", type=int, default=8, help="sequences per step (default 8)")
    parser.add_argument("--seq-len", type=int, default=None, help="tokens per sequence (default: meta.json)")
    parser.add_argument("--seed", type=int, default=0, help="data order seed (default 0)")
    parser.add_argument("--threads", type=int, default=2, help="MindSpore CPU operator threads (default 2)")
    return parser


def _sections(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read ({err})") from None
    if not isinstance(loaded, dict) or set(loaded) - {"model", "optim"}:
        raise ConfigError(f"{path}: expected a mapping with only 'model' and 'optim' sections")
    return loaded


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from stages.train.data import DataOrder, open_tokens
        from stages.train.loop import make_train_step, run_steps, setup_cpu
        from stages.train.model import GPT, count_parameters
        from stages.train.optim import build_optimizer, clip_norm_for, lr_at

        sections = _sections(args.config)
        tokens = open_tokens(args.tokens, args.seq_len)
        model_cfg = from_dict(ModelConfig, "model", {"max_seq_len": tokens.seq_len, **sections.get("model", {}),
                                                     "vocab_size": tokens.vocab_size})
        optim_cfg = from_dict(OptimConfig, "optim", sections.get("optim", {}))
        if tokens.seq_len > model_cfg.max_seq_len:
            raise ConfigError(f"seq_len {tokens.seq_len} exceeds model.max_seq_len {model_cfg.max_seq_len}")
        setup_cpu(args.threads)
        model = GPT(model_cfg)
        optimizer = build_optimizer(model, optim_cfg, args.steps)
        step_fn = make_train_step(model, optimizer, clip_norm_for(optim_cfg, args.global_batch))
        order = DataOrder(len(tokens), args.global_batch, args.seed)
        print(json.dumps({"parameters": count_parameters(model), "windows": len(tokens), "seq_len": tokens.seq_len}),
              flush=True)
        batches = (order.batch(tokens, step) for step in range(args.steps))
        for record in run_steps(step_fn, batches, args.steps):
            print(json.dumps({"step": record.step, "loss": round(record.loss, 5),
                              "grad_norm": round(record.grad_norm, 5),
                              "lr": lr_at(record.step, optim_cfg, args.steps), "applied": record.applied,
                              "seconds": round(record.seconds, 4)}), flush=True)
    except (KilnError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
