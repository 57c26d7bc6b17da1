"""Validation loss and perplexity of a model on a packed token split: the trainer's periodic evaluation, and the
evaluator's perplexity."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from common.errors import KilnError
from common.tokens import TokenDataset
from stages.train.config import ParallelConfig
from stages.train.layout import dataset_strategy
from stages.train.loss import IGNORE_INDEX, masked_cross_entropy
from stages.train.model import GPT

NllFn = Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]


class SplitMismatchError(KilnError):
    """A token split does not fit the model (longer windows, a larger vocabulary) or holds no window."""


@dataclass(frozen=True)
class ValidationResult:
    """Token-weighted mean negative log-likelihood, its exponential, and how much was read."""

    loss: float
    perplexity: float
    tokens: int
    windows: int


@functools.lru_cache(maxsize=1)
def _nll_pass(model: GPT) -> NllFn:
    """The compiled (summed NLL, labels counted) pass of ``model``, kept for the most recent model so that
    periodic evaluation compiles once."""

    @ms.jit
    def nll_sum(inputs: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        count = ops.cast(labels != IGNORE_INDEX, ms.float32).sum()
        return masked_cross_entropy(model(inputs), labels) * count, count

    return nll_sum


def parallel_nll_pass(model: GPT, parallel: ParallelConfig) -> NllFn:
    """The (summed NLL, labels counted) pass under a semi-auto layout (Ascend only): the same function as the
    single-device pass, wrapped in ``AutoParallel`` with the training step's data-parallel batch split, so that
    each rank feeds its slice and both sums come out global."""
    from stages.train.parallel import build_auto_parallel

    def nll_sum(inputs: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        count = ops.cast(labels != IGNORE_INDEX, ms.float32).sum()
        return masked_cross_entropy(model(inputs), labels) * count, count

    wrapped = build_auto_parallel(nll_sum, parallel.replace(optimizer_sharding=False))
    wrapped.dataset_strategy(dataset_strategy(parallel))
    return wrapped


def validation_loss(model: GPT, tokens: TokenDataset, batch_size: int,
                    max_batches: int | None = None, *, nll_pass: NllFn | None = None,
                    shard: tuple[int, int] = (0, 1)) -> ValidationResult:
    """Mean NLL over every predicted token of windows 0 .. n-1, in order, ``batch_size`` windows at a time
    (at most ``max_batches`` batches). The last batch is padded with ignored labels so that every batch
    has one shape and the pass compiles once. The pass reads the weights as the optimizer updates them in
    place, but not weights replaced with ``Parameter.set_data`` (as ``load_checkpoint`` does) after the
    model's first evaluation: load first.

    Under a semi-auto layout give the :func:`parallel_nll_pass` and ``shard`` = (data-parallel index,
    data_parallel): each rank feeds its contiguous slice of every batch and the pass returns global sums."""
    if batch_size < 1:
        raise ValueError(f"batch size must be positive, got {batch_size}")
    if max_batches is not None and max_batches < 1:
        raise ValueError(f"max batches must be positive, got {max_batches}")
    cfg = model.cfg
    if tokens.seq_len > cfg.max_seq_len:
        raise SplitMismatchError(f"{tokens.bin_path}: windows of {tokens.seq_len} tokens exceed the model's "
                                 f"max_seq_len {cfg.max_seq_len}")
    if tokens.vocab_size > cfg.vocab_size:
        raise SplitMismatchError(f"{tokens.bin_path}: vocabulary of {tokens.vocab_size} ids exceeds the model's "
                                 f"{cfg.vocab_size}")
    windows = len(tokens) if max_batches is None else min(len(tokens), max_batches * batch_size)
    if windows == 0:
        raise SplitMismatchError(f"{tokens.bin_path}: no complete window of {tokens.seq_len} + 1 tokens")
    index, parts = shard
    if batch_size % parts:
        raise ValueError(f"batch size {batch_size} is not divisible by the {parts} data-parallel slices")
    nll_sum = nll_pass or _nll_pass(model)
    total, count = 0.0, 0
    for start in range(0, windows, batch_size):
        inputs, labels = tokens.batch(np.arange(start, min(start + batch_size, windows)))
        missing = batch_size - len(inputs)
        if missing:
            inputs = np.pad(inputs, ((0, missing), (0, 0)))
            labels = np.pad(labels, ((0, missing), (0, 0)), constant_values=IGNORE_INDEX)
        if parts > 1:
            rows = slice(index * batch_size // parts, (index + 1) * batch_size // parts)
            inputs, labels = inputs[rows], labels[rows]
        batch_total, batch_count = nll_sum(Tensor(inputs, ms.int32), Tensor(labels, ms.int32))
        total += float(batch_total.asnumpy())
        count += int(round(float(batch_count.asnumpy())))
    loss = total / count
    return ValidationResult(loss=loss, perplexity=_exp(loss), tokens=count, windows=windows)


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf
