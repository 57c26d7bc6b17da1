"""Trainer data order: a pure function of (seed, step), split across data-parallel ranks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stages.train.data import DataOrder, open_tokens
from tests.token_files import write_token_folder


def write_tokens(folder: Path, stream: np.ndarray, vocab_size: int, seq_len: int, docs: int = 1) -> Path:
    """A packed train split of ``stream`` cut into ``docs`` equal documents."""
    cuts = np.linspace(0, stream.size, docs + 1).astype(np.int64)
    return write_token_folder(folder, {"train": np.split(stream, cuts[1:-1])}, vocab_size, seq_len, pad_id=None)


def test_order_is_a_pure_function_of_seed_and_step() -> None:
    first = DataOrder(50, 8, seed=3)
    again = DataOrder(50, 8, seed=3)
    assert [again.indices(s).tolist() for s in (9, 2, 0)] == [first.indices(s).tolist() for s in (9, 2, 0)]
    assert DataOrder(50, 8, seed=4).indices(0).tolist() != first.indices(0).tolist()


def test_each_epoch_visits_every_window_once() -> None:
    order = DataOrder(40, 8, seed=1)
    epoch0 = np.concatenate([order.indices(s) for s in range(5)])
    epoch1 = np.concatenate([order.indices(s) for s in range(5, 10)])
    assert sorted(epoch0.tolist()) == list(range(40)) == sorted(epoch1.tolist())
    assert epoch0.tolist() != epoch1.tolist()


def test_batch_crossing_an_epoch_boundary() -> None:
    order = DataOrder(10, 4, seed=0)
    samples = np.concatenate([order.indices(s) for s in range(5)])
    assert sorted(samples[:10].tolist()) == list(range(10)) == sorted(samples[10:20].tolist())


def test_ranks_read_disjoint_slices_of_the_global_batch() -> None:
    whole = DataOrder(100, 8, seed=5).indices(7)
    parts = [DataOrder(100, 8, seed=5, rank=r, world_size=2).indices(7) for r in range(2)]
    assert np.concatenate(parts).tolist() == whole.tolist()
    with pytest.raises(ValueError, match="not divisible"):
        DataOrder(100, 6, seed=5, world_size=4)


def test_batches_come_from_the_token_file(tmp_path: Path) -> None:
    bin_path = write_tokens(tmp_path, np.arange(41) % 7, vocab_size=7, seq_len=4)
    tokens = open_tokens(bin_path)
    order = DataOrder(len(tokens), 2, seed=0)
    inputs, labels = order.batch(tokens, 3)
    assert inputs.shape == labels.shape == (2, 4) and inputs.dtype == np.int32
    for row, window in enumerate(order.indices(3)):
        expected = (np.arange(window * 4, window * 4 + 5) % 7)
        assert inputs[row].tolist() == expected[:-1].tolist() and labels[row].tolist() == expected[1:].tolist()
