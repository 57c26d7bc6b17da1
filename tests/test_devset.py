"""The real-text development set: built deterministically from Debian and PyPI text, and the clean
and dedup stages meeting their goals on it, genre by genre and language by language."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from common.config import load_config
from demo.realtext.sources import FIRST, default_cache
from demo.truth import DROP_DEFECTS, REAL_TEXT_DEFECTS, load_truth, score
from kiln.commands.eval_truth import read_kept_texts, read_line_filtered
from stages.clean.lid import decide_languages
from stages.clean.repair import repair
from stages.clean.rules import apply_rules, build_rules
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher
from stages.clean.timestamps import scrub_timestamps
from tests.conftest import REPO, built_once, child_env, cli, run_in_process

CACHE = default_cache()
pytestmark = pytest.mark.slow

MAX_CLEAN_LOSS = 0.02
MIN_REMOVED = 0.95
# Index, contents and search pages: measured 0.88 on this set before the navigation rule counted
# short contents pages, contents with an introduction and the module index's described entries.
MIN_REMOVED_NAVIGATION = 0.95
MAX_RESIDUE = 0.01
MIN_SPAM_REMOVED = 0.90  # ad pages and ad lines inside real passages together (issue goal)
MIN_KEEP_F1 = 0.97


def shared_devset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`kiln devset` built once per test run, for every module that reads the set."""
    return built_once(tmp_path_factory, "devset",
                      lambda out: cli("-m", "kiln", "devset", str(out), "--cache", str(CACHE), timeout=900))


@pytest.fixture(scope="module")
def devset(tmp_path_factory) -> Path:
    return shared_devset(tmp_path_factory)


@pytest.fixture(scope="module")
def devrun(devset, tmp_path_factory, ray_local) -> Path:
    """Ingest, clean and dedup of the set, in this process on the session's Ray."""
    data = tmp_path_factory.mktemp("devrun")
    run_in_process("-m", "stages.ingest", "--data-dir", str(data), "--input", str(devset / "docs.jsonl"))
    run_in_process("-m", "stages.clean", "--data-dir", str(data))
    run_in_process("-m", "stages.dedup", "--data-dir", str(data))
    return data


def test_the_set_is_deterministic_and_covers_every_genre(devset, tmp_path):
    """A second build writes the same set; while another build holds the cache, it waits for the cache's lock
    instead of reading packages half unpacked."""
    with open(CACHE / FIRST.name / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        build = subprocess.Popen([sys.executable, "-m", "kiln", "devset", str(tmp_path / "again"), "--cache", str(CACHE)],
                                 cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not any(line.split()[1:2] == ["->"] and str(build.pid) in line.split()
                      for line in Path("/proc/locks").read_text().splitlines()):
            assert build.poll() is None and time.monotonic() < deadline, "the build never waited for the cache's lock"
            time.sleep(0.05)
    assert build.wait(timeout=900) == 0, build.stderr.read()
    first = json.loads((devset / "devset.json").read_text())
    assert json.loads((tmp_path / "again" / "devset.json").read_text())["sha256"] == first["sha256"]
    genres = first["clean_by_genre"]
    assert {g.split("/")[0] for g in genres} == {"en", "zh"}
    assert len(genres) >= 10 and min(genres.values()) >= 40, genres
    assert all(first["defects"].get(kind, 0) >= 30 for kind in ("exact_dup", "near_dup", "mojibake_lossy", "spam",
                                                                 "boilerplate", "timestamps", "other_lang")), first["defects"]
    assert len({t.lang for t in load_truth(devset) if "other_lang" in t.defects}) >= 7  # seven scripts


def test_clean_loses_at_most_two_percent_of_any_genre(devset, devrun):
    report = score(load_truth(devset), read_kept_texts(devrun / "clean"))
    by_genre = {(c.lang, c.genre): c for c in report.clean if c.genre}
    assert len(by_genre) >= 10
    too_many = {f"{lang}/{genre}": round(c.rate, 3) for (lang, genre), c in by_genre.items() if c.rate > MAX_CLEAN_LOSS}
    assert not too_many, too_many


def test_clean_removes_the_planted_defects_and_leaves_no_residue(devset, devrun):
    report = score(load_truth(devset), read_kept_texts(devrun / "clean"), read_line_filtered(devrun / "clean"))
    for kind in (k for k in report.kinds if k.kind in (*DROP_DEFECTS, *REAL_TEXT_DEFECTS)):
        if kind.kind in ("exact_dup", "near_dup"):
            continue  # dedup's work
        floor = MIN_REMOVED_NAVIGATION if kind.kind == "boilerplate" else MIN_REMOVED
        assert kind.rate >= floor, kind.to_dict()
    assert report.kind("timestamps").rate >= 1 - MAX_CLEAN_LOSS
    assert report.timestamp_residue <= MAX_RESIDUE
    assert report.mojibake_residue <= MAX_RESIDUE


def _spam_removed(report) -> float:
    """Ad pages dropped and ad lines planted in real passages removed (with their line or document), together."""
    pages = report.kind("spam")
    return (pages.removed + report.ad_lines - report.ad_lines_left) / (pages.planted + report.ad_lines)


def test_clean_removes_ad_pages_and_the_ad_lines_inside_real_passages(devset, devrun):
    report = score(load_truth(devset), read_kept_texts(devrun / "clean"))
    assert report.ad_lines >= 300 and _spam_removed(report) >= MIN_SPAM_REMOVED
    assert report.kind("spam_lines").rate >= 1 - MAX_CLEAN_LOSS  # the passages around the ads are kept
    _assert_personal_data_gone(report)


def _assert_personal_data_gone(report) -> None:
    """Every value planted in a real passage is gone from what clean kept, every look-alike is there as written,
    and the passages are kept."""
    assert report.pii_values >= 50 and report.pii_left == 0, report.format_table()
    assert report.pii_negatives >= 50 and report.pii_negatives_changed == 0, report.format_table()
    assert report.kind("pii").rate == 1.0 and report.kind("pii_negative").rate == 1.0


def test_keep_f1_after_dedup(devset, devrun):
    report = score(load_truth(devset), read_kept_texts(devrun / "dedup"))
    assert report.keep_f1 >= MIN_KEEP_F1
    assert report.dup_groups["exactly_one"] >= 0.95 * report.dup_groups["groups"]


def test_no_rule_alone_drops_more_than_two_percent_of_a_clean_genre(devset):
    """Each enabled rule, and language ID, judged on its own against every clean genre."""
    cfg = load_config().clean
    truth = {r.source_id: r for r in load_truth(devset)}
    docs = [json.loads(line) for line in (devset / "docs.jsonl").open(encoding="utf-8")]
    clean = [(truth[d["id"]], scrub_timestamps(repair(d["text"]))[0]) for d in docs if not truth[d["id"]].defects]
    texts = [text for _, text in clean]
    genres = np.array([f"{r.lang}/{r.genre}" for r, _ in clean])
    signals = compute_signals(texts, spam_matcher(tuple(cfg.spam_patterns)))
    accepted = [d.lang if d.accepted else None for d in decide_languages(texts, cfg.lid)]
    langs = [a or "none" for a in accepted]
    dropped: dict[str, Counter] = defaultdict(Counter)
    for genre in np.unique(genres):
        rows = genres == genre
        dropped["lang"][genre] = sum(a is None for a, row in zip(accepted, rows, strict=True) if row)
    for rule in build_rules(cfg.rules):
        reasons, _ = apply_rules([rule], signals, langs, [None] * len(langs))
        for genre, reason in zip(genres, reasons, strict=True):
            dropped[rule.name][genre] += reason is not None
    sizes = Counter(genres)
    worst = {(rule, genre): n / sizes[genre] for rule, counts in dropped.items() for genre, n in counts.items()
             if n / sizes[genre] > MAX_CLEAN_LOSS}
    assert not worst, worst


# --- the second set: packages disjoint from the first's ----------------------------------------------------

SECOND_SET_GOALS = {"other_lang": 0.99, "spam": 0.95, "mojibake_unrepairable": 0.95, "mojibake_lossy": 0.95,
                    "boilerplate": 0.80}
"""The issue's goals that the second set meets, kept from regressing; its figures against every goal
(clean loss per genre, keep-F1) are in docs/data-stages.md."""


def _build_second(out: Path) -> None:
    cli("-m", "kiln", "devset", str(out), "--devset", "2", "--cache", str(CACHE), timeout=900)


def test_the_second_set_is_deterministic_disjoint_and_keeps_the_goals_it_meets(devset, tmp_path_factory, ray_local):
    second = built_once(tmp_path_factory, "devset2", _build_second)
    again = tmp_path_factory.mktemp("devset2-again")
    _build_second(again)
    summary = json.loads((second / "devset.json").read_text())
    assert json.loads((again / "devset.json").read_text())["sha256"] == summary["sha256"]
    first = json.loads((devset / "devset.json").read_text())
    assert not {name.split("_")[0] for name in summary["packages"]} & {name.split("_")[0] for name in first["packages"]}
    genres = summary["clean_by_genre"]
    assert {g.split("/")[0] for g in genres} == {"en", "zh"} and len(genres) >= 9 and min(genres.values()) >= 40, genres
    truth = load_truth(second)
    assert len({t.lang for t in truth if "other_lang" in t.defects}) >= 9
    assert {t.genre for t in truth if "boilerplate" in t.defects} == {"contents", "front_matter", "index", "licence"}

    data = tmp_path_factory.mktemp("devrun2")
    run_in_process("-m", "stages.ingest", "--data-dir", str(data), "--input", str(second / "docs.jsonl"))
    run_in_process("-m", "stages.clean", "--data-dir", str(data))
    run_in_process("-m", "stages.dedup", "--data-dir", str(data))
    cleaned = score(truth, read_kept_texts(data / "clean"))
    assert {kind: round(cleaned.kind(kind).rate, 3) for kind, goal in SECOND_SET_GOALS.items()
            if cleaned.kind(kind).rate < goal} == {}
    assert cleaned.ad_lines >= 150 and _spam_removed(cleaned) >= MIN_SPAM_REMOVED
    assert cleaned.kind("spam_lines").rate >= 1 - MAX_CLEAN_LOSS
    _assert_personal_data_gone(cleaned)
    deduped = score(truth, read_kept_texts(data / "dedup"))
    assert deduped.dup_groups["exactly_one"] >= 0.95 * deduped.dup_groups["groups"]
    assert deduped.keep_f1 >= MIN_KEEP_F1
