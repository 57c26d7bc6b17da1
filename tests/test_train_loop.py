"""The compiled training step: a tiny model overfits one batch; non-finite steps are skipped in the graph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from mindspore import Tensor, ops

from stages.train.config import ModelConfig, OptimConfig
from stages.train.model import GPT
from stages.train.optim import build_optimizer
from stages.train.step import make_train_step, setup_cpu
from tests.test_train_data import write_tokens

setup_cpu(1)

REPO = Path(__file__).resolve().parent.parent
TINY = ModelConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=16)


def fixed_batch(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    window = np.random.default_rng(seed).integers(1, 64, size=(4, 17)).astype(np.int32)
    return window[:, :-1], window[:, 1:]


def test_tiny_model_overfits_one_batch() -> None:
    model = GPT(TINY)
    optimizer = build_optimizer(model, OptimConfig(lr=3e-3, min_lr=3e-3, weight_decay=0.0), total_steps=80)
    step_fn = make_train_step(model, optimizer, clip_norm=1.0)
    inputs, labels = (Tensor(part) for part in fixed_batch())
    losses = []
    for _ in range(80):
        loss, _, applied = step_fn(inputs, labels)
        assert bool(applied.asnumpy())
        losses.append(float(loss.asnumpy()))
    assert losses[-1] < 0.2 * losses[0], (losses[0], losses[-1])
    assert int(optimizer.global_step.asnumpy()[0]) == 80


def test_non_finite_loss_skips_the_update() -> None:
    model = GPT(TINY)
    optimizer = build_optimizer(model, OptimConfig(lr=1e-3), total_steps=10)
    step_fn = make_train_step(model, optimizer, clip_norm=1.0)
    inputs, labels = fixed_batch(1)
    table = model.wte.embedding_table.asnumpy().copy()
    poisoned = table.copy()
    poisoned[inputs[0, 0]] = np.nan
    ops.assign(model.wte.embedding_table, Tensor(poisoned))
    before = {p.name: p.asnumpy().copy() for p in model.trainable_params()}

    loss, grad_norm, applied = step_fn(Tensor(inputs), Tensor(labels))
    assert not bool(applied.asnumpy()) and not np.isfinite(float(loss.asnumpy()))
    for p in model.trainable_params():
        np.testing.assert_array_equal(p.asnumpy(), before[p.name], err_msg=p.name)
    assert int(optimizer.global_step.asnumpy()[0]) == 1

    ops.assign(model.wte.embedding_table, Tensor(table))
    loss, grad_norm, applied = step_fn(Tensor(inputs), Tensor(labels))
    assert bool(applied.asnumpy()) and np.isfinite(float(grad_norm.asnumpy()))
    assert not np.array_equal(model.wte.embedding_table.asnumpy(), table)
    assert int(optimizer.global_step.asnumpy()[0]) == 2


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "stages.train", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180)


def test_cli_help() -> None:
    result = _cli("--help")
    assert result.returncode == 0 and "--tokens" in result.stdout


def test_cli_trains_on_a_token_file(tmp_path: Path) -> None:
    stream = np.tile(np.arange(1, 33), 20)
    bin_path = write_tokens(tmp_path / "tokens", stream, vocab_size=40, seq_len=16)
    config = tmp_path / "train.yaml"
    config.write_text("model: {d_model: 32, n_layers: 1, n_heads: 2, mlp: gelu, norm: layernorm}\n"
                      "optim: {lr: 0.01, min_lr: 0.001}\n")
    result = _cli("--tokens", str(bin_path), "--config", str(config), "--run-dir", str(tmp_path / "run"),
                  "--set", "train.steps=40", "--set", "train.global_batch=4", "--set", "train.threads=1")
    assert result.returncode == 0, result.stderr
    steps = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert len(steps) == 40 and "done: steps 0..40 of 40" in result.stdout
    assert steps[-1]["loss"] < 0.5 * steps[0]["loss"]
    assert steps[0]["lr"] == 0.01 and abs(steps[-1]["lr"] - 0.001) < 1e-9


def test_cli_rejects_unknown_config_keys(tmp_path: Path) -> None:
    bin_path = write_tokens(tmp_path / "tokens", np.arange(100) % 9, vocab_size=9, seq_len=8)
    config = tmp_path / "bad.yaml"
    config.write_text("model: {d_model: 32, heads: 2}\n")
    result = _cli("--tokens", str(bin_path), "--config", str(config))
    assert result.returncode == 2 and f"{config}: model.heads: unknown key" in result.stderr
