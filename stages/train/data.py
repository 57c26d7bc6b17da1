"""Training batches whose order is a pure function of (seed, step): resuming needs only the step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from common.tokens import TokenDataset
from stages.train.config import ParallelConfig
from stages.train.layout import data_parallel_rank


def open_tokens(bin_path: str | Path, seq_len: int | None = None) -> TokenDataset:
    """The packed split at ``bin_path`` (with its ``.idx`` and ``meta.json`` beside it)."""
    return TokenDataset(bin_path, seq_len=seq_len)


class DataOrder:
    """Sample ``s`` of the run (s = step · global_batch + j) is window ``perm_e[s mod n]`` with
    e = s div n and ``perm_e`` a permutation seeded by (seed, e); each data-parallel group reads
    its contiguous slice of the global batch.

    ``rank`` and ``world_size`` are the data-parallel index and the number of data-parallel groups.
    Under model or pipeline parallelism build it with :meth:`for_rank`, which maps a global rank to
    its group: ranks that differ only in their model-parallel or pipeline position read the same
    samples, and the groups' slices together are the single-process global batch.
    """

    def __init__(self, n_windows: int, global_batch: int, seed: int, rank: int = 0, world_size: int = 1):
        if n_windows < 1:
            raise ValueError("the token stream holds no complete window")
        if global_batch % world_size:
            raise ValueError(f"global batch {global_batch} is not divisible by the world size {world_size}")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside the world of {world_size}")
        self.n_windows = n_windows
        self.global_batch = global_batch
        self.seed = seed
        self.local_batch = global_batch // world_size
        self.offset = rank * self.local_batch
        self._epoch = -1
        self._perm = np.zeros(0, dtype=np.int64)

    @classmethod
    def for_rank(cls, n_windows: int, global_batch: int, seed: int, rank: int, parallel: ParallelConfig) -> DataOrder:
        """The order global ``rank`` reads under ``parallel``: its data-parallel group's slice."""
        if global_batch % parallel.data_parallel:
            raise ValueError(f"global batch {global_batch} is not divisible by parallel.data_parallel "
                             f"{parallel.data_parallel}")
        return cls(n_windows, global_batch, seed, data_parallel_rank(rank, parallel), parallel.data_parallel)

    def _permutation(self, epoch: int) -> np.ndarray:
        if epoch != self._epoch:
            self._perm = np.random.default_rng((self.seed, epoch)).permutation(self.n_windows)
            self._epoch = epoch
        return self._perm

    def indices(self, step: int) -> np.ndarray:
        """Window indices this rank reads at ``step``."""
        samples = step * self.global_batch + self.offset + np.arange(self.local_batch, dtype=np.int64)
        epochs, positions = np.divmod(samples, self.n_windows)
        out = np.empty(self.local_batch, dtype=np.int64)
        for epoch in np.unique(epochs):
            chosen = epochs == epoch
            out[chosen] = self._permutation(int(epoch))[positions[chosen]]
        return out

    def batch(self, tokens: TokenDataset, step: int) -> tuple[np.ndarray, np.ndarray]:
        """(inputs, labels) of this rank at ``step``, int32 (local_batch, seq_len)."""
        return tokens.batch(self.indices(step))

    def state_dict(self) -> dict[str, int]:
        """The seed: with the step (the trainer's progress), all a resumed run needs to read the same batches."""
        return {"data_seed": self.seed}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take the seed back from :meth:`state_dict`."""
        self.seed = int(state["data_seed"])
        self._epoch = -1
