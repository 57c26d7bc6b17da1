"""Build a real-text development set: sampled clean documents of every genre, planted defects, truth.

Two sets, cut from disjoint packages (``sources.FIRST`` and ``SECOND``): the same packages and seed
give byte-identical ``docs.jsonl`` and ``truth.jsonl``. Clean documents are real text; defects are
planted on copies of them (duplicates, mojibake, timestamps) or are real pages of their own kind
(navigation, title, copyright, contents and index pages; pages in a script no target language
uses, in both sets) or ad copy written for the set (spam pages, and ad paragraphs inside real passages: spam_lines), or sentences written
for the set that hold personal data, or look-alikes of it, added to real passages (pii, pii_negative: chosen last,
with a random stream of their own, so the rest of the set is what the seed made without them).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from common.files import atomic_write_json
from common.text import TOKEN_RE
from demo import content_defects
from demo.content_pii import plant_negatives, plant_pii
from demo.realtext import genres, second, spam
from demo.realtext.genres import Document
from demo.realtext.other_scripts import other_script_documents
from demo.realtext.second import Page
from demo.realtext.sources import FIRST, SECOND, Fetched, SourceSet, fetch
from demo.truth import KEEP_DEFECTS, TruthRecord

DOCS_FILE = "docs.jsonl"
SUMMARY_FILE = "devset.json"
Reader = Callable[[Path], Iterator[Document]]


@dataclass(frozen=True)
class DevSet:
    """One development set: its packages, the clean documents sampled per genre (all of them where a
    package holds fewer) and the real pages planted whole as defects."""

    sources: SourceSet
    genres: dict[str, tuple[int, Reader]]
    pages: Callable[[Path], Iterator[Page]]
    ads: str  # the pool of ad copy planted inside real passages (demo.realtext.spam.AD_POOLS)


def _navigation(root: Path) -> Iterator[Page]:
    for name, text in genres.navigation_pages(root):
        yield Page(Document("navigation", "en", "tech_docs", "python-docs", name, text), "boilerplate",
                   f"https://docs.python.org/3/{name}")


def _first_pages(root: Path) -> Iterator[Page]:
    yield from _navigation(root)
    for doc in other_script_documents(root):
        yield Page(doc, "other_lang")


def _second_pages(root: Path) -> Iterator[Page]:
    yield from second.boilerplate_pages(root)
    yield from second.other_script_pages(root)


DEVSETS = {
    "1": DevSet(FIRST, {
        "en/man": (300, lambda root: genres.man_pages(root, "", "en")),
        "en/python_docs": (350, genres.python_docs),
        "en/debian_reference": (250, lambda root: genres.debian_reference(root, "en")),
        "en/quotations": (300, genres.english_quotations),
        "en/dialogue": (300, lambda root: genres.conversations(root, "en")),
        "zh/man": (300, lambda root: genres.man_pages(root, "zh_CN", "zh")),
        "zh/debian_reference": (250, lambda root: genres.debian_reference(root, "zh")),
        "zh/news": (400, genres.people_daily),
        "zh/poems": (300, genres.chinese_poems),
        "zh/quotations": (300, genres.chinese_quotations),
        "zh/dialogue": (300, lambda root: genres.conversations(root, "zh")),
    }, _first_pages, ads="1"),
    "2": DevSet(SECOND, {
        "en/install_guide": (250, lambda root: second.install_guide(root, "en")),
        "en/postgres_docs": (300, second.postgres_docs),
        "en/bash_manual": (250, second.bash_manual),
        "en/jargon": (300, second.jargon),
        "en/devils_dictionary": (250, second.devils_dictionary),
        "en/dialogue": (250, lambda root: second.visual_novel(root, "en")),
        "zh/install_guide": (250, lambda root: second.install_guide(root, "zh")),
        "zh/debian_guides": (250, second.chinese_debian_guides),
        "zh/dialogue": (250, lambda root: second.visual_novel(root, "zh")),
    }, _second_pages, ads="2"),
}
# Defects planted into sampled documents in place (the document is then no longer clean), and
# duplicates added as copies of clean ones, as shares of the sampled documents.
IN_PLACE_RATES = {"mojibake_repairable": 0.02, "mojibake_unrepairable": 0.02, "mojibake_lossy": 0.03,
                  "timestamps": 0.03, "spam_lines": 0.03}
DUPLICATE_RATES = {"exact_dup": 0.04, "near_dup": 0.04}
PII_RATES = {"pii": 0.02, "pii_negative": 0.02}  # shares of the sampled documents, taken from those left clean
PII_HOST_CHARS = 800  # passages at least this long: the sentences added stay a small part of them
SPAM_PAGES = {"zh": 90, "en": 40}
NEAR_DUP_RANGE = (0.80, 0.95)
URLS = {
    "man-en": "https://man7.org/linux/man-pages/{section}/{name}.html",
    "python-docs": "https://docs.python.org/3/{page}.html",
    "debian-reference-en": "https://www.debian.org/doc/manuals/debian-reference/{page}.html",
    "debian-reference-zh": "https://www.debian.org/doc/manuals/debian-reference/{page}.html",
}


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _url(doc: Document) -> str | None:
    template = URLS.get(doc.source)
    if template is None:
        return None
    page = doc.name.split("#")[0]
    if doc.source == "man-en":
        name = page.removesuffix(".gz")
        return template.format(section=f"man{name.rsplit('.', 1)[-1][:1]}", name=name)
    return template.format(page=page)


def _sample(rng: random.Random, root: Path, genre_readers: dict[str, tuple[int, Reader]]) -> list[Document]:
    chosen = []
    for count, reader in genre_readers.values():
        unique = list({d.text: d for d in reader(root)}.values())
        chosen += sorted(rng.sample(unique, min(count, len(unique))), key=lambda d: d.name)
    return chosen


def _words(text: str) -> tuple[str, ...]:
    return tuple(sorted(set(TOKEN_RE.findall(text))))[:400] or ("text",)


def _as_document(fields: dict, truth: TruthRecord) -> Document:
    return Document(truth.genre, truth.lang, truth.category, truth.source, fields["title"], fields["text"])


def _defect(rng: random.Random, kind: str, doc: Document, ads: str = "1") -> tuple[str, dict] | None:
    """``doc``'s text with the defect and the truth fields it needs, or None when it cannot be planted
    (``ads``: the pool of ad copy that spam_lines draws from)."""
    text = doc.text
    if kind == "spam_lines":
        spammed, lines = spam.interleave_ads(rng, text, doc.lang, ads)
        return spammed, {"ad_lines": lines}
    if kind == "exact_dup":
        return text, {"jaccard": 1.0}
    if kind == "near_dup":
        made = content_defects.near_duplicate(rng, text, _words(text), *NEAR_DUP_RANGE) if len(text) >= 300 else None
        return made and (made[0], {"jaccard": round(made[1], 4)})
    if kind == "timestamps":
        stamped, spans = content_defects.plant_timestamps(rng, text, doc.lang)
        return stamped, {"timestamps": spans}
    if kind == "mojibake_repairable":
        bad = content_defects.mojibake_repairable(rng, text) if sum(not c.isascii() for c in text) >= 2 else None
        return bad and (bad, {"orig_sha256": _sha256(text)})
    if kind == "mojibake_unrepairable":
        return content_defects.mojibake_unrepairable(rng, text, doc.lang), {"orig_sha256": _sha256(text)}
    bad = content_defects.mojibake_lossy(rng, text)
    return bad and (bad, {"orig_sha256": _sha256(text)})


def _truth(sid: str, doc_lang: str, category: str, source: str, genre: str, defects: list[str], **extra) -> TruthRecord:
    expected = "keep" if set(defects) <= set(KEEP_DEFECTS) else "drop"
    return TruthRecord(record=f"{DOCS_FILE}:{sid}", file=DOCS_FILE, source_id=sid, lang=doc_lang, category=category,
                       source=source, defects=defects, ingest="ok", dup_of=extra.get("dup_of"),
                       jaccard=extra.get("jaccard"), timestamps=list(extra.get("timestamps", [])),
                       orig_sha256=extra.get("orig_sha256"), expected=expected, genre=genre,
                       ad_lines=list(extra.get("ad_lines", [])))


def _plant_pii(rng: random.Random, records: list[tuple[dict, TruthRecord]], sampled: int) -> None:
    """Turn clean records into ones holding personal data, or look-alikes of it, in place."""
    clean = [i for i, (fields, truth) in enumerate(records) if not truth.defects and len(fields["text"]) >= PII_HOST_CHARS]
    chosen = rng.sample(clean, sum(round(rate * sampled) for rate in PII_RATES.values()))
    kinds = [kind for kind, rate in PII_RATES.items() for _ in range(round(rate * sampled))]
    for index, kind in zip(chosen, kinds, strict=True):
        fields, truth = records[index]
        text, values = (plant_pii if kind == "pii" else plant_negatives)(rng, fields["text"], truth.lang)
        records[index] = ({**fields, "text": text}, dataclasses.replace(
            truth, defects=[kind], expected="keep", **{"pii" if kind == "pii" else "pii_negatives": values}))


def build_devset(out_dir: Path, cache: Path, seed: int = 1234, which: str = "1") -> dict:
    """Write development set ``which`` (``DEVSETS``: "1" or "2") as ``docs.jsonl``, ``truth.jsonl`` and
    ``devset.json`` under ``out_dir``; return the summary."""
    devset = DEVSETS[which]
    with fetch(cache, devset.sources) as fetched:
        return _build(out_dir, fetched, random.Random(seed), seed, devset)


def _build(out_dir: Path, fetched: Fetched, rng: random.Random, seed: int, devset: DevSet) -> dict:
    clean = _sample(rng, fetched.root, devset.genres)
    records: list[tuple[dict, TruthRecord]] = []
    for i, doc in enumerate(clean):
        sid = f"{doc.source}-{i:05d}"
        fields = {"id": sid, "text": doc.text, "url": _url(doc), "source": doc.source, "category": doc.category,
                  "title": doc.name}
        records.append((fields, _truth(sid, doc.lang, doc.category, doc.source, doc.genre, [])))
    untouched = rng.sample(range(len(records)), len(records))
    for kind, rate in IN_PLACE_RATES.items():
        wanted, skipped = round(rate * len(records)), []
        while untouched and wanted:
            index = untouched.pop()
            fields, truth = records[index]
            made = _defect(rng, kind, _as_document(fields, truth), devset.ads)
            if made is None:
                skipped.append(index)  # stays clean; a later kind may take it
                continue
            text, extra = made
            records[index] = ({**fields, "text": text},
                              _truth(truth.source_id, truth.lang, truth.category, truth.source, truth.genre, [kind],
                                     **extra))
            wanted -= 1
        untouched += skipped
    clean_records = [records[i] for i in sorted(untouched)]
    for kind, rate in DUPLICATE_RATES.items():
        planted = 0
        for fields, truth in rng.sample(clean_records, len(clean_records)):
            if planted >= round(rate * len(clean_records)):
                break
            made = _defect(rng, kind, _as_document(fields, truth))
            if made is None:
                continue
            text, extra = made
            sid = f"{truth.source}-{kind}-{planted:04d}"
            records.append(({**fields, "id": sid, "text": text},
                            _truth(sid, truth.lang, truth.category, truth.source, truth.genre, [kind],
                                   dup_of=truth.source_id, **extra)))
            planted += 1
    for lang, count in SPAM_PAGES.items():
        for i in range(count):
            sid = f"ads-{lang}-{i:04d}"
            records.append(({"id": sid, "text": spam.ad_page(rng, lang), "url": None, "source": f"ads-{lang}",
                             "category": "news", "title": sid},
                            _truth(sid, lang, "news", f"ads-{lang}", "spam", ["spam"])))
    for i, page in enumerate(devset.pages(fetched.root)):
        doc = page.doc
        sid = f"{doc.source}-{doc.genre}-{i:04d}"
        records.append(({"id": sid, "text": doc.text, "url": page.url, "source": doc.source,
                         "category": doc.category, "title": doc.name},
                        _truth(sid, doc.lang, doc.category, doc.source, doc.genre, [page.defect])))
    _plant_pii(random.Random(f"pii-{seed}"), records, len(clean))
    rng.shuffle(records)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open(out_dir / DOCS_FILE, "w", encoding="utf-8") as docs, \
         open(out_dir / "truth.jsonl", "w", encoding="utf-8") as truth_file:
        for fields, truth in records:
            docs.write(json.dumps(fields, ensure_ascii=False, sort_keys=True) + "\n")
            truth_file.write(truth.to_json() + "\n")
    summary = {
        "set": devset.sources.name,
        "seed": seed,
        "packages": fetched.files,
        "documents": len(records),
        "clean_by_genre": dict(sorted(Counter(f"{t.lang}/{t.genre}" for _, t in records if not t.defects).items())),
        "defects": dict(sorted(Counter(d for _, t in records for d in t.defects).items())),
        "sha256": {name: _sha256((out_dir / name).read_text(encoding="utf-8")) for name in (DOCS_FILE, "truth.jsonl")},
    }
    atomic_write_json(out_dir / SUMMARY_FILE, summary)
    return summary
