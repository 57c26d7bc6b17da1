"""Masked next-token cross entropy against a numpy reference."""

from __future__ import annotations

import numpy as np
from mindspore import Tensor

from stages.train.loss import IGNORE_INDEX, masked_cross_entropy
from stages.train.step import setup_cpu

setup_cpu(1)


def numpy_reference(logits: np.ndarray, labels: np.ndarray) -> float:
    logits = logits.astype(np.float64)
    log_probs = logits - logits.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
    real = labels != IGNORE_INDEX
    return float(-log_probs[real, labels[real]].mean())


def test_matches_numpy_with_padding_masked() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 11)).astype(np.float32) * 4
    labels = rng.integers(0, 11, size=(3, 5)).astype(np.int32)
    labels[0, 3:] = IGNORE_INDEX
    labels[2, :4] = IGNORE_INDEX
    loss = float(masked_cross_entropy(Tensor(logits), Tensor(labels)).asnumpy())
    assert abs(loss - numpy_reference(logits, labels)) < 1e-5


def test_masked_positions_do_not_count() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(1, 4, 7)).astype(np.float32)
    labels = np.array([[1, 2, IGNORE_INDEX, IGNORE_INDEX]], dtype=np.int32)
    changed = logits.copy()
    changed[0, 2:] += 100 * rng.normal(size=(2, 7)).astype(np.float32)
    first = masked_cross_entropy(Tensor(logits), Tensor(labels)).asnumpy()
    second = masked_cross_entropy(Tensor(changed), Tensor(labels)).asnumpy()
    assert abs(first - second) < 1e-6
    assert abs(first - numpy_reference(logits[:, :2], labels[:, :2])) < 1e-5


def test_all_masked_is_zero() -> None:
    labels = np.full((2, 3), IGNORE_INDEX, dtype=np.int32)
    assert float(masked_cross_entropy(Tensor(np.zeros((2, 3, 5), np.float32)), Tensor(labels)).asnumpy()) == 0.0
