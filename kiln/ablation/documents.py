"""A finished stage's documents as the ablation reads them: ids, sizes and repeats first, texts on demand."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from common.manifest import require_manifest
from common.shards import ShardInfo, iter_batches

Split = Literal["all", "train", "validation"]


@dataclass(frozen=True)
class DocumentIndex:
    """One row per document of a stage's output: id, UTF-8 size and how often the mix repeats it."""

    doc_ids: np.ndarray
    sizes: np.ndarray
    repeats: np.ndarray


def stage_files(stage_dir: Path, split: Split = "all") -> list[ShardInfo]:
    """The document files of a finished stage: mix's training shards, its validation split, or all of them."""
    manifest = require_manifest(stage_dir)
    if split == "train":
        return list(manifest.shards)
    if split == "validation":
        return list(manifest.outputs.get("validation", []))
    return manifest.document_files()


def iter_documents(stage_dir: Path, split: Split = "all",
                   columns: tuple[str, ...] = ("doc_id", "text")) -> Iterator[pa.RecordBatch]:
    """Record batches of a finished stage's documents (checksums verified), with only ``columns``."""
    for info in stage_files(stage_dir, split):
        for batch in iter_batches(stage_dir, info):
            yield pa.RecordBatch.from_arrays([_column(batch, name) for name in columns], names=list(columns))


def _column(batch: pa.RecordBatch, name: str) -> pa.Array:
    if name == "repeat" and "repeat" not in batch.schema.names:  # only the mix writes repeats
        return pa.array(np.ones(batch.num_rows, np.int64))
    return batch.column(name)


def document_index(stage_dir: Path, split: Split = "all") -> DocumentIndex:
    """Ids, sizes and repeats of every document of the stage, without holding their texts."""
    ids, sizes, repeats = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for batch in iter_documents(stage_dir, split, ("doc_id", "text", "repeat")):
        ids.append(batch.column("doc_id").to_numpy(zero_copy_only=False).astype(np.int64))
        sizes.append(pc.binary_length(batch.column("text")).to_numpy(zero_copy_only=False).astype(np.int64))
        repeats.append(batch.column("repeat").to_numpy(zero_copy_only=False).astype(np.int64))
    return DocumentIndex(np.concatenate(ids), np.concatenate(sizes), np.concatenate(repeats))


def read_texts(stage_dir: Path, wanted: np.ndarray, split: Split = "all") -> dict[int, str]:
    """doc_id -> text of the documents of ``wanted`` (ids) in the stage's output."""
    wanted_ids = pa.array(np.unique(np.asarray(wanted, np.int64)))
    texts: dict[int, str] = {}
    for batch in iter_documents(stage_dir, split):
        chosen = batch.filter(pc.is_in(batch.column("doc_id").cast(pa.int64()), value_set=wanted_ids))
        texts.update(zip(chosen.column("doc_id").to_pylist(), chosen.column("text").to_pylist(), strict=True))
    return texts
