"""The training run: resume, step, watch health, log metrics, evaluate, checkpoint, and stop cleanly on SIGTERM.

A run directory holds ``checkpoints/{latest,best}/``, ``metrics.jsonl`` (one line per step),
``eval.jsonl`` (one line per validation), ``tensorboard/`` and ``run.json`` (the run's shape
and FLOPs accounting). Rerunning the same command on the same directory resumes from
``latest`` (or ``best`` when latest is corrupt); the data order depends only on (seed, step),
so a resumed run retraces the uninterrupted one bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import math
import signal
import sys
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import mindspore as ms
from mindspore import Tensor

from common.errors import KilnError
from common.files import atomic_write_bytes
from common.tokens import TokenDataset
from stages.eval.perplexity import validation_loss
from stages.train.checkpoint import CheckpointError, checkpoint_dir, load_checkpoint, save_checkpoint
from stages.train.config import DEVICES_AUTO
from stages.train.data import DataOrder
from stages.train.distributed import RankMean, World, agree_to_stop, barrier, gradient_reducer
from stages.train.health import HealthMonitor
from stages.train.loop import make_train_step
from stages.train.metrics import (
    RUN_NAME,
    RunMetrics,
    StepMetrics,
    cpu_peak_flops,
    model_flops_per_token,
    peak_flops,
)
from stages.train.model import GPT, count_parameters, resolve_compute_dtype
from stages.train.optim import apply_schedule, build_optimizer, clip_norm_for, lr_at
from stages.train.parallel import validate_parallel
from stages.train.run_config import TrainerConfig

CHECKPOINTS = "checkpoints"
SIGTERM_EXIT = 143


class Preempted(KilnError):
    """SIGTERM arrived; ``latest`` was saved and the run can be resumed by rerunning the command."""


@dataclass(frozen=True)
class RunSummary:
    """What a finished (or preempted) run reports."""

    run_dir: Path
    start_step: int
    last_step: int
    total_steps: int
    first_loss: float
    last_loss: float
    best_val_loss: float | None
    skipped: int
    median_tokens_per_s: float
    median_mfu: float
    data_wait_fraction: float
    parameters: int


class StopFlag:
    """Set by SIGTERM; the loop checks it between steps."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True


def resolve_peak_flops(device: str, threads: int) -> tuple[str, float]:
    """The MFU denominator: the named device's peak, or for ``auto`` the CPU estimate for ``threads`` cores."""
    if device == DEVICES_AUTO:
        if ms.get_context("device_target") == "CPU":
            return f"cpu-{threads}-cores", cpu_peak_flops(threads)
        raise KilnError("train.device must name the accelerator (e.g. ascend-910b2) for MFU off the CPU")
    return device, peak_flops(device)


def parameter_digest(model: GPT) -> str:
    """sha256 over every parameter's name and bytes: equal on all data-parallel ranks when they agree."""
    digest = hashlib.sha256()
    for name, param in sorted(model.parameters_dict().items()):
        digest.update(name.encode())
        digest.update(param.asnumpy().tobytes())
    return digest.hexdigest()


class Trainer:
    """One training run over a packed token split, on one process or one data-parallel rank."""

    def __init__(self, config: TrainerConfig, tokens: TokenDataset, run_dir: Path, *,
                 validation: TokenDataset | None = None, world: World | None = None, restart: bool = False,
                 out: TextIO = sys.stdout):
        self.config = config
        self.tokens = tokens
        self.validation = validation
        self.run_dir = Path(run_dir)
        world = world or World()
        self.world = world
        self.out = out
        train = config.train
        if tokens.seq_len > config.model.max_seq_len:
            raise KilnError(f"seq_len {tokens.seq_len} exceeds model.max_seq_len {config.model.max_seq_len}")
        if world.size > 1 and config.parallel.world_size == 1:
            config = replace(config, parallel=replace(config.parallel, data_parallel=world.size))
            self.config = config
        validate_parallel(config.parallel, world.size, config.model, train.global_batch,
                          ms.get_context("device_target"))
        if resolve_compute_dtype(config.model.compute_dtype) == ms.bfloat16 and \
                ms.get_context("device_target") != "Ascend":
            raise KilnError("model.compute_dtype=bfloat16 runs on Ascend only (the CPU backend has no bf16 "
                            "kernels): use float32 or auto")
        ms.set_seed(train.seed)  # the initial weights, like the data order, follow from the seed
        self.model = GPT(config.model)
        self.optimizer = build_optimizer(self.model, config.optim, train.steps)
        self.parameters = count_parameters(self.model)
        self.order = DataOrder(len(tokens), train.global_batch, train.seed, world.rank, world.size)
        self.tokens_per_step = train.global_batch * tokens.seq_len
        self.flops_per_token = model_flops_per_token(self.parameters, config.model.n_layers, config.model.d_model,
                                                     tokens.seq_len)
        self.device, self.device_peak = resolve_peak_flops(train.device, train.threads)
        self.peak = self.device_peak * world.size  # tokens_per_step counts every rank's tokens
        self.health = HealthMonitor(config.health)
        self.step = 0
        self.tokens_seen = 0
        self.best_val_loss: float | None = None
        if not restart:
            self._resume()
        # Compile only after the load: a compiled step does not see parameters replaced by set_data.
        self.step_fn = make_train_step(self.model, self.optimizer, clip_norm_for(config.optim, train.global_batch),
                                       gradient_reducer(self.optimizer.parameters, world),
                                       RankMean(world) if world.distributed else None)

    @property
    def checkpoints(self) -> Path:
        return self.run_dir / CHECKPOINTS

    def say(self, message: str) -> None:
        """Print a progress line (rank 0 only)."""
        if self.world.is_main:
            print(message, file=self.out, flush=True)

    def _resume(self) -> None:
        if all(checkpoint_dir(self.checkpoints, name) is None for name in ("latest", "best")):
            return
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            state = load_checkpoint(self.checkpoints, self.model, self.optimizer)
        for warning in caught:
            self.say(f"WARNING: {warning.message}")
        if state.get("config_fingerprint") != self.config.fingerprint():
            raise CheckpointError(
                f"{self.checkpoints}: written by a run with a different model, optimizer, step count, batch, "
                f"seq_len or seed (fingerprint {state.get('config_fingerprint')} != {self.config.fingerprint()}); "
                f"use a new run directory, or --restart to start over in this one")
        self.step = int(state["step"])
        self.tokens_seen = int(state["tokens_seen"])
        self.best_val_loss = state["best_val_loss"]
        self.health = HealthMonitor.from_state(state["health"], self.config.health)
        self.say(f"resuming from step {self.step} of {self.config.train.steps} ({self.tokens_seen:,} tokens seen)")
        if caught:
            self.save("latest")  # replace the unusable latest now, so a crash before the next save cannot meet it again

    def _state(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "tokens_seen": self.tokens_seen,
            "best_val_loss": self.best_val_loss,
            "config_fingerprint": self.config.fingerprint(),
            "data_seed": self.config.train.seed,
            "total_steps": self.config.train.steps,
            "world_size": self.world.size,
            "model": self.config.model.as_dict(),
            "tokens": str(self.tokens.bin_path),
            "health": self.health.state(),
        }

    def save(self, name: str) -> None:
        """Write checkpoint ``name`` (rank 0; the parameters are identical on every rank)."""
        if self.world.is_main:
            save_checkpoint(self.checkpoints, name, self.model, self.optimizer, self._state())

    def _write_run_file(self) -> None:
        run = {"parameters": self.parameters, "flops_per_token": self.flops_per_token, "device": self.device,
               "peak_flops_per_device": self.device_peak, "global_batch": self.config.train.global_batch,
               "seq_len": self.tokens.seq_len, "world_size": self.world.size, "total_steps": self.config.train.steps,
               "config": self.config.as_dict()}
        atomic_write_bytes(self.run_dir / RUN_NAME, (json.dumps(run, indent=2) + "\n").encode())

    def evaluate(self, metrics: RunMetrics | None) -> float | None:
        """Validation loss on the held-out split (rank 0), logged; saves ``best`` when it improves."""
        if self.validation is None or not self.world.is_main:
            return None
        train = self.config.train
        result = validation_loss(self.model, self.validation, train.global_batch, train.eval_batches)
        metrics.eval(self.step, result.loss, result.perplexity, result.tokens)
        improved = self.best_val_loss is None or result.loss < self.best_val_loss
        self.say(f"step {self.step}: validation loss {result.loss:.4f}, perplexity {result.perplexity:.2f} "
                 f"on {result.tokens:,} tokens" + (" (best so far)" if improved else ""))
        if improved:
            self.best_val_loss = result.loss
            self.save("best")
        return result.loss

    def run(self) -> RunSummary:
        """Train from the current step to ``train.steps``; raise :class:`Preempted` after saving on SIGTERM."""
        train = self.config.train
        stop = StopFlag()
        previous = signal.signal(signal.SIGTERM, stop)
        start = self.step
        records: list[StepMetrics] = []
        metrics = RunMetrics(self.run_dir, purge_step=start + 1 if start else None) if self.world.is_main else None
        try:
            if self.world.is_main:
                self._write_run_file()
            self.say(f"training {self.parameters:,} parameters on {len(self.tokens):,} windows of "
                     f"{self.tokens.seq_len} tokens: steps {start}..{train.steps}, global batch "
                     f"{train.global_batch}, {self.world.size} process(es); run directory {self.run_dir}")
            while self.step < train.steps:
                records.append(self._one_step(metrics))
                done = self.step
                if (train.eval_every and done % train.eval_every == 0) or done == train.steps:
                    self.evaluate(metrics)
                if (train.checkpoint_every and done % train.checkpoint_every == 0) or done == train.steps:
                    self.save("latest")
                if agree_to_stop(stop.requested, self.world):
                    self.save("latest")
                    barrier(self.world)
                    self.say(f"SIGTERM: saved {self.checkpoints / 'latest'} at step {done}; "
                             f"rerun the same command to resume")
                    raise Preempted(f"stopped by SIGTERM at step {done}")
        finally:
            signal.signal(signal.SIGTERM, previous)
            if metrics is not None:
                metrics.close()
        print(f"rank {self.world.rank}: parameters sha256 {parameter_digest(self.model)}", file=self.out, flush=True)
        return self._summary(start, records)

    def _one_step(self, metrics: RunMetrics | None) -> StepMetrics:
        train = self.config.train
        step = self.step
        began = time.perf_counter()
        inputs, labels = self.order.batch(self.tokens, step)
        fetched = time.perf_counter()
        apply_schedule(self.optimizer, step, self.config.optim, train.steps)
        loss_t, grad_norm_t, applied_t = self.step_fn(Tensor(inputs, ms.int32), Tensor(labels, ms.int32))
        loss, grad_norm, applied = float(loss_t.asnumpy()), float(grad_norm_t.asnumpy()), bool(applied_t.asnumpy())
        ended = time.perf_counter()
        self.step += 1
        self.tokens_seen += self.tokens_per_step
        record = StepMetrics.measure(step=self.step, loss=loss, grad_norm=grad_norm,
                                     lr=lr_at(step, self.config.optim, train.steps), tokens=self.tokens_per_step,
                                     step_time=ended - began, data_wait=fetched - began,
                                     flops_per_token=self.flops_per_token, peak_flops=self.peak,
                                     skipped=not applied)
        if metrics is not None:
            metrics.step(record)
        for warning in self.health.observe(step, loss, grad_norm, applied):
            self.say(f"WARNING: {warning}")
        if self.step % train.log_every == 0 or self.step == train.steps:
            self.say(f"step {self.step}/{train.steps}  loss {loss:.4f}  grad norm {grad_norm:.3f}  "
                     f"lr {record.lr:.2e}  {record.tokens_per_s:,.0f} tok/s  MFU {record.mfu:.1%}  "
                     f"data wait {record.data_wait_fraction:.2%}")
        return record

    def _summary(self, start: int, records: list[StepMetrics]) -> RunSummary:
        timed = records[1:] if len(records) > 1 else records  # the first step compiles the graph
        finite = [r.loss for r in records if math.isfinite(r.loss)]

        def median(values: list[float]) -> float:
            ordered = sorted(values)
            return ordered[len(ordered) // 2] if ordered else 0.0

        wait = sum(r.data_wait_fraction * r.step_time for r in timed)
        total = sum(r.step_time for r in timed)
        return RunSummary(run_dir=self.run_dir, start_step=start, last_step=self.step,
                          total_steps=self.config.train.steps,
                          first_loss=finite[0] if finite else math.nan, last_loss=finite[-1] if finite else math.nan,
                          best_val_loss=self.best_val_loss, skipped=self.health.skipped_total,
                          median_tokens_per_s=median([r.tokens_per_s for r in timed]),
                          median_mfu=median([r.mfu for r in timed]),
                          data_wait_fraction=wait / total if total else 0.0, parameters=self.parameters)
