"""One arm's training stream: a stage's documents, evaluation matches removed, in a seeded order, encoded with
the shared tokenizer up to the token budget."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from common.errors import KilnError
from common.files import atomic_write_json, file_sha256
from common.manifest import manifest_sha256
from kiln.ablation.documents import Split, document_index, read_texts
from kiln.ablation.layout import ARM_FILE
from kiln.ablation.streams import SharedTokenizer, write_split
from stages.tokenize.pack import shuffled_order

TRAIN_SPLIT = "train"
# Text is read in chunks of this many bytes per token still missing: enough for prose in every script the
# demo holds; a chunk that falls short is followed by another.
BYTES_PER_TOKEN_READ = 6


@dataclass(frozen=True)
class ArmSource:
    """Where an arm's documents come from: a finished stage (the mix's training split for ``full``)."""

    name: str
    stage_dir: Path
    split: Split


@dataclass(frozen=True)
class Arm:
    """A built arm, as arm.json records it. ``documents`` counts the documents of its stream (a document the mix
    repeats counts once per copy); ``removed_as_evaluation`` the source's documents that matched an evaluation
    document."""

    name: str
    stage: str
    documents: int
    tokens: int
    text_bytes: int
    source_documents: int
    removed_as_evaluation: int
    tokenizer_sha256: str
    source_sha256: str
    budget: int


def load_arm(folder: Path, tokenizer_sha256: str, source_sha256: str, budget: int) -> Arm | None:
    """The arm built in ``folder`` from this source, tokenizer and budget, or None (not built, or otherwise)."""
    path = folder / ARM_FILE
    if not path.is_file():
        return None
    arm = Arm(**json.loads(path.read_text()))
    return arm if (arm.tokenizer_sha256, arm.source_sha256, arm.budget) == (tokenizer_sha256, source_sha256,
                                                                             budget) else None


def build_arm(source: ArmSource, shared: SharedTokenizer, excluded: np.ndarray, budget: int, seq_len: int,
              seed: int, folder: Path) -> Arm:
    """Write ``folder``/train.bin with at least ``budget`` + 1 tokens of the source's documents (whole documents,
    every copy the mix asks for, in seeded order, none of ``excluded``) and arm.json."""
    tokenizer_sha, source_sha = file_sha256(shared.path), manifest_sha256(source.stage_dir)
    if (built := load_arm(folder, tokenizer_sha, source_sha, budget)) is not None:
        return built
    index = document_index(source.stage_dir, source.split)
    removed = np.isin(index.doc_ids, excluded)
    usable = ~removed & (index.sizes > 0)
    ids, repeats = index.doc_ids[usable], index.repeats[usable]
    order = ids[shuffled_order(ids, repeats, seed)]
    sizes = dict(zip(index.doc_ids.tolist(), index.sizes.tolist(), strict=True))
    order_sizes = np.fromiter((sizes[i] for i in order.tolist()), np.int64, count=order.size)
    needed = budget + 1
    parts, lengths, total, taken = [], [], 0, 0
    while total < needed and taken < order.size:
        reach = np.cumsum(order_sizes[taken:])
        count = int(np.searchsorted(reach, (needed - total) * BYTES_PER_TOKEN_READ)) + 1
        chunk = order[taken:taken + count]
        texts = read_texts(source.stage_dir, chunk, source.split)
        tokens, doc_tokens = shared.encode([texts[int(i)] for i in chunk])
        enough = min(int(np.searchsorted(np.cumsum(doc_tokens), needed - total)) + 1, chunk.size)
        parts.append(tokens[:int(doc_tokens[:enough].sum())])
        lengths.append(doc_tokens[:enough])
        total += int(doc_tokens[:enough].sum())
        taken += enough
    if total < needed:
        raise KilnError(
            f"arm {source.name}: {source.stage_dir.name}'s output holds {total:,} tokens in {taken:,} documents once "
            f"the evaluation documents are removed, fewer than ablation.tokens_per_run + 1 = {needed:,}: lower "
            "ablation.tokens_per_run, or give the pipeline more input")
    write_split(folder, TRAIN_SPLIT, np.concatenate(parts), np.concatenate(lengths), shared, seq_len)
    arm = Arm(name=source.name, stage=source.stage_dir.name, documents=taken, tokens=total,
              text_bytes=int(order_sizes[:taken].sum()), source_documents=int(index.doc_ids.size),
              removed_as_evaluation=int(removed.sum()), tokenizer_sha256=tokenizer_sha, source_sha256=source_sha,
              budget=budget)
    atomic_write_json(folder / ARM_FILE, asdict(arm))
    return arm
