"""`kiln report` on a hand-written run root: pages, charts, thresholds, escaping and CLI errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from common.histograms import signal_histograms
from common.schema import EXCLUDED_SCHEMA
from common.shards import write_shard
from kiln.cli import main
from kiln.report import write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HOST = {"hostname": "test", "cpu_count": 2, "python": "3.11.7", "platform": "Linux", "ray": {"mode": "local"}}
RULES = {
    "too_short": {"signal": "q_tokens", "min": {"*": 20.0}, "max": {}, "enabled": True},
    "dup_lines": {"signal": "q_dup_line_frac", "min": {}, "max": {"en": 0.3, "zh": 0.287}, "enabled": True},
    "mean_word_length": {"signal": "q_mean_word_len", "min": {"en": 3.0}, "max": {"en": 10.0}, "enabled": True},
}
DROPPED = {"lang": {"fr": 4, "en": 1}, "too_short": {"zh": 6, "en": 3}, "dup_lines": {"zh": 2, "en": 1},
           "mean_word_length": {"en": 2}}
SCRIPT = "<script>alert('x')</script>"
DEDUP_CONFIG = {
    "num_perm": 128, "shingle_size": 5, "bands": 16, "rows": 8, "threshold": 0.7, "partitions": 7,
    "category_priority": ["academic", "news", "dialogue", "unknown"],
    "quality_signal": "lang_score", "seed": 1,
}
NEAR_DUP_TEXTS = [f"Near copy {SCRIPT}", "重" * 1000, "line one\n\nline   two", "fourth row, never shown"]


def _shard(path: str, rows: int) -> dict:
    return {"path": path, "rows": rows, "bytes": 1000 + rows, "sha256": "0" * 64}


def _write_stage(root: Path, stage: str, accounting: dict, config: dict, input: dict, details: dict,
                 excluded: dict[str, dict] | None = None) -> None:
    """A finished stage; its excluded shards are listed but not on disk unless ``excluded`` gives real ones."""
    stage_dir = root / stage
    stage_dir.mkdir(parents=True, exist_ok=True)
    listed = {r: _shard(f"_excluded/{r}/part-00000.arrow", n) for r, n in accounting["dropped"].items()}
    manifest = {
        "stage": stage, "complete": True, "code_version": "0.1.0+abc", "fingerprint": "f" * 64, "config": config,
        "input": input, "accounting": accounting, "shards": [_shard("part-00000.arrow", accounting["out"])],
        "excluded": {r: [info] for r, info in (listed | (excluded or {})).items()},
    }
    stats = {
        "stage": stage, "accounting": accounting, "bytes_out": 1000, "wall_seconds": 2.5,
        "started_at": "2026-01-01T00:00:00+00:00", "units": {"total": 1, "run": 1, "resumed": 0},
        "unit_seconds": 2.0, "host": HOST,
        "per_unit": [{"docs_in": accounting["in"], "docs_out": accounting["out"], "dropped": accounting["dropped"],
                      "index": 0, "seconds": 2.0}],
        "details": details,
    }
    (stage_dir / "_manifest.json").write_text(json.dumps(manifest, indent=2))
    (stage_dir / "_stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False))


def _clean_details() -> dict:
    rng = np.random.default_rng(0)
    langs = ["zh"] * 60 + ["en"] * 50 + ["fr"] * 4
    signals = {
        "q_tokens": rng.lognormal(4, 1.2, len(langs)).round(),
        "q_dup_line_frac": rng.beta(1, 8, len(langs)),
        "q_mean_word_len": rng.normal(5, 1.5, len(langs)).clip(0),
    }
    return {
        "docs_by_lang": {"zh": 60, "en": 50, "fr": 4},
        "kept_by_lang": {"zh": 52, "en": 43},
        "dropped_by_rule_lang": DROPPED,
        "repaired": 7,
        "timestamp_spans_removed": 13,
        "lines_removed": {"ad": {"documents": 4, "lines": 11, "chars": 1234}},
        "pii": {"documents": 5, "kinds": {"email": {"spans": 6, "documents": 4}, "bank_card": {"spans": 1, "documents": 1}}},
        "examples": {
            "too_short": [{"source_id": "doc-1", "lang": "en", "signal": "q_tokens=3 (min 20, lang en)",
                           "text": f"Read more {SCRIPT}"}],
            "dup_lines": [{"source_id": "doc-2", "lang": "zh", "signal": "q_dup_line_frac=0.5 (max 0.287, lang zh)",
                           "text": "重复的行\n重复的行\n" + "长" * 1000}],
        },
        "histograms": signal_histograms(signals, langs),
    }


def _near_dup_shard(stage_dir: Path) -> dict:
    """The one excluded shard on disk: near duplicates, each naming the document its cluster kept."""
    n = len(NEAR_DUP_TEXTS)
    table = pa.table({
        "doc_id": pa.array(range(100, 100 + n), pa.int64()),
        "source_id": pa.array([f"doc-{i}" for i in range(n)]),
        "source": pa.array(["web"] * n),
        "text": pa.array(NEAR_DUP_TEXTS, pa.large_string()),
        "reason": pa.array(["near_dup"] * n),
        "signal": pa.array([f"kept doc_id={7 + i} (cluster of 3)" for i in range(n)]),
        "location": pa.nulls(n, pa.string()),
    }, schema=EXCLUDED_SCHEMA)
    return write_shard(stage_dir / "_excluded" / "near_dup" / "part-00000.arrow", table, stage_dir).to_dict()


def _dedup_details() -> dict:
    return {
        "cluster_sizes": {"1": 86, "2": 2, "3": 2},
        "removed_exact_dup_by_lang": {"en": 2},
        "removed_exact_dup_by_category": {"news": 2},
        "removed_near_dup_by_lang": {"zh": 3, "en": 1},
        "removed_near_dup_by_category": {"academic": 1, "dialogue": 3},
    }


@pytest.fixture(scope="module")
def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("run")
    _write_stage(root, "ingest", {"in": 120, "out": 114, "dropped": {"bad_json": 4, "empty_text": 2}},
                 {"input": ["corpus"]}, {"files": [{"name": "corpus/a.jsonl", "format": "jsonl", "bytes": 5000}]}, {})
    clean_dropped = {rule: sum(langs.values()) for rule, langs in DROPPED.items()}
    _write_stage(root, "clean", {"in": 114, "out": 95, "dropped": clean_dropped},
                 {"lid": {"model_path": None, "thresholds": {"zh": 0.5, "en": 0.65}}, "rules": RULES},
                 {"stage": "ingest", "manifest_sha256": "a" * 64}, _clean_details())
    _write_stage(root, "dedup", {"in": 96, "out": 90, "dropped": {"exact_dup": 2, "near_dup": 4}}, DEDUP_CONFIG,
                 {"stage": "clean", "manifest_sha256": "b" * 64}, _dedup_details(),
                 excluded={"near_dup": _near_dup_shard(root / "dedup")})
    _write_stage(root, "pii_scrub", {"in": 90, "out": 88, "dropped": {"pii": 2}}, {},
                 {"stage": "dedup", "manifest_sha256": "c" * 64}, {"anything": 1})
    return root


@pytest.fixture(scope="module")
def report(run_root: Path) -> tuple[Path, str]:
    path = write_report(run_root)
    return path, path.read_text(encoding="utf-8")


def test_page_and_charts(run_root: Path, report: tuple[Path, str]) -> None:
    path, page = report
    assert path == run_root / "report" / "index.html"
    linked = re.findall(r'<img src="([^"]+)"', page)
    assert linked
    assert sorted(linked) == sorted(p.name for p in path.parent.glob("*.png"))
    for name in linked:
        blob = (path.parent / name).read_bytes()
        assert blob.startswith(PNG_SIGNATURE) and len(blob) > 5000, name
    for name in ("ingest-accounting.png", "clean-accounting.png", "dedup-accounting.png", "pii_scrub-accounting.png",
                 "clean-drops-by-rule-lang.png", *(f"clean-hist-{r['signal']}.png" for r in RULES.values()),
                 "dedup-cluster-sizes.png", "dedup-removed-by-category.png", "dedup-removed-by-lang.png"):
        assert name in linked
    assert "http" not in page and "<script" not in page


def test_sections_in_order(report: tuple[Path, str]) -> None:
    _, page = report
    positions = [page.index(f'<section id="{stage}">') for stage in ("ingest", "clean", "dedup", "pii_scrub")]
    assert positions == sorted(positions)
    for stage in ("mix", "tokenize"):
        assert f'<section id="{stage}">' not in page
        assert f"<td>{stage}</td>" in page


def _section(page: str, stage: str) -> str:
    return page[page.index(f'<section id="{stage}">'):].split("</section>")[0]


def test_generic_section_for_unknown_stage(report: tuple[Path, str]) -> None:
    section = _section(report[1], "pii_scrub")
    assert '<img src="pii_scrub-accounting.png"' in section
    assert "<td>pii</td>" in section and '<td class="n">2.22 %</td>' in section
    assert "<h3>" not in section


def test_dedup_settings_and_clusters(report: tuple[Path, str]) -> None:
    section = _section(report[1], "dedup")
    assert "<b>16 bands × 8 rows</b>" in section and "<b>0.7</b>" in section
    # 1-(1-0.8**8)**16 = 0.9473, 1-(1-0.5**8)**16 = 0.0607
    assert "J=0.8: <b>0.947</b>" in section and "J=0.5: <b>0.061</b>" in section
    assert "over <b>7</b> partitions" in section and "academic &gt; news &gt; dialogue" in section
    assert "90 clusters" in section and "<b>86</b> singletons" in section and "<b>4</b> with duplicates" in section
    for chart in ("accounting", "cluster-sizes", "removed-by-category", "removed-by-lang"):
        assert f'<img src="dedup-{chart}.png"' in section
    assert "<td>exact_dup</td>" in section and "<td>near_dup</td>" in section


def test_dedup_examples(report: tuple[Path, str]) -> None:
    section = _section(report[1], "dedup")
    table = section[section.index("<h3>Examples of removed documents</h3>"):]
    rows = re.findall(r"<tr><td>near_dup</td>(.*?)</tr>", table)
    assert len(rows) == 3
    assert '<td class="n">100</td><td>doc-0</td><td class="n">7</td><td class="n">3</td>' in rows[0]
    assert "Near copy &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in rows[0]
    assert "重" * 120 + "…" in rows[1] and "重" * 121 not in rows[1]
    assert "<td>line one line two</td>" in rows[2]
    assert "fourth row" not in section
    assert "No examples:" in table and "exact_dup/part-00000.arrow: listed in the manifest but missing" in table


def test_clean_rules_thresholds_and_counts(report: tuple[Path, str]) -> None:
    _, page = report
    table = page[page.index("<h3>Drops per rule</h3>"):].split("</table>")[0]
    rows = dict(re.findall(r"<tr><td>([a-z_]+)</td>(.*?)</tr>", table))
    for rule, langs in DROPPED.items():
        assert f'<td class="n">{sum(langs.values()):,}</td>' in rows[rule], rule
    assert "* 20" in rows["too_short"]
    assert "en 0.3, zh 0.287" in rows["dup_lines"]
    assert "en 3" in rows["mean_word_length"] and "en 10" in rows["mean_word_length"]
    assert "en 0.65, zh 0.5" in rows["lang"]
    assert "Repaired documents: <b>7</b>" in page and "timestamp spans removed: <b>13</b>" in page
    removed = page[page.index("<h3>Lines removed from documents</h3>"):].split("</table>")[0]
    assert re.search(r"<td>ad</td><td[^>]*>4</td><td[^>]*>11</td><td[^>]*>1,234</td>", removed), removed
    pii = page[page.index("<h3>Personal data (replace)</h3>"):].split("</p>")[0]
    assert re.search(r"<td>email</td><td[^>]*>6</td><td[^>]*>4</td>", pii) and "5 documents touched" in pii, pii


def test_examples_escaped_and_truncated(report: tuple[Path, str]) -> None:
    _, page = report
    assert SCRIPT not in page
    assert "Read more &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "长" * 200 in page and "长" * 1000 not in page


def test_no_pyplot_figures_left(run_root: Path, tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    write_report(run_root, tmp_path / "out")
    assert plt.get_fignums() == before


def test_cli(run_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_root), "--out", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "r" / "index.html")

    assert main(["report", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "nowhere does not exist" in err and "Traceback" not in err

    (tmp_path / "empty" / "clean").mkdir(parents=True)
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert "no finished stage" in capsys.readouterr().err
