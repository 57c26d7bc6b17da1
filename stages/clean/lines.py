"""Line filters: ad, contact and promotion lines removed from the documents the rules keep.

A line is judged by what kinds of thing it holds, never by phrases of one source:

- ``contact``: a Chinese mobile number, a phone number after a word that announces one ("电话",
  "热线", "phone", "call", "text", ...), or an instant-messaging handle (WeChat, QQ, VX, Telegram,
  WhatsApp, Skype, then ":" and an id, or an id with a digit);
- ``link``: a URL (``http://``, ``https://``, ``www.``) or an e-mail address;
- ``offer``: a price, a discount or something free (``$12``, ``¥99``, ``99元``, ``20% off``, ``5折``,
  ``free``, ``免费``, ``discount``, ``优惠``, a promo code);
- ``call``: a call to act at the start of a clause (``Buy``, ``Call``, ``Click``, ``Follow``,
  ``Join``, ``Sign up``, ``Subscribe``, ``添加``, ``关注``, ``咨询``, ``扫码``, ``转发``, ...);
- a configured spam pattern (``clean.spam_patterns``).

A line is an ``ad`` line when it holds a match of the spam patterns beside a contact or a link, or
two beside an offer or a call (one match alone is too common: "货源充足" in a news report); or a
contact beside an offer, a call or at most ``contact_line_words`` other words (a line that is a
phone number or a handle); or a link beside a call and at most ``contact_line_words`` other words
("Order online: www.example.com/deal", not "Visit https://www.postgresql.org for the latest
release"); or an offer and a call. A document with an ad line carries ads: the other short lines
(at most ``ad_copy_words`` words) of the ad's block (at most ``ad_block_lines`` lines between empty
ones), and its other short lines of an offer, a call or a spam pattern, are ad copy too. A document
whose ad lines hold more than ``max_ad_share`` of its characters is spam as a whole; otherwise its
ad lines are removed, and the rules judge what is left. The numbers are ``clean.line_filters``.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import numba
import numpy as np

from stages.clean.config import LineFilterConfig
from stages.clean.spam import SpamMatcher, SpamScan, text_hits
from stages.clean.textsets import HAN_RE

# The patterns of the kinds; all but _OFFER_RE (whose promo codes are told by their capitals) read lowercased lines.
_PHONE_CUE = r"(?:电话|手机|热线|致电|来电|tel|phone|mobile|call|text|whatsapp|telegram|contact|联系)"
_CONTACT_RE = re.compile(
    r"(?<![\d.])1[3-9]\d{9}(?![\d.])"  # a Chinese mobile number
    rf"|{_PHONE_CUE}[^\n\d+]{{0,12}}(?:\+\d{{1,3}}[ \-]?)?\(?\d{{2,4}}\)?[ \-]?\d{{3,4}}[ \-]?\d{{3,4}}(?![\d.])"
    r"|(?:微信|v信|(?<![a-z0-9])(?:weixin|wechat|vx|qq|telegram|whatsapp|skype))(?:号|群)?\s*(?:id)?\s*[:：]\s*@?[a-z0-9_\-]{5,}"
    r"|(?:微信|weixin|wechat|v信|vx|qq)(?:号|群)?\s*@?[a-z]*\d[a-z0-9_\-]{4,}")
_IM_NAMES = ("微信", "v信", "weixin", "wechat", "vx", "qq", "telegram", "whatsapp", "skype")  # _CONTACT_RE's handles
_DIGIT_RE = re.compile(r"\d")
_LINK_RE = re.compile(r"https?://\S+|\bwww\.[a-z0-9\-]+\.[a-z]{2,}\S*|\b[\w.+\-]+@[a-z0-9\-]+\.[a-z.]{2,}")
_OFFER_RE = re.compile(
    r"[$€£¥￥]\s?\d|\d+(?:\.\d+)?\s?(?:元|块|美元|usd|eur|rmb)\b|\d+\s?%\s?off\b|\d\s?折|[一二三四五六七八九]折"
    r"|(?<!-)\b(?:free|discount|sale|coupon|promo(?:tion)?|deal|cheap|bonus)\b|免费|优惠|折扣|促销|特价|秒杀|包邮|满\d+减"
    r"|\bcode\s+(?-i:(?=[A-Z0-9]{4,}\b)[A-Z]*\d[A-Z0-9]*)",
    re.IGNORECASE)
_CALL_RE = re.compile(
    r"(?:^|(?<=[.!?;:,。！？；：，、]))[^\S\n]*(?:"
    r"(?:buy|order|call|click|tap|join|sign\s+up|subscribe|follow|share|add|contact|dm|text|message|book|register"
    r"|shop|use\s+code|reply|hurry|act\s+now|visit|get\s+(?:your|it|yours))\b"
    r"|(?:购买|订购|点击|关注|添加|加入|联系|咨询|领取|扫码|转发|报名|预订|下单|进群|私信|致电|来电|抢购|限时|名额有限))",
    re.MULTILINE)
# What every contact, link and offer holds, found fast: the words by one compiled scan of a batch, and "@", prices,
# amounts and runs of digits shaped like a phone number by one pass over its code points (_marks). Only the lines
# holding one are read with the patterns above.
_TRIGGER_WORDS = (
    "微信", "v信", "weixin", "wechat", "vx", "qq", "skype", "whatsapp", "telegram", "http", "www", "free", "discount",
    "sale", "coupon", "promo", "deal", "cheap", "bonus", "% off", "%off", "免费", "优惠", "折扣", "促销", "特价", "秒杀",
    "包邮")
_CURRENCY_SIGNS = np.array([ord(c) for c in "$€£¥￥"], dtype=np.uint32)
_AMOUNT_UNITS = np.array([ord(c) for c in "元块折"], dtype=np.uint32)  # after a digit
_CURRENCY_CODES = np.array([[ord(c) for c in code] for code in ("usd", "eur", "rmb")], dtype=np.uint32)
_NUMERALS = np.array([ord(c) for c in "一二三四五六七八九"], dtype=np.uint32)  # before 折
_MIN_PHONE_CHARS = 8
_PHONE_NUMBER_RE = re.compile(r"1[3-9]\d{9}|(?:\d{1,3}[ \-])?\d{2,4}[ \-]\d{3,4}[ \-]?\d{3,6}|0\d{2,3}-\d{7,8}")
_WORD_RE = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class LineVerdict:
    """What the line filters found in one document: the text without its ad lines (the text itself
    when none was found), and the ad lines removed."""

    text: str
    removed: list[str]

    @property
    def ad_share(self) -> float:
        """Characters of the ad lines / characters of the document (line breaks not counted)."""
        removed = sum(map(len, self.removed))
        return removed / max(removed + len(self.text.replace("\n", "")), 1)


def words(text: str) -> float:
    """Words of ``text``: Latin words, and Han characters / 2."""
    return len(_WORD_RE.findall(HAN_RE.sub(" ", text))) + len(HAN_RE.findall(text)) / 2


def _other_words(line: str) -> float:
    """Words of ``line`` beside its contacts and links."""
    return words(_LINK_RE.sub(" ", _CONTACT_RE.sub(" ", line)))


def _ad_lines(lines: list[str], lowered: list[str], candidates: set[int], spam_lines: Counter[int],
              cfg: LineFilterConfig) -> set[int]:
    """The indices of the ad ``lines`` (``lowered``: the same lines lowercased), reading the ``candidates`` (lines
    holding a trigger) and the lines holding a spam pattern (``spam_lines``: line -> matches)."""
    ads = set()
    for i in candidates | spam_lines.keys():
        line, patterns = lowered[i], spam_lines.get(i, 0)
        if not line.strip():
            continue
        # Each pattern runs only where what it needs is present (a digit or an IM name; "http", "www." or "@").
        contact = ((_DIGIT_RE.search(line) is not None or any(name in line for name in _IM_NAMES))
                   and _CONTACT_RE.search(line) is not None)
        offer = _OFFER_RE.search(lines[i]) is not None  # a promo code is told by its capitals
        link = ("http" in line or "www." in line or "@" in line) and _LINK_RE.search(line) is not None
        if not (contact or link or offer or patterns):
            continue
        call = _CALL_RE.search(line) is not None
        if ((patterns and (contact or link or (patterns >= 2 and (offer or call))))
                or (contact and (offer or call)) or (offer and call)
                or ((contact or (link and call)) and _other_words(line) <= cfg.contact_line_words)):
            ads.add(i)
    if not ads:
        return ads
    # A page that carries an ad: the rest of the ad's block, and its other short lines of an offer, a call or a
    # spam pattern, are ad copy too.
    copy = {i for i, line in enumerate(lowered) if line.strip() and i not in ads
            and (i in spam_lines or _OFFER_RE.search(lines[i]) or _CALL_RE.search(line))}
    more = copy | _rest_of_ad_blocks(lines, ads, cfg.ad_block_lines)
    return ads | {i for i in more if words(lines[i]) <= cfg.ad_copy_words}


def _rest_of_ad_blocks(lines: list[str], ads: set[int], block_lines: int) -> set[int]:
    """The other lines of short blocks (at most ``block_lines`` lines between empty ones) that hold an ad
    line: an ad's copy sits beside its contact line ("Get your degree in 6 weeks!" above "Text 138...")."""
    more: set[int] = set()
    start = 0
    while start < len(lines):
        if not lines[start].strip():
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        block = set(range(start, end))
        if end - start <= block_lines and block & ads:
            more |= block
        start = end
    return more - ads


def filter_lines(texts: list[str], spam: SpamMatcher | None, cfg: LineFilterConfig,
                 scan: SpamScan | None = None) -> list[LineVerdict]:
    """Each text's ad lines found and removed (see the module's docstring). Only the lines holding a trigger of a
    contact, a link or an offer, or a spam pattern, are read with the patterns. ``scan``: the spam matcher's scan of
    ``texts``, if the caller has one."""
    scan = scan or (SpamScan.of(texts, spam) if spam is not None else None)
    lowered = scan.lowered if scan is not None else [text.lower() for text in texts]
    triggered: dict[int, list[int]] = defaultdict(list)
    _, hit_text, hit_offset = _trigger_matcher().batch_hits(lowered)
    for d, offset in zip(hit_text.tolist(), hit_offset.tolist(), strict=True):
        triggered[d].append(offset)
    joined = "\0".join(lowered)
    marks, phone_runs = _marks(np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32),
                               _CURRENCY_SIGNS, _AMOUNT_UNITS, _CURRENCY_CODES, _NUMERALS, _MIN_PHONE_CHARS)
    phones = np.array([at for at in phone_runs.tolist() if _PHONE_NUMBER_RE.match(joined, at)], dtype=np.int64)
    marked = np.sort(np.concatenate((marks, phones)))
    starts = np.cumsum([0, *(len(text) + 1 for text in lowered)])
    marked_in = np.searchsorted(starts, marked, side="right") - 1
    for d, offset in zip(marked_in.tolist(), (marked - starts[marked_in]).tolist(), strict=True):
        triggered[d].append(offset)
    verdicts = [LineVerdict(text, []) for text in texts]
    spam_counts, spam_text, spam_offset = (scan.counts, scan.hit_text, scan.hit_offset) if scan else (None, None, None)
    for d in sorted(triggered.keys() | (set(np.flatnonzero(spam_counts).tolist()) if spam is not None else set())):
        lines, lowered_lines = texts[d].split("\n"), lowered[d].split("\n")  # lower() keeps the line breaks
        line_starts = [0]  # of the lowered lines: every offset is one in the lowered text
        for line in lowered_lines[:-1]:
            line_starts.append(line_starts[-1] + len(line) + 1)
        spam_lines: Counter[int] = Counter()
        if spam is not None and spam_counts[d]:
            found = text_hits(d, spam_text, spam_offset).tolist() + spam.other_offsets(lowered[d])
            spam_lines.update(bisect.bisect_right(line_starts, o) - 1 for o in found)
        candidates = {bisect.bisect_right(line_starts, o) - 1 for o in triggered.get(d, [])}
        ads = _ad_lines(lines, lowered_lines, candidates, spam_lines, cfg)
        if ads:
            verdicts[d] = LineVerdict(without_lines(lines, ads), [lines[n] for n in sorted(ads)])
    return verdicts


@numba.njit(cache=True, nogil=True)
def is_digit(c: int) -> bool:
    return 0x30 <= c <= 0x39 or 0xFF10 <= c <= 0xFF19  # ASCII and fullwidth


@numba.njit(cache=True, nogil=True)
def _marks(cp: np.ndarray, currency_signs: np.ndarray, amount_units: np.ndarray, currency_codes: np.ndarray,
           numerals: np.ndarray, min_phone_chars: int) -> tuple[np.ndarray, np.ndarray]:
    """Where lowercased code points hold what an offer or a contact holds: "@", a currency sign before a digit, a
    digit before 元, 块, 折 or a currency code, 满 before a digit, a numeral before 折; and, apart, the first digit of
    each run of digits, spaces and hyphens whose digits span ``min_phone_chars`` or more (a phone number's
    candidates)."""
    marks, runs = [], []
    run_first = run_last = -1
    n = len(cp)
    for i in range(n):
        c = cp[i]
        digit = is_digit(c)
        following = cp[i + 1] if i + 1 < n else 0
        if (c == 0x40 or (following and is_digit(following) and (c == 0x6EE1 or (currency_signs == c).any()))
                or (digit and (amount_units == following).any())
                or (following == 0x6298 and (numerals == c).any())):  # 满 (0x6EE1) before a digit; 折 (0x6298)
            marks.append(i)
        elif digit and i + 3 < n:
            for code in range(len(currency_codes)):
                if cp[i + 1] == currency_codes[code, 0] and cp[i + 2] == currency_codes[code, 1] \
                        and cp[i + 3] == currency_codes[code, 2]:
                    marks.append(i)
        if digit:
            if run_first < 0:
                run_first = i
            run_last = i
        elif c != 0x20 and c != 0x2D:
            if run_first >= 0 and run_last - run_first + 1 >= min_phone_chars:
                runs.append(run_first)
            run_first = -1
    if run_first >= 0 and run_last - run_first + 1 >= min_phone_chars:
        runs.append(run_first)
    return np.array(marks, dtype=np.int64), np.array(runs, dtype=np.int64)


@functools.lru_cache(maxsize=1)
def _trigger_matcher() -> SpamMatcher:
    return SpamMatcher(_TRIGGER_WORDS)


def without_lines(lines: list[str], removed: set[int]) -> str:
    """The text of ``lines`` without the lines ``removed``, and without the empty lines that set a removed
    paragraph apart (the paragraphs around it keep one break between them)."""
    out: list[str] = []
    after_removed_paragraph = False
    for n, line in enumerate(lines):
        if n in removed:
            after_removed_paragraph = not out or not out[-1].strip()
        elif not (after_removed_paragraph and not line.strip()):
            after_removed_paragraph = False
            out.append(line)
    if len(lines) - 1 in removed:
        while out and not out[-1].strip():
            out.pop()
    return "\n".join(out)
