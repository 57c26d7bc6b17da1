"""Deterministic demo corpus: Chinese and English documents in six formats, planted defects and their truth."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import shutil
from collections import Counter
from collections.abc import Collection
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from common.files import atomic_write_json, disk_full_error, is_disk_full
from demo import content_defects
from demo.content_contamination import contaminated_document, hard_negative
from demo.content_docs import LANGUAGES, clean_document, tech_document
from demo.content_foreign import FOREIGN_LANGS, foreign_document
from demo.content_junk import short_text, spam_document
from demo.content_pii import plant_negatives, plant_pii
from demo.truth import KEPT_DEFECTS, TruthRecord

RATES = {
    "exact_dup": 0.05, "near_dup": 0.05, "near_dup_low": 0.01, "mojibake_repairable": 0.02,
    "mojibake_unrepairable": 0.02, "symbol_runs": 0.02, "spam": 0.02, "code_stub": 0.02, "timestamps": 0.05,
    "other_lang": 0.03, "too_short": 0.02, "bad_json": 0.005, "bad_utf8": 0.005, "missing_text": 0.005,
    "empty_text": 0.005,
}
# Clean records turned into pages copying the shipped evaluation samples, or into hard negatives beside them, each at
# this rate (at least MIN_PER_KIND), chosen and written with a random stream of their own; no copy is made of them.
CONTAMINATION_RATES = {"contaminated": 0.005, "contamination_negative": 0.005}
# Clean records given sentences with personal data, or with look-alikes of it, the same way (a stream of their own).
PII_RATES = {"pii": 0.005, "pii_negative": 0.005}
INGEST_FAILURES = ("bad_json", "bad_utf8", "missing_text", "empty_text")
MIN_PER_KIND = 3
MIN_DOCS = 100
BYTES_PER_RECORD = 1400  # the corpus and its truth on disk, measured at 40k and 1M records (1.31-1.32 KB)
NEAR_DUP_RANGE = (0.80, 0.95)
NEAR_DUP_LOW_RANGE = (0.30, 0.60)
COPY_LABELS = ("exact_dup", "near_dup", "near_dup_low")

CATEGORY_WEIGHTS = {"academic": 17, "tech_docs": 17, "encyclopedia": 17, "news": 19, "literature": 15, "dialogue": 15}
SOURCES = {
    "academic": {"arxiv_like": 70, "thesis_like": 20, "journal_like": 10},
    "tech_docs": {"readme_like": 60, "devwiki_like": 30, "devforum_like": 10},
    "encyclopedia": {"wiki_like": 65, "baike_like": 25, "almanac_like": 10},
    "news": {"wire_like": 55, "portal_like": 30, "local_like": 15},
    "literature": {"poetry_like": 60, "fiction_like": 40},
    "dialogue": {"support_chat": 60, "qa_forum": 30, "chitchat": 10},
}
TXT_DIR = "literature_txt"
MIXED = "mixed.jsonl"
FILES = {
    "academic": "academic.jsonl.zst", "tech_docs": "tech_docs.jsonl", "encyclopedia": "encyclopedia.parquet",
    "news": "news.jsonl.gz", "dialogue": "dialogue.jsonl", "literature": TXT_DIR,
}
ZSTD_LEVEL = 3
PARQUET_ROW_GROUP = 1000
PARQUET_COLUMNS = ("id", "text", "url", "source", "category")
COUNTED = ("lang", "category", "source", "defect", "ingest", "expected")
POOL_SIZE = 400

_EDIT_WORDS = {
    "en": LANGUAGES["en"].pools["noun"] + LANGUAGES["en"].pools["adj"],
    "zh": LANGUAGES["zh"].pools["n"] + LANGUAGES["zh"].pools["adj"],
}
_LINE_BREAKERS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


@dataclass(frozen=True)
class DemoSummary:
    """What generate_demo_corpus wrote: paths, parameters, and counts (the content of demo.json)."""

    out_dir: Path
    corpus_dir: Path
    truth_path: Path
    seed: int
    n_docs: int
    files: dict[str, int]
    counts: dict[str, dict[str, int]]


@dataclass(frozen=True)
class _Doc:
    sid: str
    text: str
    lang: str
    category: str


@dataclass
class _Planted:
    lang: str
    category: str
    text: str
    defects: list[str]
    dup_of: str | None = None
    jaccard: float | None = None
    timestamps: tuple[str, ...] = ()
    orig_sha256: str | None = None
    pii: list[str] = field(default_factory=list)
    pii_negatives: list[str] = field(default_factory=list)


class _NoOriginal(Exception):
    """No remembered clean document can serve as the original of a copy (yet)."""


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json_line(fields: dict) -> str:
    line = json.dumps(fields, ensure_ascii=False)
    for char, escaped in _LINE_BREAKERS.items():
        line = line.replace(char, escaped)
    return line


def _side_plan(rng: random.Random, labels: list[str], rates: dict[str, float], taken: Collection[int] = ()
               ) -> dict[int, str]:
    """Which clean records (after the first ones, none of ``taken``) become which kind of ``rates``."""
    clean = [i for i, label in enumerate(labels)
             if label == "clean" and i >= max(10, len(labels) // 50) and i not in taken]
    counts = {kind: max(MIN_PER_KIND, round(rate * len(labels))) for kind, rate in rates.items()}
    chosen = rng.sample(clean, sum(counts.values()))
    kinds = [kind for kind, count in counts.items() for _ in range(count)]
    return dict(zip(chosen, kinds, strict=True))


def _plan(rng: random.Random, n_docs: int) -> list[str]:
    """One label per record: a defect, an ingest failure or "clean"; the first records are clean."""
    if n_docs < MIN_DOCS:
        raise ValueError(f"n_docs must be at least {MIN_DOCS}, got {n_docs}")
    counts = {kind: max(MIN_PER_KIND, round(rate * n_docs)) for kind, rate in RATES.items()}
    warmup = max(10, n_docs // 50)
    rest = [kind for kind, count in counts.items() for _ in range(count)]
    rest += ["clean"] * (n_docs - warmup - len(rest))
    rng.shuffle(rest)
    return ["clean"] * warmup + rest


JSONL_FILES = (FILES["academic"], FILES["tech_docs"], FILES["news"], FILES["dialogue"], MIXED)


def _open_jsonl(stack: ExitStack, path: Path):
    """A binary stream into path, compressed as its suffix says; closed with the stack."""
    if path.name.endswith(".gz"):
        return stack.enter_context(gzip.GzipFile(path, mode="wb", mtime=0, compresslevel=6))
    if path.name.endswith(".zst"):
        return stack.enter_context(zstandard.open(path, "wb", cctx=zstandard.ZstdCompressor(level=ZSTD_LEVEL)))
    return stack.enter_context(open(path, "wb"))


class _CorpusWriter:
    """Appends records to the corpus files; each call returns (location, position) of the record. The encyclopedia
    Parquet file is written a row group at a time."""

    def __init__(self, corpus_dir: Path, streams: dict) -> None:
        self.dir = corpus_dir
        self._streams = streams
        self.counts: Counter[str] = Counter()
        self._rows: dict[str, list] = {name: [] for name in PARQUET_COLUMNS}
        self._parquet: pq.ParquetWriter | None = None

    def line(self, name: str, data: bytes) -> tuple[str, int]:
        self._streams[name].write(data + b"\n")
        self.counts[name] += 1
        return f"{name}:{self.counts[name]}", self.counts[name]

    def row(self, fields: dict) -> tuple[str, int]:
        for key, values in self._rows.items():
            values.append(fields[key])
        name = FILES["encyclopedia"]
        self.counts[name] += 1
        if len(self._rows["id"]) == PARQUET_ROW_GROUP:
            self._flush_rows()
        return f"{name}:row {self.counts[name] - 1}", self.counts[name] - 1

    def text_file(self, name: str, text: str) -> tuple[str, int]:
        (self.dir / TXT_DIR / name).write_bytes(text.encode("utf-8"))
        self.counts[TXT_DIR] += 1
        return f"{TXT_DIR}/{name}", 0

    def _flush_rows(self) -> None:
        table = pa.table({key: pa.array(values, pa.string()) for key, values in self._rows.items()})
        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self.dir / FILES["encyclopedia"], table.schema)
        self._parquet.write_table(table, row_group_size=PARQUET_ROW_GROUP)
        for values in self._rows.values():
            values.clear()

    def close(self) -> None:
        """Write the last rows and close the Parquet file (written, with no rows, even when no record went there)."""
        if self._rows["id"] or self._parquet is None:
            self._flush_rows()
        self._parquet.close()


class _TruthWriter:
    """Truth records streamed to a scratch file per corpus file (a file's records arrive in their order), joined
    into truth.jsonl in file order; the counts kept as the records arrive."""

    def __init__(self, out_dir: Path, stack: ExitStack) -> None:
        self.dir = out_dir
        self._stack = stack
        self._scratch: dict[str, tuple[Path, TextIO]] = {}
        self.counters: dict[str, Counter[str]] = {key: Counter() for key in COUNTED}

    def add(self, file: str, record: TruthRecord) -> None:
        """Record ``record``, which lies in ``file`` (the folder, for a text file)."""
        if file not in self._scratch:
            path = self.dir / f".truth-{len(self._scratch)}.tmp"
            self._scratch[file] = (path, self._stack.enter_context(path.open("w", encoding="utf-8")))
        self._scratch[file][1].write(record.to_json() + "\n")
        for key in COUNTED:
            if key != "defect":
                self.counters[key][getattr(record, key)] += 1
        self.counters["defect"].update(record.defects or (["clean"] if record.ingest == "ok" else []))

    def finish(self, path: Path) -> dict[str, dict[str, int]]:
        """Write ``path`` and remove the scratch files; returns the counts."""
        with open(path, "wb") as out:
            for file in sorted(self._scratch):
                scratch, handle = self._scratch[file]
                handle.close()
                with open(scratch, "rb") as part:
                    shutil.copyfileobj(part, out)
                scratch.unlink()
        return {key: dict(sorted(counter.items())) for key, counter in self.counters.items()}


class _Generator:
    def __init__(self, rng: random.Random, writer: _CorpusWriter, truth: _TruthWriter,
                 contamination: tuple[random.Random, dict[int, str]], pii: tuple[random.Random, dict[int, str]]) -> None:
        self.rng = rng
        self.contamination_rng, self.contamination = contamination
        self.pii_rng, self.pii = pii
        self.writer = writer
        self.pool: list[_Doc] = []
        self.truth = truth

    def _category(self, exclude: tuple[str, ...] = ()) -> str:
        names = [c for c in CATEGORY_WEIGHTS if c not in exclude]
        return self.rng.choices(names, [CATEGORY_WEIGHTS[c] for c in names])[0]

    def _route(self, label: str, category: str) -> tuple[str, str]:
        """(file, source) for a record."""
        home = FILES[category]
        if label in INGEST_FAILURES:
            jsonl = home.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst"))
            file = home if jsonl and self.rng.random() > 0.15 else MIXED
        else:
            share = 0.5 if label in ("other_lang", "spam", "too_short") else 0.35 if category == "literature" else 0.08
            file = MIXED if self.rng.random() < share else home
        if file == TXT_DIR:
            return file, TXT_DIR
        sources = SOURCES[category]
        return file, self.rng.choices(list(sources), list(sources.values()))[0]

    def _pick(self, accept) -> _Doc | None:
        """A random remembered clean document that `accept`s, or None."""
        for _ in range(20):
            doc = self.pool[self.rng.randrange(len(self.pool))]
            if accept(doc):
                return doc
        candidates = [doc for doc in self.pool if accept(doc)]
        return self.rng.choice(candidates) if candidates else None

    def _remember(self, doc: _Doc) -> None:
        if len(self.pool) < POOL_SIZE:
            self.pool.append(doc)
        else:
            self.pool[self.rng.randrange(POOL_SIZE)] = doc

    def _fresh(self, label: str, category: str, lang: str, source: str) -> _Planted | None:
        """A new document for every label that is not a copy of an earlier one."""
        rng = self.rng
        if label in ("clean", *INGEST_FAILURES):
            return _Planted(lang, category, clean_document(rng, category, lang, source), [])
        if label == "code_stub":
            return _Planted(lang, category, tech_document(rng, LANGUAGES[lang], stub=True), [label])
        if label == "spam":
            return _Planted(lang, category, spam_document(rng, lang), [label])
        if label == "too_short":
            return _Planted(lang, category, short_text(rng, lang, LANGUAGES[lang].pools), [label])
        if label == "other_lang":
            return _Planted(lang, category, foreign_document(rng, lang), [label])
        text = clean_document(rng, category, lang, source)
        if label == "symbol_runs":
            return _Planted(lang, category, content_defects.symbol_runs(rng, text), [label])
        if label == "timestamps":
            stamped, spans = content_defects.plant_timestamps(rng, text, lang)
            return _Planted(lang, category, stamped, [label], timestamps=tuple(spans))
        if label == "mojibake_unrepairable":
            bad = content_defects.mojibake_unrepairable(rng, text, lang)
            return _Planted(lang, category, bad, [label], orig_sha256=_sha256(text))
        if lang == "en" and sum(not c.isascii() for c in text) < 2:
            return None
        bad = content_defects.mojibake_repairable(rng, text)
        return _Planted(lang, category, bad, [label], orig_sha256=_sha256(text)) if bad else None

    def _copy(self, label: str) -> _Planted | None:
        """A copy of an earlier clean document: exact, near (Jaccard 0.8-0.95) or distinct-but-similar."""
        rng = self.rng
        if label == "exact_dup":
            orig = self._pick(lambda d: True)
            return orig and _Planted(orig.lang, orig.category, orig.text, [label], dup_of=orig.sid, jaccard=1.0)
        if label == "near_dup":
            orig = self._pick(lambda d: len(d.text) >= 300)
            made = orig and content_defects.near_duplicate(rng, orig.text, _EDIT_WORDS[orig.lang], *NEAR_DUP_RANGE)
        else:
            orig = self._pick(lambda d: d.category in ("academic", "encyclopedia", "news", "dialogue"))
            made = None
            if orig:
                fresh = "\n\n".join(clean_document(rng, orig.category, orig.lang, "") for _ in range(3))
                made = content_defects.similar_document(rng, orig.text, fresh, *NEAR_DUP_LOW_RANGE)
        if not made:
            return None
        text, score = made
        return _Planted(orig.lang, orig.category, text, [label], dup_of=orig.sid, jaccard=round(score, 4))

    def _plant(self, label: str) -> tuple[_Planted, str, str]:
        """Draw a record for the label, retrying until the defect could be planted."""
        if label in COPY_LABELS:
            for _ in range(5):
                planted = self._copy(label)
                if planted:
                    return (planted, *self._route(label, planted.category))
            raise _NoOriginal(label)
        for _ in range(50):
            lang = self.rng.choice(FOREIGN_LANGS) if label == "other_lang" else self.rng.choice(("en", "zh"))
            if label == "code_stub":
                category = "tech_docs"
            else:
                category = self._category(("tech_docs",) if label == "other_lang" else ())
            file, source = self._route(label, category)
            planted = self._fresh(label, category, lang, source)
            if planted:
                return planted, file, source
        raise RuntimeError(f"could not plant {label}")

    def _contaminate(self, planted: _Planted, kind: str) -> None:
        """Turn a clean record into a page that copies evaluation questions, or a hard negative beside them."""
        plant = contaminated_document if kind == "contaminated" else hard_negative
        planted.text = plant(self.contamination_rng, planted.text, planted.lang)
        planted.defects = [kind]

    def _add_pii(self, planted: _Planted, kind: str) -> None:
        """Give a clean record sentences with personal data, or with look-alikes of it."""
        plant = plant_pii if kind == "pii" else plant_negatives
        planted.text, values = plant(self.pii_rng, planted.text, planted.lang)
        planted.defects = [kind]
        if kind == "pii":
            planted.pii = values
        else:
            planted.pii_negatives = values

    def record(self, index: int, label: str) -> None:
        planted, file, source = self._plant(label)
        if label == "clean" and index in self.contamination:
            self._contaminate(planted, self.contamination[index])
        if label == "clean" and index in self.pii:
            self._add_pii(planted, self.pii[index])
        rng = self.rng
        ext = ".txt" if file == TXT_DIR else ""
        sid = f"{source}-{index:06d}{ext}"
        fields = {
            "id": sid, "text": planted.text, "url": f"https://{source.replace('_', '-')}.example.org/{index:06d}",
            "source": source, "category": planted.category,
        }
        ingest = label if label in INGEST_FAILURES else "ok"
        if file == TXT_DIR:
            location, position = self.writer.text_file(sid, planted.text)
        elif file == FILES["encyclopedia"]:
            location, position = self.writer.row(fields)
        else:
            location, position = self.writer.line(file, _ingest_line(rng, ingest, fields))
        if label == "clean" and not planted.defects:  # an original of later copies is a clean record, as written
            self._remember(_Doc(sid, planted.text, planted.lang, planted.category))
        expected = "keep" if ingest == "ok" and set(planted.defects) <= set(KEPT_DEFECTS) else "drop"
        self.truth.add(file, TruthRecord(
            record=location, file=location if file == TXT_DIR else file, source_id=sid, lang=planted.lang,
            category=planted.category, source=source, defects=planted.defects, ingest=ingest, dup_of=planted.dup_of,
            jaccard=planted.jaccard, timestamps=list(planted.timestamps), orig_sha256=planted.orig_sha256,
            expected=expected, pii=planted.pii, pii_negatives=planted.pii_negatives,
        ))


def _ingest_line(rng: random.Random, ingest: str, fields: dict) -> bytes:
    """The JSONL line of a record; for an ingest failure, the line broken the planned way."""
    if ingest == "missing_text":
        return _json_line({k: v for k, v in fields.items() if k != "text"}).encode("utf-8")
    if ingest == "empty_text":
        return _json_line({**fields, "text": rng.choice(("", " ", "\n\n", " \t "))}).encode("utf-8")
    line = _json_line(fields)
    if ingest == "bad_json":
        if rng.random() < 0.3:
            return repr(fields).encode("utf-8")
        return line[: rng.randint(len(line) // 3, len(line) - 2)].encode("utf-8")
    if ingest == "bad_utf8":
        start = line.index('"text": "') + 9
        cut = rng.randint(start, start + min(300, len(fields["text"])))
        junk = rng.choice((b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80"))
        return line[:cut].encode("utf-8") + junk + line[cut:].encode("utf-8")
    return line.encode("utf-8")


def generate_demo_corpus(out_dir: Path, n_docs: int = 20000, seed: int = 1234) -> DemoSummary:
    """Write out_dir/corpus/* (replacing an earlier corpus there), out_dir/truth.jsonl and out_dir/demo.json.

    The same (n_docs, seed) always gives byte-identical files. n_docs counts records over all files.
    """
    out_dir = Path(out_dir)
    try:
        return _generate(out_dir, n_docs, seed)
    except OSError as err:
        if not is_disk_full(err):
            raise
        shutil.rmtree(out_dir / "corpus", ignore_errors=True)
        for path in [out_dir / "truth.jsonl", out_dir / "demo.json", *out_dir.glob(".truth-*.tmp")]:
            path.unlink(missing_ok=True)
        raise disk_full_error("demo corpus", out_dir, n_docs * BYTES_PER_RECORD) from None


def _generate(out_dir: Path, n_docs: int, seed: int) -> DemoSummary:
    corpus_dir = out_dir / "corpus"
    rng = random.Random(seed)
    labels = _plan(rng, n_docs)
    if corpus_dir.exists():
        shutil.rmtree(corpus_dir)
    (corpus_dir / TXT_DIR).mkdir(parents=True)
    truth_path = out_dir / "truth.jsonl"
    with ExitStack() as stack:
        writer = _CorpusWriter(corpus_dir, {name: _open_jsonl(stack, corpus_dir / name) for name in JSONL_FILES})
        truth = _TruthWriter(out_dir, stack)
        contamination_rng, pii_rng = random.Random(f"contamination-{seed}"), random.Random(f"pii-{seed}")
        contamination = _side_plan(contamination_rng, labels, CONTAMINATION_RATES)
        generator = _Generator(rng, writer, truth, (contamination_rng, contamination),
                               (pii_rng, _side_plan(pii_rng, labels, PII_RATES, contamination)))
        for index in range(len(labels)):
            try:
                generator.record(index, labels[index])
            except _NoOriginal:
                later = labels.index("clean", index + 1)
                labels[index], labels[later] = labels[later], labels[index]
                generator.record(index, labels[index])
        writer.close()
        counts = truth.finish(truth_path)
    files = dict(sorted(writer.counts.items()))
    summary = {"seed": seed, "n_docs": n_docs, "corpus_dir": "corpus", "truth": "truth.jsonl", "files": files,
               "counts": counts}
    atomic_write_json(out_dir / "demo.json", summary, indent=2, sort_keys=True)
    return DemoSummary(out_dir, corpus_dir, truth_path, seed, n_docs, files, counts)
