"""Categories from URL rules: the shipped list, user rules layered on top, precedence, and an ingest run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.config import load_config
from common.errors import ConfigError
from common.manifest import require_manifest
from common.shards import iter_batches
from stages.ingest.records import category_for
from stages.ingest.url_rules import UrlCategories

DEFAULTS = UrlCategories.from_config(load_config().ingest)


@pytest.mark.parametrize("url,category", [
    ("https://en.wikipedia.org/wiki/Yangtze_River", "encyclopedia"),
    ("https://zh.wikipedia.org/wiki/长江", "encyclopedia"),
    ("https://baike.baidu.com/item/长江", "encyclopedia"),
    ("https://arxiv.org/abs/2401.00001", "academic"),
    ("https://docs.python.org/3/library/json.html", "tech_docs"),
    ("https://www.debian.org/doc/manuals/debian-reference/ch01.en.html", "tech_docs"),
    ("http://www.people.com.cn/n1/2024/0101/c1001.html", "news"),
    ("https://www.reuters.com/world/asia/", "news"),
    ("https://www.gutenberg.org/ebooks/1342", "literature"),
    ("https://tieba.baidu.com/p/123", "dialogue"),
    ("https://stackoverflow.com/questions/1", "dialogue"),
])
def test_well_known_sites_have_their_category(url: str, category: str):
    assert DEFAULTS.category(url) == category


@pytest.mark.parametrize("url", ["https://www.debian.org/News/2024", "https://kubernetes.io/blog/",
                                 "https://blog.example.org/post", "not a url", "https://[broken", "", None])
def test_other_pages_and_bad_urls_stay_unknown(url):
    assert DEFAULTS.category(url) == "unknown"


def test_user_rules_extend_override_and_switch_off_the_defaults():
    cfg = load_config([], ['ingest.url_categories={"blog.example.org": "literature", '
                           '"*.wikipedia.org": "unknown", "docs.python.org": "academic", '
                           '"example.org/news/*": "news"}'])
    rules = UrlCategories.from_config(cfg.ingest)
    assert rules.category("https://blog.example.org/a") == "literature"
    assert rules.category("https://en.wikipedia.org/wiki/X") == "unknown"
    assert rules.category("https://docs.python.org/3/") == "academic"
    assert rules.category("https://example.org/news/today") == "news"  # a path rule beats the host-only one
    assert rules.category("https://arxiv.org/abs/1") == "academic"  # the other defaults stay


def test_the_shipped_rules_switch_off_as_a_whole_and_user_rules_stay(tmp_path: Path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("ingest:\n  default_url_categories: {}\n  url_categories:\n    intranet.example.com: tech_docs\n")
    rules = UrlCategories.from_config(load_config([mine]).ingest)
    assert rules.category("https://en.wikipedia.org/wiki/X") == "unknown"
    assert rules.category("https://arxiv.org/abs/1") == "unknown"
    assert rules.category("https://intranet.example.com/wiki") == "tech_docs"
    only = load_config([], ['ingest.default_url_categories={"arxiv.org": "academic"}']).ingest
    assert only.default_url_categories == {"arxiv.org": "academic"}  # a layer replaces the shipped list


def test_a_rule_with_an_unknown_category_is_a_config_error():
    for key in ("url_categories", "default_url_categories"):
        with pytest.raises(ConfigError, match=f"ingest.{key}"):
            load_config([], [f'ingest.{key}={{"example.org": "blogs"}}'])


def test_source_mapping_then_record_field_then_url():
    url = "https://en.wikipedia.org/wiki/X"
    assert category_for("feed", None, {"feed": "news"}, url, DEFAULTS) == "news"
    assert category_for("feed", "literature", {}, url, DEFAULTS) == "literature"
    assert category_for("feed", "blogs", {}, url, DEFAULTS) == "encyclopedia"
    assert category_for("feed", None, {}, "https://example.org/", DEFAULTS) == "unknown"


@pytest.mark.slow
def test_ingest_gives_uncategorized_records_their_url_category(tmp_path: Path, in_process):
    records = [{"id": "a", "text": "The Yangtze is the longest river in Asia.", "url": "https://en.wikipedia.org/wiki/Y"},
               {"id": "b", "text": "长江是中国最长的河流。", "url": "https://news.cn/2024/a.html"},
               {"id": "c", "text": "A page nobody has mapped.", "url": "https://example.org/x"},
               {"id": "d", "text": "A record with its own category.", "url": "https://arxiv.org/abs/1",
                "category": "literature"}]
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    in_process("-m", "stages.ingest", "--data-dir", str(tmp_path / "data"), "--input", str(raw))
    stage = tmp_path / "data" / "ingest"
    got = {}
    for info in require_manifest(stage).shards:
        for batch in iter_batches(stage, info):
            got.update(zip(batch.column("source_id").to_pylist(), batch.column("category").to_pylist(), strict=True))
    assert got == {"a": "encyclopedia", "b": "news", "c": "unknown", "d": "literature"}
