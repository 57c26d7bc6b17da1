"""Compiled, read-only forward passes of a causal LM: per-token log-probabilities and next-token logits.

Each pass is an ``@ms.jit`` function, compiled once per input shape. Rows of varying length are
right-padded to a power of two (at least MIN_BUCKET, at most ``max_seq_len``): a causal model's
earlier positions never see the padding, and a run compiles a handful of shapes instead of one
per length.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from stages.train.model import GPT

MIN_BUCKET = 16


def bucket_length(n: int, max_seq_len: int) -> int:
    """The padded length of ``n`` positions: the next power of two, at least MIN_BUCKET, at most ``max_seq_len``."""
    if not 0 < n <= max_seq_len:
        raise ValueError(f"{n} positions do not fit a context of {max_seq_len}")
    return min(max_seq_len, max(MIN_BUCKET, 1 << (n - 1).bit_length()))


class CompiledForward:
    """``model`` (ids (batch, seq) -> fp32 logits (batch, seq, vocab)) behind compiled passes that only read it."""

    def __init__(self, model: nn.Cell, max_seq_len: int):
        self.model = model
        self.max_seq_len = max_seq_len

        @ms.jit
        def target_logprobs(inputs: Tensor, targets: Tensor) -> Tensor:
            log_probs = ops.log_softmax(model(inputs), -1)
            return ops.gather_elements(log_probs, -1, ops.expand_dims(targets, -1)).squeeze(-1)

        @ms.jit
        def logits_at(inputs: Tensor, position: Tensor) -> Tensor:
            return ops.gather(model(inputs), position, 1)

        self._target_logprobs = target_logprobs
        self._logits_at = logits_at

    def target_logprobs(self, rows: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """For each row of 2 .. max_seq_len + 1 ids, log p(row[i] | row[:i]) for i = 1 .. len(row) - 1."""
        length = bucket_length(max(len(row) for row in rows) - 1, self.max_seq_len)
        inputs = np.zeros((len(rows), length), np.int32)
        targets = np.zeros((len(rows), length), np.int32)
        for i, row in enumerate(rows):
            if len(row) < 2:
                raise ValueError("a scored row needs at least two tokens")
            inputs[i, :len(row) - 1] = row[:-1]
            targets[i, :len(row) - 1] = row[1:]
        picked = self._target_logprobs(Tensor(inputs), Tensor(targets)).asnumpy()
        return [picked[i, :len(row) - 1].astype(np.float64) for i, row in enumerate(rows)]

    def next_logits(self, context: Sequence[int]) -> np.ndarray:
        """fp32 logits (vocab,) of the token that follows ``context`` (1 .. max_seq_len ids)."""
        inputs = np.zeros((1, bucket_length(len(context), self.max_seq_len)), np.int32)
        inputs[0, :len(context)] = context
        position = Tensor(np.array([len(context) - 1], np.int32))
        return self._logits_at(Tensor(inputs), position).asnumpy()[0, 0]


@functools.lru_cache(maxsize=1)
def forward_of(model: GPT) -> CompiledForward:
    """The compiled passes of ``model``, kept for the most recent model so that they compile once per shape.

    They read the weights as they are at each call, but not weights replaced with ``Parameter.set_data``
    (as ``load_checkpoint`` does) after the first pass: load first."""
    return CompiledForward(model, model.cfg.max_seq_len)
