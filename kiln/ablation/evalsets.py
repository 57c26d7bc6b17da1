"""The evaluation sets of an ablation, and the matcher that keeps them and their near-duplicates out of training.

Two sets of text, both removed from every arm before any arm is built:

- ``heldout``: documents the pipeline keeps (a seeded sample of the dedup stage's output, outside the mix's
  validation split), or the documents of a user's file;
- ``validation``: the mix's own validation split.

A training document is removed when it is one of them (same ``doc_id``) or has the same normalized text; when it
copies one, found as `make data`'s decontamination finds an evaluation item (stages/dedup/decontaminate.py: shared
13-token windows after normalization), here when it holds at least half of a held-out document's windows, since
whole documents share a sentence or two with many others (on the demo corpus, 200 held-out documents share two
windows with 44 % of the rest, and half of their windows with one); when it is a near-duplicate of one by the
dedup stage's MinHash settings (a shared LSH band, then an estimated Jaccard similarity at or above
``dedup.threshold``), which finds copies edited too densely to keep whole windows; in its raw or its cleaned
form; and when it copies a question of the multiple-choice files the arms are scored on, by the same
decontamination, so that arms built from stages before dedup are decontaminated too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.errors import KilnError
from common.eval_sets import EvalItem, read_eval_sets
from common.hashing import unit_interval
from kiln.ablation.documents import document_index, iter_documents, read_texts
from stages.dedup.config import DecontaminateConfig, DedupConfig
from stages.dedup.decontaminate import ContaminationIndex
from stages.dedup.lsh import band_keys
from stages.dedup.minhash import EMPTY, estimate_jaccard_rows, exact_keys, shingle_hashes, signatures

HELDOUT, VALIDATION = "heldout", "validation"
COPIED_WINDOW_SHARE = 0.5  # of an evaluation document's n-gram windows, held by a document that copies it


@dataclass(frozen=True)
class EvalSet:
    """One evaluation set: its name, where it came from, its documents, and their ids in this run (if any)."""

    name: str
    origin: str
    texts: list[str]
    doc_ids: np.ndarray


def pipeline_heldout(dedup_dir: Path, not_ids: np.ndarray, count: int, seed: int) -> EvalSet:
    """``count`` documents of the dedup stage's output with the lowest seeded hash, none of ``not_ids``."""
    index = document_index(dedup_dir)
    candidates = index.doc_ids[~np.isin(index.doc_ids, not_ids) & (index.sizes > 0)]
    if candidates.size == 0:
        raise KilnError(f"{dedup_dir}: no document left to hold out: the pipeline kept nothing outside the mix's "
                        "validation split")
    chosen = np.sort(candidates[np.argsort(unit_interval(candidates, seed), kind="stable")[:count]])
    texts = read_texts(dedup_dir, chosen)
    return EvalSet(HELDOUT, f"{chosen.size} documents of {dedup_dir.name}'s output (seeded sample)",
                   [texts[int(i)] for i in chosen], chosen)


def user_heldout(path: Path) -> EvalSet:
    """The documents of a user's file: JSONL with a ``text`` field, or plain text with blank-line-separated
    documents."""
    try:
        raw = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise KilnError(f"ablation.heldout_path: cannot read {path}: {err}") from None
    texts: list[str] = []
    if Path(path).suffix in (".jsonl", ".json"):
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                text = json.loads(line)["text"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise KilnError(f"{path}:{number}: a held-out document needs a JSON object with a text field") from None
            if not isinstance(text, str):
                raise KilnError(f"{path}:{number}: text is {type(text).__name__}, not a string")
            texts.append(text)
    else:
        texts = [block.strip() for block in raw.split("\n\n")]
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise KilnError(f"ablation.heldout_path: {path} holds no document")
    return EvalSet(HELDOUT, f"{len(texts)} documents of {path}", texts, np.zeros(0, np.int64))


def validation_split(mix_dir: Path) -> EvalSet:
    """The mix's validation split (empty when mix.validation_fraction is 0)."""
    index = document_index(mix_dir, "validation")
    texts = read_texts(mix_dir, index.doc_ids, "validation")
    ids = np.array(sorted(texts), dtype=np.int64)
    return EvalSet(VALIDATION, f"the mix's validation split, {ids.size} documents", [texts[int(i)] for i in ids], ids)


def benchmark_questions(files: tuple[Path, ...], cfg: DecontaminateConfig) -> ContaminationIndex | None:
    """The decontamination index of the multiple-choice files the arms are scored on (None without any)."""
    return ContaminationIndex.build(*read_eval_sets(list(files)), cfg) if files else None


class EvalMatcher:
    """Tells which documents are an evaluation document, a copy or a near-duplicate of one, or copy a benchmark
    question.

    ``texts`` are the evaluation documents as the sets hold them, plus any other form of them (their raw text
    before cleaning), so that a copy of either form is found; ``questions``, the benchmark files' index;
    ``decontaminate``, how both are matched."""

    def __init__(self, texts: list[str], ids: np.ndarray, cfg: DedupConfig, decontaminate: DecontaminateConfig,
                 questions: ContaminationIndex | None = None):
        self.cfg = cfg
        self.questions = questions
        self.copies = ContaminationIndex.build([EvalItem(HELDOUT, "", row, text) for row, text in enumerate(texts)],
                                               [], decontaminate, min_window_share=COPIED_WINDOW_SHARE)
        self.ids = np.unique(ids)
        self.exact = set(exact_keys(texts))
        self.sigs = self._signatures(texts)
        keys = band_keys(self.sigs, cfg.bands, cfg.rows)
        has_shingles = (self.sigs != EMPTY).any(axis=1)
        self.docs_by_key: dict[int, list[int]] = {}
        for row in np.nonzero(has_shingles)[0]:
            for key in keys[row].tolist():
                self.docs_by_key.setdefault(key, []).append(int(row))

    def _signatures(self, texts: list[str]) -> np.ndarray:
        hashes, offsets = shingle_hashes(texts, self.cfg.shingle_size)
        return signatures(hashes, offsets, self.cfg.num_perm, self.cfg.seed)

    def matches(self, doc_ids: np.ndarray | None, texts: list[str]) -> np.ndarray:
        """A boolean per document: it must not be trained on. ``doc_ids`` None matches by text only (documents of
        another pipeline run, whose ids mean other documents)."""
        hit = np.zeros(len(texts), bool) if doc_ids is None else np.isin(doc_ids, self.ids)
        hit |= np.fromiter((key in self.exact for key in exact_keys(texts)), dtype=bool, count=len(texts))
        for index in (self.copies, self.questions):
            if index is not None:
                hit |= np.array([bool(found) for found in index.scan(texts)], dtype=bool)
        sigs = self._signatures(texts)
        pairs = [(len(self.sigs) + row, other)
                 for row, keys in enumerate(band_keys(sigs, self.cfg.bands, self.cfg.rows).tolist())
                 if not hit[row] and (sigs[row] != EMPTY).any()
                 for other in {d for key in keys for d in self.docs_by_key.get(key, ())}]
        if pairs:
            pairs_array = np.array(pairs, dtype=np.int64)
            similar = estimate_jaccard_rows(np.vstack([self.sigs, sigs]), pairs_array) >= self.cfg.threshold
            hit[pairs_array[similar, 0] - len(self.sigs)] = True
        return hit

    def matching_ids(self, stage_dir: Path, by_id: bool = True) -> np.ndarray:
        """The ids of every document of a finished stage that must not be trained on."""
        found = [np.zeros(0, np.int64)]
        for batch in iter_documents(stage_dir):
            ids = batch.column("doc_id").to_numpy(zero_copy_only=False).astype(np.int64)
            found.append(ids[self.matches(ids if by_id else None, batch.column("text").to_pylist())])
        return np.unique(np.concatenate(found))
