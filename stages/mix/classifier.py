"""A fastText category classifier for corpora whose documents are not all categorized.

Trained once per run, in mix's global step, on the training-split documents whose category is
known (from source mappings, a category field or URL rules) and on an optional labelled sample;
a seeded share of them is held out to measure its accuracy. Documents of category ``unknown``
then get the predicted category when its probability reaches the threshold.
"""

from __future__ import annotations

import functools
import heapq
import json
import random
import re
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from common.categories import CATEGORIES, UNKNOWN_CATEGORY
from common.errors import KilnError
from common.files import atomic_write_bytes, atomic_write_json
from common.hashing import unit_interval
from common.text import SPEAKER_LABEL
from stages.mix.config import CategoryClassifierConfig
from stages.mix.fasttext_train import train_supervised

if TYPE_CHECKING:
    import fasttext  # imported where a model is trained or loaded: the module itself does not need it

MODEL_NAME = "category_classifier.bin"
REPORT_NAME = "category_classifier.json"
DEFAULT_MODEL_REPORT = "category_model.json"  # beside the default model: its seed set, threshold and held-out figures
LABEL = "__label__"
BUCKETS = 200_000
_HAN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
_SPEAKER = re.compile(rf"^{SPEAKER_LABEL}(?=\S)", re.M)
SPEAKER_TOKEN = "__speaker__"
"""Stands for a line's ``Name:`` prefix: a turn of dialogue is a turn whoever speaks, and joining lines into one
would otherwise leave no trace of them."""


def fasttext_text(text: str, max_chars: int) -> str:
    """What the classifier reads: the first ``max_chars`` characters, lowercased, on one line, each Han
    character a word of its own, each line's speaker label (``Name:``, up to three words) read as SPEAKER_TOKEN."""
    text = _SPEAKER.sub(f" {SPEAKER_TOKEN} ", text[:max_chars])
    return " ".join(_HAN.sub(r" \1 ", text.lower()).split())


@dataclass(frozen=True)
class ClassifierReport:
    """What the classifier was trained on and how well it labels documents it did not see."""

    trained_on: dict[str, int]
    held_out: int
    held_out_accuracy: float
    accuracy_by_category: dict[str, float]
    threshold: float
    origin: str = "corpus"  # "corpus": trained on this run's labelled documents; "default": Kiln's default model

    def to_dict(self) -> dict:
        """Plain values for mix_summary.json."""
        return asdict(self)


class ExampleSampler:
    """Keeps, per category, the ``limit`` examples with the lowest seeded hash of their id: a uniform,
    deterministic sample of bounded memory, whatever the order documents arrive in."""

    def __init__(self, limit: int, max_chars: int, seed: int):
        self.limit, self.max_chars, self.seed = limit, max_chars, seed
        self.heaps: dict[str, list[tuple[float, int, str]]] = {}
        self.seen: Counter[str] = Counter()

    def add(self, doc_ids: np.ndarray, texts: list[str], categories: list[str]) -> None:
        """Offer a batch of labelled documents (``unknown`` ones are ignored)."""
        keys = unit_interval(doc_ids, self.seed)
        for key, doc_id, text, category in zip(keys.tolist(), doc_ids.tolist(), texts, categories, strict=True):
            if category == UNKNOWN_CATEGORY:
                continue
            self.seen[category] += 1
            heap = self.heaps.setdefault(category, [])
            item = (-key, doc_id, fasttext_text(text, self.max_chars))
            if len(heap) < self.limit:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)

    def examples(self) -> list[tuple[int, str, str]]:
        """(doc_id, category, text) of every kept example, in id order."""
        return sorted((doc_id, category, text) for category, heap in self.heaps.items() for _, doc_id, text in heap)


def read_labelled_sample(path: Path, max_chars: int) -> list[tuple[str, str]]:
    """(category, classifier text) of each line of a JSONL file with ``text`` and ``category`` fields."""
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise KilnError(f"mix.classifier.labelled_sample: cannot read {path}: {err}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text, category = record["text"], record["category"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise KilnError(f"{path}:{number}: a labelled example needs a JSON object with text and category") from None
        if category not in CATEGORIES:
            raise KilnError(f"{path}:{number}: category {category!r} is not one of {list(CATEGORIES)}")
        if isinstance(text, str) and text.strip():
            rows.append((category, fasttext_text(text, max_chars)))
    return rows


def train_classifier(sampler: ExampleSampler, labelled: list[tuple[str, str]], cfg: CategoryClassifierConfig,
                     out_dir: Path) -> ClassifierReport:
    """Train on the sampled and labelled examples (a seeded share held out), save the model and its report."""
    examples = sampler.examples()
    held_out = unit_interval(np.array([doc_id for doc_id, _, _ in examples], dtype=np.int64), cfg.seed + 1)
    held, train = [], list(labelled)
    for (_, category, text), key in zip(examples, held_out.tolist(), strict=True):
        (held if key < cfg.held_out_fraction else train).append((category, text))
    counts = Counter(category for category, _ in train)
    short = {c: n for c, n in counts.items() if n < cfg.min_labelled_per_category}
    if short or len(counts) < 2:
        raise KilnError(
            f"mix.classifier: too few labelled documents to learn categories from (training examples by category: "
            f"{dict(sorted(counts.items())) or 'none'}; each needs mix.classifier.min_labelled_per_category = "
            f"{cfg.min_labelled_per_category}, and at least two categories are needed): map more sources "
            "(ingest.source_categories, ingest.url_categories) or give mix.classifier.labelled_sample")
    model = fit_model(train, cfg, out_dir / MODEL_NAME)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for (category, _), predicted in zip(held, predict(model, [t for _, t in held])[0], strict=True):
        total[category] += 1
        right[category] += predicted == category
    report = ClassifierReport(
        trained_on=dict(sorted(counts.items())), held_out=sum(total.values()),
        held_out_accuracy=sum(right.values()) / max(sum(total.values()), 1),
        accuracy_by_category={c: right[c] / total[c] for c in sorted(total)}, threshold=cfg.threshold)
    atomic_write_json(out_dir / REPORT_NAME, report.to_dict(), indent=1, sort_keys=True)
    return report


def fit_model(examples: list[tuple[str, str]], cfg: CategoryClassifierConfig, model_path: Path
              ) -> fasttext.FastText._FastText:
    """Train fastText on (category, classifier text) examples in a seeded order with ``cfg``'s hyper-parameters,
    save the model to ``model_path`` and return it loaded."""
    import fasttext

    examples = list(examples)
    random.Random(cfg.seed).shuffle(examples)
    with tempfile.TemporaryDirectory() as tmp:
        train_file = Path(tmp) / "train.txt"
        train_file.write_text("".join(f"{LABEL}{category} {text}\n" for category, text in examples), encoding="utf-8")
        model_file = Path(tmp) / MODEL_NAME
        train_supervised(train_file, model_file, epoch=cfg.epochs, lr=cfg.learning_rate, wordNgrams=cfg.word_ngrams,
                         dim=cfg.dim, bucket=BUCKETS, minCount=1, thread=1, seed=cfg.seed, verbose=0)
        atomic_write_bytes(model_path, model_file.read_bytes())
        return fasttext.load_model(str(model_file))


def predict(model: fasttext.FastText._FastText, texts: list[str]) -> tuple[list[str], list[float]]:
    """The top category and its probability for each classifier text."""
    if not texts:
        return [], []
    labels, probs = model.predict(texts, k=1)
    return [names[0].removeprefix(LABEL) for names in labels], [float(p[0]) for p in probs]


@functools.lru_cache(maxsize=2)
def _load(path: str, mtime_ns: int):
    """The model at ``path``, loaded once per process and file version."""
    import fasttext

    return fasttext.load_model(path)


def use_default_model(model_dir: Path, out_dir: Path) -> ClassifierReport:
    """Copy Kiln's default category model (built by `kiln category-model` into ``model_dir``) into ``out_dir``,
    with a report of its seed set, its threshold and its figures on held-out text."""
    model, built_report = model_dir / MODEL_NAME, model_dir / DEFAULT_MODEL_REPORT
    if not (model.is_file() and built_report.is_file()):
        raise KilnError(
            f"mix.classifier: the training split has no categorized document and no mix.classifier.labelled_sample "
            f"is given, and Kiln's default category model is not in {model_dir} (no {MODEL_NAME} and "
            f"{DEFAULT_MODEL_REPORT}): build it with `make category-model` (it stops when no threshold reaches "
            "--min-accuracy on held-out text; `make category-model ARGS=\"--min-accuracy 0.6\"` accepts less), or "
            "set mix.classifier.default_model to the folder it was built in")
    try:
        built = json.loads(built_report.read_text())
        test = built["test"]
        report = ClassifierReport(
            trained_on=built["seed"]["by_category"], held_out=test["documents"],
            held_out_accuracy=test["top1_accuracy"],
            accuracy_by_category={c: row["top1_accuracy"] for c, row in test["by_category"].items()},
            threshold=built["threshold"], origin="default")
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
        raise KilnError(f"{built_report}: not a report of `kiln category-model` ({err!r}): rebuild it with "
                        "`make category-model`") from None
    atomic_write_bytes(out_dir / MODEL_NAME, model.read_bytes())
    atomic_write_json(out_dir / REPORT_NAME, report.to_dict(), indent=1, sort_keys=True)
    return report


def load_report(folder: Path) -> ClassifierReport:
    """The report of the classifier trained for this run (in ``folder``)."""
    return ClassifierReport(**json.loads((folder / REPORT_NAME).read_text()))


def categorize(model_path: Path, texts: list[str], categories: list[str], cfg: CategoryClassifierConfig,
               threshold: float) -> tuple[list[str], np.ndarray]:
    """``categories`` with each ``unknown`` one replaced by the classifier's label where its probability
    reaches ``threshold``, and the probabilities (NaN where no prediction was made)."""
    scores = np.full(len(categories), np.nan, dtype=np.float32)
    rows = [i for i, category in enumerate(categories) if category == UNKNOWN_CATEGORY]
    if not rows:
        return categories, scores
    model = _load(str(model_path), model_path.stat().st_mtime_ns)
    labels, probs = predict(model, [fasttext_text(texts[i], cfg.max_chars) for i in rows])
    out = list(categories)
    for i, label, prob in zip(rows, labels, probs, strict=True):
        scores[i] = prob
        if prob >= threshold:
            out[i] = label
    return out, scores
