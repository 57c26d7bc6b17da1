"""The category classifier's labels per input shard: computed by one Ray task per shard in mix's global
step, before the plan counts categories, and read back by the map units row for row.

Each shard gets ``_work/labels/<index>.npz`` with its rows' categories (the classifier's label where an
``unknown`` document's probability reaches the threshold) and the probabilities (NaN where nothing was
predicted). A file is written atomically, so a resumed run reuses the finished ones.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from common.files import atomic_write_bytes
from common.shards import ShardInfo, iter_batches
from stages.mix.classifier import MODEL_NAME, categorize, load_report
from stages.mix.config import CategoryClassifierConfig

LABEL_DIR = "labels"


def labels_path(work: Path, index: int) -> Path:
    """Where the labels of input shard ``index`` live."""
    return work / LABEL_DIR / f"{index:05d}.npz"


def label_task(input_dir: str, info: dict, work: str, cfg: CategoryClassifierConfig, index: int) -> None:
    """Label the ``unknown`` documents of input shard ``index`` (unless a previous run did)."""
    path = labels_path(Path(work), index)
    if path.exists():
        return
    categories: list[str] = []
    scores: list[np.ndarray] = [np.zeros(0, np.float32)]
    threshold = load_report(Path(work)).threshold
    for batch in iter_batches(Path(input_dir), ShardInfo(**info)):
        labelled, probabilities = categorize(Path(work) / MODEL_NAME, batch.column("text").to_pylist(),
                                             batch.column("category").to_pylist(), cfg, threshold)
        categories += labelled
        scores.append(probabilities)
    buffer = io.BytesIO()
    np.savez(buffer, category=np.array(categories, dtype=str), category_score=np.concatenate(scores))
    atomic_write_bytes(path, buffer.getvalue())


def labelled_batches(input_dir: Path, info: ShardInfo, work: Path, index: int
                     ) -> Iterator[tuple[pa.RecordBatch, list[str], np.ndarray]]:
    """The shard's record batches, each with its rows' categories and classifier probabilities."""
    with np.load(labels_path(work, index)) as data:
        categories, scores = data["category"].tolist(), data["category_score"]
    offset = 0
    for batch in iter_batches(input_dir, info):
        end = offset + batch.num_rows
        yield batch, categories[offset:end], scores[offset:end]
        offset = end
