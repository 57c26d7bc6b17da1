"""Typed configuration: strict sections, YAML layers and ``--set`` overrides, errors naming key and file.

The data stages' :class:`KilnConfig` lives here; the trainer composes its own sections on the same loader.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from common.categories import CATEGORIES, UNKNOWN_CATEGORY
from common.errors import ConfigError
from common.signal_names import SIGNAL_NAMES

REPO_ROOT = Path(__file__).resolve().parent.parent
# The shipped configs: the repository's configs/, or KILN_CONFIG_DIR where Kiln is installed as a package
# (Dockerfile.ascend: the wheel in site-packages, configs/ in /opt/kiln).
CONFIG_DIR = Path(os.environ.get("KILN_CONFIG_DIR") or REPO_ROOT / "configs")
DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"


class Section(BaseModel):
    """Base for every config section: unknown keys are errors, values are type-checked strictly."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def replace(self, **changes: Any) -> Self:
        """A validated copy with ``changes``."""
        return self.model_validate({**dict(self), **changes})


M = TypeVar("M", bound=BaseModel)


def _known_signal(signal: str, known: Sequence[str]) -> str:
    """``signal`` when it is one of the ``known`` columns, else a ValueError listing them."""
    if signal not in known:
        raise ValueError(f"unknown signal {signal!r} (known: {', '.join(known)})")
    return signal


class RayConfig(Section):
    address: str | None = None
    num_cpus: int | None = Field(default=None, ge=1)
    object_store_memory_mb: int | None = Field(default=None, ge=64)
    # stage -> custom Ray resource each of its work units requests (one unit of it per task), so
    # that an autoscaling cluster grows exactly the worker group that declares that resource
    stage_resources: dict[str, str] = Field(default_factory=lambda: {"clean": "clean"})
    # ask for a stage resource even while no node declares it (an autoscaler adds such nodes on demand)
    scale_on_demand: bool = False
    # seconds tasks may wait while no node of the cluster could ever run them before the stage fails
    unschedulable_timeout_s: float = Field(default=60.0, gt=0)
    task_retries: int = Field(default=3, ge=0)


class DemoConfig(Section):
    n_docs: int = Field(default=20000, ge=50)
    seed: int = 1234


FieldName = Annotated[str, Field(min_length=1)]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


class FieldMap(Section):
    text: FieldName = "text"
    id: FieldName = "id"
    url: FieldName = "url"
    source: FieldName = "source"
    category: FieldName = "category"


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
    input: list[str] = Field(default_factory=list)
    fields: FieldMap = FieldMap()
    meta_fields: list[str] = Field(default_factory=lambda: ["title"])
    source_categories: dict[str, str] = Field(default_factory=dict)
    url_categories: dict[str, str] = Field(default_factory=dict)
    default_url_categories: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_URL_CATEGORIES))
    shard_max_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    batch_rows: int = Field(default=4096, ge=1)
    max_doc_bytes: int = Field(default=10 * 1024 * 1024, ge=1)
    skip_bad_files: bool = False
    input_fingerprint: Literal["sampled", "sha256"] = "sampled"

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


class LidConfig(Section):
    model_path: str | None = None
    thresholds: dict[str, Fraction] = Field(default_factory=lambda: {"zh": 0.5, "en": 0.65})
    lead_min_score: Fraction = 0.3
    lead_ratio: float = Field(default=8.0, ge=1.0)
    scripts: dict[str, list[str]] = Field(default_factory=lambda: {"zh": ["Hani", "Bopo"], "en": ["Latn"]})
    min_target_script_share: Fraction = 0.5

    @model_validator(mode="after")
    def _every_language_has_scripts(self) -> LidConfig:
        missing = sorted(set(self.thresholds) - set(self.scripts))
        if missing:
            raise ValueError(f"scripts has no entry for {', '.join(missing)}: list the ISO 15924 codes of the "
                             "scripts each language is written in (e.g. fr: [Latn], ru: [Cyrl])")
        return self


class RuleConfig(Section):
    """Drop a document when its ``signal`` is below ``min`` or above ``max`` for its language.

    ``min``/``max`` map a language (or ``"*"`` for any) to a threshold; a language with no
    entry and no ``"*"`` is not judged by the rule.
    """

    signal: str
    min: dict[str, float] = Field(default_factory=dict)
    max: dict[str, float] = Field(default_factory=dict)
    enabled: bool = True

    @field_validator("signal")
    @classmethod
    def _signal_exists(cls, signal: str) -> str:
        return _known_signal(signal, SIGNAL_NAMES)

    @model_validator(mode="after")
    def _bounds_ordered(self) -> RuleConfig:
        for lang in set(self.min) & set(self.max):
            if self.min[lang] > self.max[lang]:
                raise ValueError(f"min {self.min[lang]:g} is above max {self.max[lang]:g} for {lang!r}: "
                                 "the rule would drop every document")
        return self


def _rule(signal: str, min: dict | None = None, max: dict | None = None) -> RuleConfig:
    return RuleConfig(signal=signal, min=min or {}, max=max or {})


DEFAULT_RULES: dict[str, RuleConfig] = {
    "too_short": _rule("q_tokens", min={"*": 20}),
    "mojibake": _rule("q_mojibake_frac", max={"*": 0.002}),
    "mojibake_marks": _rule("q_mojibake_marks", max={"*": 0}),
    "mojibake_lost": _rule("q_lost_char_frac", max={"*": 0.005}),
    "mojibake_han": _rule("q_rare_han_frac", max={"*": 0.25}),
    "symbol_runs": _rule("q_symbol_run_frac", max={"*": 0.1}),
    "decorative_symbols": _rule("q_decorative_frac", max={"*": 0.05}),
    "spam": _rule("q_spam_line_frac", max={"*": 0.3}),
    "code_stubs": _rule("q_stub_frac", max={"*": 0.5}),
    "navigation": _rule("q_nav_line_frac", max={"*": 0.85}),
    "licence_page": _rule("q_licence_sentence_frac", max={"*": 0.25}),
    "dup_lines": _rule("q_dup_line_frac", max={"en": 0.3, "zh": 0.287}),
    "dup_line_chars": _rule("q_dup_line_char_frac", max={"en": 0.2, "zh": 0.2}),
    "top2gram": _rule("q_top2gram_frac", max={"en": 0.3}),
    "top3gram": _rule("q_top3gram_frac", max={"en": 0.3}),
    "top4gram": _rule("q_top4gram_frac", max={"en": 0.3, "zh": 0.35}),
    **{f"dup{n}gram": RuleConfig(signal=f"q_dup{n}gram_frac", max={"en": limit}, enabled=False)
       for n, limit in ((5, 0.22), (6, 0.2), (7, 0.18), (8, 0.16), (9, 0.15))},
    "dup10gram": _rule("q_dup10gram_frac", max={"en": 0.75, "zh": 0.75}),
    "mean_word_length": _rule("q_mean_word_len", min={"en": 3}, max={"en": 10}),
    "symbol_word_ratio": _rule("q_symbol_word_ratio", max={"en": 0.1}),
    "bullet_lines": _rule("q_bullet_line_frac", max={"*": 0.9}),
    "ellipsis_lines": _rule("q_ellipsis_line_frac", max={"*": 0.3}),
    "stop_words": _rule("q_stop_words", min={"en": 2, "zh": 2}),
    "han_share": _rule("q_han_frac", min={"zh": 0.1}),
}

DEFAULT_SPAM_PATTERNS = [
    "加微信", "微信号", "加v", "扫码", "扫一扫", "二维码", "关注公众号", "联系电话", "客服热线", "咨询热线",
    "qq群", "qq号", "代开发票", "免费领取", "限时优惠", "限时抢购", "立即购买", "点击购买", "点击领取", "包邮",
    "日赚", "月入", "刷单", "博彩", "娱乐城", "开户送", "招商加盟", "代理加盟", "优惠券", "vx[:：]", "加vx",
    "v信", "薇信", "威信", "微信同号", "私聊", "非诚勿扰", "欢迎来电", "欢迎致电", "24小时在线", "日结", "兼职",
    "招募代理", "一件代发", "货源", "高仿", "a货", "原单", "厂家直销", "全网最低", "假一赔", "正品保证",
    "无效退款", "保过", "提分", "免费试听", "名额有限", "先到先得", "彩金", "百家乐", "时时彩", "六合彩",
    "真人视讯", "返水", "注册即送", "注册送", "提款", "无抵押", "无担保", "秒批", "放款", "下款", "黑户",
    "办证", "刻章", "代开", "首页排名", "上首页", "seo优化", "网站优化", "网站推广", "1[3-9]\\d{9}",
    "qq[:：]\\s*\\d{5,}", "click here", "buy now", "order now", "order today", "limited[- ]time offer",
    "free shipping", "act now", "call now", "sign up now", "subscribe now", "earn \\$", "from home",
    "no credit check", "bad credit", "casino", "free spins", "lowest prices?", "promo code", "discount code",
    "\\d+% off", "money[- ]back guarantee", "risk[- ]free", "100% free", "best price", "no prescription",
    "without (?:a )?prescription", "verifiable", "dropshipping", "wholesale", "whatsapp", "telegram",
    "reply stop", "unsubscribe", "satisfaction guaranteed", "factory direct", "discreet",
    "\\$\\d+ (?:a|per) (?:day|week)", "no experience (?:needed|required)", "click the link",
    "claim your (?:reward|prize)", "you have been selected", "gift card",
]


class LineFilterConfig(Section):
    """Ad, contact and promotion lines (stages/clean/lines.py), and lines repeated across a site's or source's
    documents (stages/clean/repeated_lines.py), removed from the documents the rules keep."""

    enabled: bool = True
    max_ad_share: Fraction = 0.5
    contact_line_words: int = Field(default=4, ge=0)
    ad_block_lines: int = Field(default=3, ge=1)
    ad_copy_words: int = Field(default=25, ge=0)
    repeated_min_documents: int = Field(default=5, ge=2)
    repeated_min_share: Fraction = 0.2
    repeated_min_words: float = Field(default=3, ge=1)


class CleanConfig(Section):
    repair: bool = True
    scrub_timestamps: bool = True
    lid: LidConfig = LidConfig()
    spam_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_SPAM_PATTERNS))
    line_filters: LineFilterConfig = LineFilterConfig()
    rules: dict[str, RuleConfig] = Field(default_factory=lambda: dict(DEFAULT_RULES))
    batch_rows: int = Field(default=512, ge=1)
    examples_per_rule: int = Field(default=5, ge=0)

    @field_validator("spam_patterns")
    @classmethod
    def _valid_patterns(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"{pattern!r} is not a valid regular expression ({err})") from None
            if pattern != pattern.lower() and not re.search(r"\\[A-Z]", pattern):
                raise ValueError(f"{pattern!r} has upper-case letters; patterns match lowercased text")
        return patterns


class DedupConfig(Section):
    num_perm: int = Field(default=128, ge=16)
    shingle_size: int = Field(default=5, ge=1)
    bands: int = Field(default=16, ge=1)
    rows: int = Field(default=8, ge=1)
    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    partitions: int = Field(default=16, ge=1)
    category_priority: list[str] = Field(default_factory=lambda: [*CATEGORIES, UNKNOWN_CATEGORY])
    quality_signal: str = "lang_score"
    seed: int = 1

    @field_validator("quality_signal")
    @classmethod
    def _known_quality_signal(cls, signal: str) -> str:
        return _known_signal(signal, ("lang_score", *SIGNAL_NAMES))

    @model_validator(mode="after")
    def _bands_fit(self) -> DedupConfig:
        if self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands × rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        unknown = set(self.category_priority) - {*CATEGORIES, UNKNOWN_CATEGORY}
        if unknown:
            raise ValueError(f"category_priority has unknown categories {sorted(unknown)}")
        return self


class CategoryClassifierConfig(Section):
    enabled: bool = False
    threshold: Fraction = 0.5
    held_out_fraction: float = Field(default=0.1, gt=0.0, lt=1.0)
    labelled_sample: str | None = None
    default_model: str | None = None
    min_labelled_per_category: int = Field(default=20, ge=1)
    max_examples_per_category: int = Field(default=5000, ge=1)
    max_chars: int = Field(default=2000, ge=16)
    epochs: int = Field(default=25, ge=1)
    learning_rate: float = Field(default=0.5, gt=0.0)
    word_ngrams: int = Field(default=2, ge=1, le=5)
    dim: int = Field(default=32, ge=2)
    seed: int = 1234


class MixConfig(Section):
    category_weights: dict[str, Annotated[float, Field(ge=0.0)]] = Field(default_factory=lambda: {
        "academic": 3.0, "tech_docs": 2.0, "encyclopedia": 2.0, "news": 1.0, "literature": 1.0, "dialogue": 1.0})
    alpha: float = Field(default=0.7, gt=0.0, le=1.0)
    max_epochs: float = Field(default=4.0, gt=0.0)
    budget_tokens: int | None = Field(default=None, ge=1)
    budget_documents: int | None = Field(default=None, ge=1)
    unknown_category: str = "drop"
    max_unknown_fraction: Fraction = 0.5
    classifier: CategoryClassifierConfig = CategoryClassifierConfig()
    validation_fraction: float = Field(default=0.01, ge=0.0, lt=1.0)
    token_column: str = "q_tokens"
    seed: int = 1234

    @field_validator("token_column")
    @classmethod
    def _known_token_column(cls, column: str) -> str:
        return _known_signal(column, SIGNAL_NAMES)

    @field_validator("category_weights")
    @classmethod
    def _some_weight(cls, weights: dict[str, float]) -> dict[str, float]:
        if not any(weights.values()):
            raise ValueError("at least one category needs a weight above 0")
        return weights

    @model_validator(mode="after")
    def _consistent(self) -> MixConfig:
        unknown = set(self.category_weights) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"category_weights has unknown categories {sorted(unknown)}")
        if self.unknown_category not in (*CATEGORIES, "drop"):
            raise ValueError(f"unknown_category must be 'drop' or one of {list(CATEGORIES)}")
        if self.budget_tokens is not None and self.budget_documents is not None:
            raise ValueError("set budget_tokens or budget_documents, not both")
        return self


class TokenizeConfig(Section):
    tokenizer_path: str | None = None
    vocab_size: int = Field(default=32000, ge=258, le=65536)
    sample_bytes: int = Field(default=50 * 1024 * 1024, ge=1)
    min_sample_bytes: int = Field(default=64 * 1024, ge=0)
    seq_len: int = Field(default=2048, ge=1)
    seed: int = 1234
    batch_docs: int = Field(default=1024, ge=1)
    stream_max_documents: int = Field(default=10_000_000, ge=1)
    encoder: Literal["auto", "hf", "tiktoken"] = "auto"


BUILT_IN_ARMS = {"raw": "ingest", "clean": "clean", "dedup": "dedup", "full": "mix"}


class ExtraArmConfig(Section):
    """An ablation arm of one's own: the pipeline rerun with ``set`` overrides, trained on ``stage``'s output."""

    stage: Literal["ingest", "clean", "dedup", "mix"] = "mix"
    set: list[str] = Field(default_factory=list)


class AblationConfig(Section):
    arms: list[str] = Field(default_factory=lambda: list(BUILT_IN_ARMS))
    extra_arms: dict[str, ExtraArmConfig] = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    tokens_per_run: int = Field(default=655_360, ge=1)
    train_config: str = "configs/ablation-train.yaml"
    vocab_size: int = Field(default=8192, ge=258, le=65536)
    tokenizer_sample_bytes: int = Field(default=8 << 20, ge=1)
    heldout_documents: int = Field(default=200, ge=1)
    heldout_path: str | None = None
    mc_path: str | None = None
    eval_points: int = Field(default=5, ge=1)
    jobs: int = Field(default=2, ge=1)
    seed: int = 1234

    @model_validator(mode="after")
    def _arms_known(self) -> AblationConfig:
        unknown = [a for a in self.arms if a not in BUILT_IN_ARMS]
        if unknown:
            raise ValueError(f"arms {unknown} are not built in ({list(BUILT_IN_ARMS)}); declare your own under "
                             "extra_arms")
        clash = sorted(set(self.extra_arms) & set(BUILT_IN_ARMS))
        if clash:
            raise ValueError(f"extra_arms {clash} reuse the name of a built-in arm")
        if "raw" not in self.arms:
            raise ValueError("arms must include raw: every other arm is compared with it")
        if len(set(self.arms)) != len(self.arms):
            raise ValueError(f"arms {self.arms} name an arm twice")
        badly_named = [name for name in self.extra_arms if not re.fullmatch(r"[A-Za-z0-9_]+", name)]
        if badly_named:
            raise ValueError(f"extra_arms {badly_named}: a name is letters, digits and _ (it names folders)")
        if len(self.seeds) < 3 or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds {self.seeds}: at least 3 different seeds, each once, give each arm its interval")
        return self


class KilnConfig(Section):
    data_dir: str = "data"
    ray: RayConfig = RayConfig()
    demo: DemoConfig = DemoConfig()
    ingest: IngestConfig = IngestConfig()
    clean: CleanConfig = CleanConfig()
    dedup: DedupConfig = DedupConfig()
    mix: MixConfig = MixConfig()
    tokenize: TokenizeConfig = TokenizeConfig()
    ablation: AblationConfig = AblationConfig()

    def section(self, name: str) -> Section:
        """Return the config section of one stage by name."""
        return getattr(self, name)


def _merge(base: dict, layer: dict, origin: str, origins: dict[str, str], whole: Collection[str],
           prefix: str = "") -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        below = base.get(key)
        if isinstance(value, dict) and below is not None and not isinstance(below, dict):
            raise ConfigError(f"invalid configuration:\n  {origins.get(dotted, 'defaults')}: {dotted}: "
                              f"expected a mapping of keys, got {below!r} ({origin} sets keys inside it)")
        if isinstance(value, dict) and isinstance(below, dict) and key not in whole:
            _merge(below, value, origin, origins, whole, dotted + ".")
        else:
            base[key] = value
            origins[dotted] = origin


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}")
    return data


def _parse_override(text: str, example: str) -> dict:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE, e.g. --set {example}")
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {text!r}: the value is not valid YAML ({err})") from None
    node: dict = {}
    cursor = node
    parts = key.split(".")
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = value
    return node


def _origin_of(loc: tuple, origins: Mapping[str, str], where: str) -> str:
    """The layer that set the key at ``loc`` (or the mapping above it) and, for an error about a whole
    mapping, the layers that set keys inside it; ``where`` when no layer did."""
    parts = [str(p) for p in loc]
    setters: dict[str, None] = {}
    for end in range(len(parts), 0, -1):
        if (above := ".".join(parts[:end])) in origins:
            setters[origins[above]] = None
            break
    inside = ".".join(parts) + "." if parts else ""
    setters.update(dict.fromkeys(origin for key, origin in origins.items() if key.startswith(inside)))
    return ", ".join(setters) or where


def _message(problem: Mapping[str, Any], hint: str | None) -> str:
    """Pydantic's message for one problem: a validator's own text, and the rejected value when it is a scalar."""
    if problem["type"] == "extra_forbidden":
        return f"unknown key ({hint})" if hint else "unknown key"
    message = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
    value = problem.get("input")
    if problem["type"] != "missing" and (value is None or isinstance(value, str | int | float)):
        message += f", got {value!r}"
    return message


def validate(model: type[M], data: dict, origins: Mapping[str, str] | None = None, *, where: str = "defaults",
             hint: str | None = None) -> M:
    """``model`` built from ``data``, or a ConfigError with one line per problem: ``origin: key: message``.

    ``origins`` maps dotted keys to the layer that set them (``where`` for the rest); ``hint`` follows
    "unknown key" (where to look up the valid keys).
    """
    try:
        return model.model_validate(data)
    except ValidationError as err:
        lines = [f"{_origin_of(problem['loc'], origins or {}, where)}: "
                 f"{'.'.join(str(p) for p in problem['loc']) or '<top level>'}: {_message(problem, hint)}"
                 for problem in err.errors()]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines)) from None


def load_layers(model: type[M], paths: Sequence[Path], overrides: Sequence[str], *, example: str,
                hint: str | None = None, whole: Collection[str] = ()) -> M:
    """Merge the YAML files ``paths`` in order, then the ``--set KEY=VALUE`` ``overrides``, and validate.

    Later layers win key by key; a mapping merges into the one below it unless its key is in ``whole``.
    Errors name each bad key and the file or override that set it; ``example`` is an override shown
    when one is malformed.
    """
    merged: dict = {}
    origins: dict[str, str] = {}
    for path in paths:
        _merge(merged, _read_yaml(Path(path)), str(path), origins, whole)
    for text in overrides:
        _merge(merged, _parse_override(text, example), f"--set {text}", origins, whole)
    return validate(model, merged, origins, hint=hint)


def load_config(paths: list[Path] | None = None, overrides: list[str] | None = None) -> KilnConfig:
    """Load configs/default.yaml, then each file in ``paths``, then ``--set`` overrides, and validate."""
    return load_layers(KilnConfig, [DEFAULT_CONFIG, *(paths or [])], overrides or [],
                       example="ingest.batch_rows=1024", hint="see configs/default.yaml for the valid keys",
                       whole={"source_categories", "default_url_categories"})


def fingerprint(payload: Any) -> str:
    """Stable sha256 of a JSON-serialisable payload (sorted keys), used to key resume state."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
