"""Masked next-token cross entropy in fp32."""

from __future__ import annotations

import mindspore as ms
from mindspore import Tensor, ops

IGNORE_INDEX = -100


def masked_cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Mean negative log-likelihood of ``labels`` (batch, seq) under ``logits`` (batch, seq, vocab),
    over the positions whose label is not IGNORE_INDEX; 0 when every position is ignored."""
    log_probs = ops.log_softmax(ops.cast(logits, ms.float32), -1)
    mask = labels != IGNORE_INDEX
    safe_labels = ops.where(mask, labels, ops.zeros_like(labels))
    picked = ops.gather_elements(log_probs, -1, ops.expand_dims(safe_labels, -1)).squeeze(-1)
    weights = ops.cast(mask, ms.float32)
    return -(picked * weights).sum() / ops.maximum(weights.sum(), 1.0)
