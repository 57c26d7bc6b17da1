"""Validation loss and perplexity of a model on a packed token split."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from common.tokens import TokenDataset
from stages.eval.errors import EvalError
from stages.eval.forward import forward_of
from stages.train.loss import IGNORE_INDEX
from stages.train.model import GPT


@dataclass(frozen=True)
class ValidationResult:
    """Token-weighted mean negative log-likelihood, its exponential, and how much was read."""

    loss: float
    perplexity: float
    tokens: int
    windows: int


def validation_loss(model: GPT, tokens: TokenDataset, batch_size: int,
                    max_batches: int | None = None) -> ValidationResult:
    """Mean NLL over every predicted token of windows 0 .. n-1, in order, ``batch_size`` windows at a time
    (at most ``max_batches`` batches). The last batch is padded with ignored labels so that every batch
    has one shape and the forward pass compiles once. The model's parameters are only read; weights
    replaced with ``set_data`` after the model's first evaluation are not seen (see ``forward_of``)."""
    if batch_size < 1:
        raise EvalError(f"batch size must be positive, got {batch_size}")
    if max_batches is not None and max_batches < 1:
        raise EvalError(f"max batches must be positive, got {max_batches}")
    cfg = model.cfg
    if tokens.seq_len > cfg.max_seq_len:
        raise EvalError(f"{tokens.bin_path}: windows of {tokens.seq_len} tokens exceed the model's "
                        f"max_seq_len {cfg.max_seq_len}")
    if tokens.vocab_size > cfg.vocab_size:
        raise EvalError(f"{tokens.bin_path}: vocabulary of {tokens.vocab_size} ids exceeds the model's "
                        f"{cfg.vocab_size}")
    windows = len(tokens) if max_batches is None else min(len(tokens), max_batches * batch_size)
    if windows == 0:
        raise EvalError(f"{tokens.bin_path}: no complete window of {tokens.seq_len} + 1 tokens")
    forward = forward_of(model)
    total, count = 0.0, 0
    for start in range(0, windows, batch_size):
        inputs, labels = tokens.batch(np.arange(start, min(start + batch_size, windows)))
        missing = batch_size - len(inputs)
        if missing:
            inputs = np.pad(inputs, ((0, missing), (0, 0)))
            labels = np.pad(labels, ((0, missing), (0, 0)), constant_values=IGNORE_INDEX)
        batch_total, batch_count = forward.nll(inputs, labels)
        total += batch_total
        count += batch_count
    loss = total / count
    return ValidationResult(loss=loss, perplexity=_exp(loss), tokens=count, windows=windows)


def _exp(value: float) -> float:
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf
