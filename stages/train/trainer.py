"""The training run: resume, step, watch health, log metrics, evaluate, checkpoint, and stop cleanly on SIGTERM.

A run directory holds ``checkpoints/{latest,best}/``, ``metrics.jsonl`` (one line per step, with a
hardware sample every ``log_every`` steps), ``eval.jsonl`` (one line per validation), ``tensorboard/``,
``run.json`` (the run's shape, device, layout and FLOPs accounting) and, under a semi-auto parallel
layout, ``strategy/rank_<r>.ckpt`` (the parameter layouts MindSpore's compiler wrote). Rerunning the
same command on the same directory resumes from ``latest`` (or ``best`` when latest is corrupt); the
data order depends only on (seed, step), so a resumed run retraces the uninterrupted one bit for bit.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import mindspore as ms
from mindspore import Tensor, nn

from common.errors import KilnError
from common.files import atomic_write_json
from common.tokens import TokenDataset
from stages.train.checkpoint import CheckpointManager
from stages.train.config import TrainerConfig
from stages.train.data import DataOrder
from stages.train.device import DeviceChoice
from stages.train.distributed import RankMean, World, create_rank_group, gradient_reducer, launched_by_msrun
from stages.train.flops import model_flops_per_token, resolve_peak_flops
from stages.train.hardware import hardware_warnings, sampler_for
from stages.train.health import HealthMonitor
from stages.train.metrics import RUN_NAME, RunMetrics, StepMetrics
from stages.train.model import GPT, count_parameters, resolve_compute_dtype
from stages.train.optim import apply_schedule, build_optimizer, clip_norm_for, lr_table
from stages.train.parallel import (
    AutoParallel,
    apply_shard_strategies,
    assign_pipeline_stages,
    build_auto_parallel,
    configure_auto_parallel,
    layout_record,
    pipeline_cell,
    pipeline_column,
    rank_position,
    uses_semi_auto,
    validate_parallel,
)
from stages.train.step import LossCell, StageSum, make_parallel_train_step, make_train_step
from stages.train.validation import parallel_nll_pass, validation_loss

CHECKPOINTS = "checkpoints"
STRATEGY_DIR = "strategy"


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


@dataclass
class TrainProgress:
    """Steps done and tokens seen: the trainer's own step counter, which a resume continues from."""

    step: int = 0
    tokens_seen: int = 0

    def state_dict(self) -> dict[str, Any]:
        return {"step": self.step, "tokens_seen": self.tokens_seen}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.step = int(state["step"])
        self.tokens_seen = int(state["tokens_seen"])


def parameter_digest(model: GPT) -> str:
    """sha256 over every parameter's name and bytes: equal on all data-parallel ranks when they agree."""
    digest = hashlib.sha256()
    for name, param in sorted(model.parameters_dict().items()):
        digest.update(name.encode())
        digest.update(param.asnumpy().tobytes())
    return digest.hexdigest()


def _npu_name() -> str | None:
    """The chip name npu-smi reports for this node's first NPU (e.g. 910B2), for the MFU peak; None if unknown."""
    from stages.train.npu_smi import NpuSmiError, parse_npu_smi_info, run_npu_smi

    try:
        return parse_npu_smi_info(run_npu_smi()).chips[0].name
    except NpuSmiError:
        return None


class Trainer:
    """One training run over a packed token split, on one process or one rank of a parallel layout.

    ``device`` is the :class:`stages.train.device.DeviceChoice` the process was set up for (default: the
    back end MindSpore is set to). Plain data parallel (or one process) compiles
    :func:`stages.train.step.make_train_step`; a semi-auto layout (``parallel.model_parallel`` or
    ``pipeline_stages`` > 1, or ``optimizer_sharding``; Ascend only) shards the GPT's matmuls
    (:func:`stages.train.parallel.apply_shard_strategies`), assigns its pipeline stages, and wraps
    :func:`stages.train.step.make_parallel_train_step` in ``AutoParallel``: :attr:`sharded` names the
    cells given a strategy and :attr:`auto_parallel` is the wrapper (None on the plain path). Nothing is
    compiled before the first step.
    """

    def __init__(self, config: TrainerConfig, tokens: TokenDataset, run_dir: Path, *,
                 validation: TokenDataset | None = None, world: World | None = None, restart: bool = False,
                 out: TextIO = sys.stdout, device: DeviceChoice | None = None):
        self.tokens = tokens
        self.validation = validation
        self.run_dir = Path(run_dir)
        world = world or World()
        self.world = world
        self.out = out
        target = device.target if device is not None else ms.get_context("device_target")
        self.device_choice = device
        self.device_target = target
        train = config.train
        if tokens.seq_len > config.model.max_seq_len:
            raise KilnError(f"seq_len {tokens.seq_len} exceeds model.max_seq_len {config.model.max_seq_len}")
        if world.size > 1 and config.parallel.world_size == 1:
            config = config.replace(parallel=config.parallel.replace(data_parallel=world.size))
        self.config = config
        parallel = config.parallel
        validate_parallel(parallel, world.size, config.model, train.global_batch, target)
        if resolve_compute_dtype(config.model.compute_dtype) == ms.bfloat16 and \
                ms.get_context("device_target") != "Ascend":
            raise KilnError("model.compute_dtype=bfloat16 runs on Ascend only (the CPU backend has no bf16 "
                            "kernels): use float32 or auto")
        if config.model.attention == "flash" and ms.get_context("device_target") != "Ascend":
            raise KilnError("model.attention=flash runs on Ascend only (FlashAttentionScore has no CPU kernel): "
                            "use matmul or auto")
        self.semi_auto = uses_semi_auto(parallel)
        self.position = rank_position(world.rank, parallel)
        ms.set_seed(train.seed)  # the initial weights, like the data order, follow from the seed
        self.model = GPT(config.model)
        self.sharded: list[str] = []
        self.auto_parallel: AutoParallel | None = None
        self.net_with_loss: nn.Cell | None = None
        if self.semi_auto:
            if config.ascend.recompute and target == "Ascend":
                for block in self.model.blocks:
                    block.recompute()
            self.sharded = apply_shard_strategies(self.model, parallel)
            assign_pipeline_stages(self.model, parallel)
        self.optimizer = build_optimizer(self.model, config.optim, train.steps)
        self.lr = lr_table(config.optim, train.steps)
        self.parameters = count_parameters(self.model)
        self.order = DataOrder.for_rank(len(tokens), train.global_batch, train.seed, world.rank, parallel)
        self.tokens_per_step = train.global_batch * tokens.seq_len
        self.flops_per_token = model_flops_per_token(self.parameters, config.model.n_layers, config.model.d_model,
                                                     tokens.seq_len)
        npu_name = _npu_name() if target == "Ascend" and train.peak_flops_device == "auto" else None
        self.device, self.device_peak = resolve_peak_flops(train.peak_flops_device, train.threads, target, npu_name)
        self.peak = self.device_peak * world.size  # tokens_per_step counts every rank's tokens
        self.health = HealthMonitor(config.health)
        self.progress = TrainProgress()
        self.strategy_file = self.run_dir / STRATEGY_DIR / f"rank_{world.rank}.ckpt"
        record = {"total_steps": train.steps, "world_size": world.size, "model": config.model.model_dump(),
                  "tokens": str(tokens.bin_path)}
        self.checkpoints = CheckpointManager(
            self.run_dir / CHECKPOINTS, self.model, self.optimizer, [self.progress, self.order, self.health],
            fingerprint=config.fingerprint(), record=record, every=train.checkpoint_every, total_steps=train.steps,
            world=world, say=self.say, layout=layout_record(parallel) if self.semi_auto else None,
            strategy_file=self.strategy_file)
        if not restart and self.checkpoints.load():
            self.say(f"resuming from step {self.progress.step} of {train.steps} "
                     f"({self.progress.tokens_seen:,} tokens seen)")
        # Compile only after the load: a compiled step does not see parameters replaced by set_data.
        clip = clip_norm_for(config.optim, train.global_batch)
        self._nll_pass = None
        if self.semi_auto:
            self.step_fn = self.auto_parallel = self._parallel_step(clip)
        else:
            self.step_fn = make_train_step(self.model, self.optimizer, clip,
                                           gradient_reducer(self.optimizer.parameters, world),
                                           RankMean(world) if world.distributed else None)
        self.hardware = sampler_for(target) if world.is_main else None

    def _parallel_step(self, clip: float) -> AutoParallel:
        """The semi-auto step: the loss cell (micro-batched with pipeline stages), the pipeline's gradient
        accumulation and cross-stage sums, all wrapped in ``AutoParallel`` with the layout's settings."""
        from mindspore.parallel.nn import PipelineGradReducer

        parallel = self.config.parallel
        net_with_loss = self.net_with_loss = pipeline_cell(LossCell(self.model), parallel)
        reducer = stage_sum = None
        last_stage = True
        if parallel.pipeline_stages > 1:
            reducer = PipelineGradReducer(self.optimizer.parameters, opt_shard=parallel.optimizer_sharding)
            last_stage = self.position.stage == parallel.pipeline_stages - 1
            if launched_by_msrun():  # collectives exist only in a launched job (not when a test builds the trainer)
                group = create_rank_group(f"kiln_pp_d{self.position.data}_m{self.position.model}",
                                          pipeline_column(self.world.rank, parallel))
                stage_sum = StageSum(group)
        step = make_parallel_train_step(net_with_loss, self.optimizer, clip, pipeline_reducer=reducer,
                                        stage_sum=stage_sum, last_stage=last_stage)
        self.strategy_file.parent.mkdir(parents=True, exist_ok=True)
        return configure_auto_parallel(build_auto_parallel(step, parallel), parallel, str(self.strategy_file))

    def say(self, message: str) -> None:
        """Print a progress line (rank 0 only)."""
        if self.world.is_main:
            print(message, file=self.out, flush=True)

    def _write_run_file(self) -> None:
        run = {"parameters": self.parameters, "flops_per_token": self.flops_per_token, "device": self.device,
               "peak_flops_per_device": self.device_peak, "global_batch": self.config.train.global_batch,
               "seq_len": self.tokens.seq_len, "world_size": self.world.size, "total_steps": self.config.train.steps,
               "device_target": self.device_target, "layout": layout_record(self.config.parallel),
               "semi_auto_parallel": self.semi_auto, "config": self.config.model_dump()}
        if self.device_choice is not None:
            run["device_choice"] = self.device_choice.describe(self.config.train.threads)
        atomic_write_json(self.run_dir / RUN_NAME, run)

    def evaluate(self, metrics: RunMetrics | None) -> None:
        """Validation loss on the held-out split, logged by rank 0; ``best`` is saved when it improves.

        Plain data parallel evaluates on rank 0 alone (every rank holds the whole model). Under a semi-auto
        layout every rank runs the sharded forward on its slice of each batch; with pipeline stages the
        validation is skipped (a forward-only pipeline pass is not built): evaluate the merged checkpoint
        with ``python -m stages.eval`` instead."""
        if self.validation is None:
            return
        train = self.config.train
        if self.semi_auto:
            if self.config.parallel.pipeline_stages > 1:
                if self.progress.step == train.steps:
                    self.say("validation skipped under pipeline stages: run python -m stages.eval on the checkpoint")
                return
            if self._nll_pass is None:
                self._nll_pass = parallel_nll_pass(self.model, self.config.parallel)
            result = validation_loss(self.model, self.validation, train.global_batch, train.eval_batches,
                                     nll_pass=self._nll_pass,
                                     shard=(self.position.data, self.config.parallel.data_parallel))
        elif not self.world.is_main:
            return
        else:
            result = validation_loss(self.model, self.validation, train.global_batch, train.eval_batches)
        if metrics is not None:
            metrics.eval(self.progress.step, result.loss, result.perplexity, result.tokens)
        improved = self.checkpoints.validated(result.loss)
        self.say(f"step {self.progress.step}: validation loss {result.loss:.4f}, perplexity {result.perplexity:.2f} "
                 f"on {result.tokens:,} tokens" + (" (best so far)" if improved else ""))

    def run(self) -> RunSummary:
        """Train from the current step to ``train.steps``; raise :class:`stages.train.checkpoint.Preempted`
        after saving on SIGTERM."""
        train = self.config.train
        start = self.progress.step
        records: list[StepMetrics] = []
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.checkpoints)
            metrics = None
            if self.world.is_main:
                metrics = stack.enter_context(RunMetrics(self.run_dir, purge_step=start + 1 if start else None))
                self._write_run_file()
            self.say(f"training {self.parameters:,} parameters on {len(self.tokens):,} windows of "
                     f"{self.tokens.seq_len} tokens: steps {start}..{train.steps}, global batch "
                     f"{train.global_batch}, {self.world.size} process(es); run directory {self.run_dir}")
            if self.hardware is not None:
                stack.callback(self.hardware.close)
            while self.progress.step < train.steps:
                records.append(self._one_step(metrics))
                done = self.progress.step
                if (train.eval_every and done % train.eval_every == 0) or done == train.steps:
                    self.evaluate(metrics)
                self.checkpoints.step_done(done)
        print(f"rank {self.world.rank}: parameters sha256 {parameter_digest(self.model)}", file=self.out, flush=True)
        return self._summary(start, records)

    def _one_step(self, metrics: RunMetrics | None) -> StepMetrics:
        train = self.config.train
        step = self.progress.step
        lr = float(self.lr[step])
        began = time.perf_counter()
        inputs, labels = self.order.batch(self.tokens, step)
        fetched = time.perf_counter()
        apply_schedule(self.optimizer, lr)
        loss_t, grad_norm_t, applied_t = self.step_fn(Tensor(inputs, ms.int32), Tensor(labels, ms.int32))
        loss, grad_norm, applied = float(loss_t.asnumpy()), float(grad_norm_t.asnumpy()), bool(applied_t.asnumpy())
        ended = time.perf_counter()
        self.progress.step += 1
        self.progress.tokens_seen += self.tokens_per_step
        record = StepMetrics.measure(step=self.progress.step, loss=loss, grad_norm=grad_norm, lr=lr,
                                     tokens=self.tokens_per_step, step_time=ended - began, data_wait=fetched - began,
                                     flops_per_token=self.flops_per_token, peak_flops=self.peak, skipped=not applied)
        logged = self.progress.step % train.log_every == 0 or self.progress.step == train.steps
        sample = self.hardware.sample() if logged and self.hardware is not None else None
        if metrics is not None:
            metrics.step(record, sample)
        for warning in self.health.observe(self.progress.step, loss, grad_norm, applied):
            self.say(f"WARNING: {warning}")
        for warning in hardware_warnings(sample):
            self.say(f"WARNING: step {self.progress.step}: {warning}")
        if logged:
            self.say(f"step {self.progress.step}/{train.steps}  loss {loss:.4f}  grad norm {grad_norm:.3f}  "
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
        return RunSummary(run_dir=self.run_dir, start_step=start, last_step=self.progress.step,
                          total_steps=self.config.train.steps,
                          first_loss=finite[0] if finite else math.nan, last_loss=finite[-1] if finite else math.nan,
                          best_val_loss=self.checkpoints.best_val_loss, skipped=self.health.skipped_total,
                          median_tokens_per_s=median([r.tokens_per_s for r in timed]),
                          median_mfu=median([r.mfu for r in timed]),
                          data_wait_fraction=wait / total if total else 0.0, parameters=self.parameters)
