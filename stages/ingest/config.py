"""The ingest stage's configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from common.categories import CATEGORIES, UNKNOWN_CATEGORY
from common.config_loader import FieldName, Section


class FieldMap(Section):
    """Which field of an input record holds what."""

    text: FieldName = "text"
    """Field holding the document's text."""
    id: FieldName = "id"
    """Field holding its id, kept as source_id (records without one get <file>:<line>)."""
    url: FieldName = "url"
    """Field holding its URL (for the URL category rules)."""
    source: FieldName = "source"
    """Field holding its source name (default: the file's name)."""
    category: FieldName = "category"
    """Field holding its category, when the records carry one."""


DEFAULT_URL_CATEGORIES: dict[str, str] = {
    "arxiv.org": "academic", "*.arxiv.org": "academic", "biorxiv.org": "academic", "medrxiv.org": "academic",
    "openreview.net": "academic", "aclanthology.org": "academic", "pubmed.ncbi.nlm.nih.gov": "academic",
    "ncbi.nlm.nih.gov/pmc/*": "academic", "*.semanticscholar.org": "academic", "dl.acm.org": "academic",
    "ieeexplore.ieee.org": "academic", "link.springer.com": "academic", "nature.com/articles/*": "academic",
    "sciencedirect.com/science/*": "academic", "*.cnki.net": "academic", "wanfangdata.com.cn": "academic",
    "*.wanfangdata.com.cn": "academic", "chinaxiv.org": "academic",
    "docs.python.org": "tech_docs", "*.readthedocs.io": "tech_docs", "developer.mozilla.org": "tech_docs",
    "learn.microsoft.com": "tech_docs", "docs.microsoft.com": "tech_docs", "man7.org": "tech_docs",
    "debian.org/doc/*": "tech_docs", "docs.oracle.com": "tech_docs", "kubernetes.io/docs/*": "tech_docs",
    "kubernetes.io/zh-cn/docs/*": "tech_docs", "docs.docker.com": "tech_docs", "pytorch.org/docs/*": "tech_docs",
    "mindspore.cn/docs/*": "tech_docs", "hiascend.com/document/*": "tech_docs", "docs.aws.amazon.com": "tech_docs",
    "cloud.google.com/*/docs/*": "tech_docs", "developer.android.com": "tech_docs",
    "*.cppreference.com": "tech_docs", "docs.rs": "tech_docs", "doc.rust-lang.org": "tech_docs",
    "go.dev/doc/*": "tech_docs", "pkg.go.dev": "tech_docs", "cloud.tencent.com/document/*": "tech_docs",
    "help.aliyun.com": "tech_docs",
    "*.wikipedia.org": "encyclopedia", "baike.baidu.com": "encyclopedia", "baike.sogou.com": "encyclopedia",
    "baike.com": "encyclopedia", "britannica.com": "encyclopedia", "*.britannica.com": "encyclopedia",
    "*.wiktionary.org": "encyclopedia", "scholarpedia.org": "encyclopedia", "zh.wikihow.com": "encyclopedia",
    "wikihow.com": "encyclopedia",
    "reuters.com": "news", "apnews.com": "news", "bbc.com": "news", "bbc.co.uk": "news", "nytimes.com": "news",
    "theguardian.com": "news", "cnn.com": "news", "npr.org": "news", "bloomberg.com": "news", "ft.com": "news",
    "wsj.com": "news", "*.xinhuanet.com": "news", "xinhuanet.com": "news", "news.cn": "news",
    "*.people.com.cn": "news", "people.com.cn": "news", "*.chinadaily.com.cn": "news", "chinadaily.com.cn": "news",
    "chinanews.com.cn": "news", "thepaper.cn": "news", "*.caixin.com": "news", "news.sina.com.cn": "news",
    "news.163.com": "news", "news.qq.com": "news", "*.cctv.com": "news", "zaobao.com": "news",
    "rfi.fr/cn/*": "news", "bbc.com/zhongwen/*": "news",
    "gutenberg.org": "literature", "*.gutenberg.org": "literature", "*.wikisource.org": "literature",
    "ctext.org": "literature", "poetryfoundation.org": "literature", "archiveofourown.org": "literature",
    "fanfiction.net": "literature", "gushiwen.cn": "literature", "*.gushiwen.cn": "literature",
    "jjwxc.net": "literature", "*.jjwxc.net": "literature", "qidian.com": "literature",
    "*.qidian.com": "literature",
    "reddit.com": "dialogue", "*.reddit.com": "dialogue", "stackoverflow.com": "dialogue",
    "*.stackexchange.com": "dialogue", "superuser.com": "dialogue", "serverfault.com": "dialogue",
    "askubuntu.com": "dialogue", "quora.com": "dialogue", "zhihu.com": "dialogue", "*.zhihu.com": "dialogue",
    "tieba.baidu.com": "dialogue", "zhidao.baidu.com": "dialogue", "v2ex.com": "dialogue",
    "douban.com/group/*": "dialogue", "segmentfault.com/q/*": "dialogue",
}


class IngestConfig(Section):
    """The ingest stage: raw files (JSONL, Parquet, text) to Arrow document shards."""

    input: list[str] = Field(default_factory=list)
    """Files, folders or globs to read (`--input` on the command line overrides this). Formats by extension:
    .jsonl/.ndjson/.json (one JSON object per line; plain, .gz, .zst), .parquet, and .txt (one document per file;
    its folder name is its source)."""
    fields: FieldMap = FieldMap()
    """Which input field holds what. The input's own id is kept as `source_id`; records without one get
    "<file>:<line>" instead."""
    meta_fields: list[str] = Field(default_factory=lambda: ["title"])
    """Extra input fields copied into the document's `meta` JSON when present."""
    source_categories: dict[str, str] = Field(default_factory=dict)
    """Source name (exact, or a glob pattern) -> category. It wins over a category field in the records. A record
    whose source is unmapped and whose category field is missing or not one of academic, tech_docs, encyclopedia,
    news, literature, dialogue gets category "unknown". A record without a source field gets its file name
    (without format suffixes) as source, or its folder name for .txt files."""
    url_categories: dict[str, str] = Field(default_factory=dict)
    """URL rules: "host[/path]" -> category, for records whose source is unmapped and whose category field is
    missing (or not a category). Host patterns are globs ("*.example.org" also matches example.org; "www." is
    ignored), paths too ("debian.org/doc/*"). Your rules go here and are layered over default_url_categories: the
    same pattern here replaces the shipped one (map it to unknown to switch it off); among all rules the most
    specific that matches wins (one with a path, then an exact host, then the longer pattern)."""
    default_url_categories: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_URL_CATEGORIES))
    """The shipped URL rules: well-known Chinese and English sites. A layer that sets this key replaces the whole
    list; {} switches every shipped rule off."""
    shard_max_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    """Target size of a work unit (and so of an output shard), in input bytes. Plain JSONL and Parquet files are
    split at line / row-group boundaries; a .gz or .zst file is one unit."""
    batch_rows: int = Field(default=4096, ge=1)
    """Documents per Arrow record batch inside a shard."""
    max_doc_bytes: int = Field(default=10 * 1024 * 1024, ge=1)
    """Documents larger than this (UTF-8 bytes) are dropped as `oversize`."""
    skip_bad_files: bool = False
    """false: an unreadable file (truncated .gz/.zst, broken Parquet footer) stops the stage with an error naming
    it. true: it is skipped and counted as one `bad_file` record."""
    input_fingerprint: Literal["sampled", "sha256"] = "sampled"
    """How a rerun tells whether an input file changed: sampled (its size and a sha256 of 16 blocks of 64 KiB spread
    over it, the whole file when smaller than 1 MiB: cheap, but an edit that keeps the size and falls between the
    blocks of a larger file is not seen) or sha256 (the whole file, read once more at plan time)."""

    @field_validator("source_categories")
    @classmethod
    def _known_categories(cls, mapping: dict[str, str]) -> dict[str, str]:
        for pattern, category in mapping.items():
            if category not in CATEGORIES:
                raise ValueError(f"{pattern!r} maps to {category!r}, not one of {list(CATEGORIES)}")
        return mapping

    @field_validator("url_categories", "default_url_categories")
    @classmethod
    def _known_url_categories(cls, mapping: dict[str, str]) -> dict[str, str]:
        for pattern, category in mapping.items():
            if category not in (*CATEGORIES, UNKNOWN_CATEGORY):
                raise ValueError(f"{pattern!r} maps to {category!r}, not one of {[*CATEGORIES, UNKNOWN_CATEGORY]}")
        return mapping
