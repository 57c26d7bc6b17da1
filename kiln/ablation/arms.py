"""One arm's training stream: a stage's documents, evaluation matches removed, in a seeded order, encoded with
the shared tokenizer up to the token budget."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from common.errors import KilnError
from common.files import atomic_write_json, file_sha256
from common.hashing import unit_interval
from kiln.ablation.documents import Split, document_index, read_texts
from kiln.ablation.results import ARM_FILE
from kiln.ablation.streams import SharedTokenizer, write_split

TRAIN_SPLIT = "train"
BYTES_PER_TOKEN_BOUND = 6  # a byte-level BPE token stands for at most a few UTF-8 bytes of prose


@dataclass(frozen=True)
class ArmSource:
    """Where an arm's documents come from: a finished stage (the mix's training split for ``full``)."""

    name: str
    stage_dir: Path
    split: Split


@dataclass(frozen=True)
class Arm:
    """A built arm, as arm.json records it."""

    name: str
    stage: str
    documents: int
    tokens: int
    text_bytes: int
    source_documents: int
    removed_as_evaluation: int
    tokenizer_sha256: str
    budget: int


def copies_in_order(doc_ids: np.ndarray, repeats: np.ndarray, seed: int) -> np.ndarray:
    """Every copy of every document (a document the mix repeats k times appears k times) as doc ids, in a
    seeded order that depends on the ids only."""
    copies = np.repeat(doc_ids, repeats)
    number = np.arange(copies.size) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    keys = np.empty(copies.size, np.float64)
    for k in np.unique(number):
        at = number == k
        keys[at] = unit_interval(copies[at], seed + int(k))
    return copies[np.argsort(keys, kind="stable")]


def load_arm(folder: Path, tokenizer_sha256: str, budget: int) -> Arm | None:
    """The arm built in ``folder`` with this tokenizer and budget, or None (not built, or built otherwise)."""
    path = folder / ARM_FILE
    if not path.is_file():
        return None
    arm = Arm(**json.loads(path.read_text()))
    return arm if (arm.tokenizer_sha256, arm.budget) == (tokenizer_sha256, budget) else None


def build_arm(source: ArmSource, shared: SharedTokenizer, excluded: np.ndarray, budget: int, seq_len: int,
              seed: int, folder: Path) -> Arm:
    """Write ``folder``/train.bin with at least ``budget`` + 1 tokens of the source's documents (whole documents,
    in seeded order, none of ``excluded``) and arm.json."""
    tokenizer_sha = file_sha256(shared.path)
    if (built := load_arm(folder, tokenizer_sha, budget)) is not None:
        return built
    index = document_index(source.stage_dir, source.split)
    usable = ~np.isin(index.doc_ids, excluded) & (index.sizes > 0)
    order = copies_in_order(index.doc_ids[usable], index.repeats[usable], seed)
    size_of = dict(zip(index.doc_ids.tolist(), index.sizes.tolist(), strict=True))
    needed = budget + 1
    parts, lengths, total, taken, text_bytes = [], [], 0, 0, 0
    while total < needed and taken < order.size:
        sizes = np.fromiter((size_of[i] for i in order[taken:].tolist()), np.int64, count=order.size - taken)
        count = int(np.searchsorted(np.cumsum(sizes), (needed - total) * BYTES_PER_TOKEN_BOUND)) + 1
        chunk = order[taken:taken + count]
        texts = read_texts(source.stage_dir, chunk, source.split)
        tokens, sizes_in_tokens = shared.encode([texts[int(i)] for i in chunk])
        enough = int(np.searchsorted(np.cumsum(sizes_in_tokens), needed - total)) + 1
        enough = min(enough, chunk.size)
        parts.append(tokens[:int(sizes_in_tokens[:enough].sum())])
        lengths.append(sizes_in_tokens[:enough])
        text_bytes += int(sum(size_of[int(i)] for i in chunk[:enough]))
        total += int(sizes_in_tokens[:enough].sum())
        taken += enough if enough < chunk.size else chunk.size
        if enough < chunk.size:
            break
    if total < needed:
        raise KilnError(
            f"arm {source.name}: {source.stage_dir.name}'s output holds {total:,} tokens in {taken:,} documents once "
            f"the evaluation documents are removed, fewer than ablation.tokens_per_run + 1 = {needed:,}: lower "
            "ablation.tokens_per_run, or give the pipeline more input")
    write_split(folder, TRAIN_SPLIT, np.concatenate(parts), np.concatenate(lengths), shared, seq_len)
    arm = Arm(name=source.name, stage=source.stage_dir.name, documents=taken, tokens=total, text_bytes=text_bytes,
              source_documents=int(index.doc_ids.size), removed_as_evaluation=int(np.isin(index.doc_ids, excluded).sum()),
              tokenizer_sha256=tokenizer_sha, budget=budget)
    atomic_write_json(folder / ARM_FILE, asdict(arm))
    return arm
