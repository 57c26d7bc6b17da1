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

import numpy as np

from common.config import LineFilterConfig
from stages.clean.spam import SpamMatcher, text_hits
from stages.clean.textsets import HAN_RE

# The patterns of the kinds; all but _OFFER_RE (whose promo codes are told by their capitals) read lowercased lines.
_PHONE_CUE = r"(?:电话|手机|热线|致电|来电|tel|phone|mobile|call|text|whatsapp|telegram|contact|联系)"
_CONTACT_RE = re.compile(
    r"(?<![\d.])1[3-9]\d{9}(?![\d.])"  # a Chinese mobile number
    rf"|{_PHONE_CUE}[^\n\d+]{{0,12}}(?:\+\d{{1,3}}[ \-]?)?\(?\d{{2,4}}\)?[ \-]?\d{{3,4}}[ \-]?\d{{3,4}}(?![\d.])"
    r"|(?:微信|v信|\b(?:weixin|wechat|vx|qq|telegram|whatsapp|skype))(?:号|群)?\s*(?:id)?\s*[:：]\s*@?[a-z0-9_\-]{5,}"
    r"|(?:微信|weixin|wechat|v信|vx|qq)(?:号|群)?\s*@?[a-z]*\d[a-z0-9_\-]{4,}")
_LINK_RE = re.compile(r"https?://\S+|\bwww\.[a-z0-9\-]+\.[a-z]{2,}\S*|\b[\w.+\-]+@[a-z0-9\-]+\.[a-z.]{2,}")
_OFFER_RE = re.compile(
    r"[$€£¥￥]\s?\d|\d+(?:\.\d+)?\s?(?:元|块|美元|usd|eur|rmb)\b|\d+\s?%\s?off\b|\d\s?折|[一二三四五六七八九]折"
    r"|\b(?:free|discount|sale|coupon|promo(?:tion)?|deal|cheap|bonus)\b|免费|优惠|折扣|促销|特价|秒杀|包邮|满\d+减"
    r"|\bcode\s+(?-i:(?=[A-Z0-9]{4,}\b)[A-Z]*\d[A-Z0-9]*)",
    re.IGNORECASE)
_CALL_RE = re.compile(
    r"(?:^|(?<=[.!?;:,。！？；：，、]))[^\S\n]*(?:"
    r"(?:buy|order|call|click|tap|join|sign\s+up|subscribe|follow|share|add|contact|dm|text|message|book|register"
    r"|shop|use\s+code|reply|hurry|act\s+now|visit|get\s+(?:your|it|yours))\b"
    r"|(?:购买|订购|点击|关注|添加|加入|联系|咨询|领取|扫码|转发|报名|预订|下单|进群|私信|致电|来电|抢购|限时|名额有限))",
    re.MULTILINE)
# What every contact, link and offer holds, found fast (one compiled scan of a batch for the words, str.find for "@",
# runs of digits shaped like a phone number): only the lines holding one are read with the patterns above.
_DIGITS = "0123456789０１２３４５６７８９"
_TRIGGER_WORDS = (
    "微信", "v信", "weixin", "wechat", "vx", "qq", "skype", "whatsapp", "telegram", "http", "www", "free", "discount",
    "sale", "coupon", "promo", "deal", "cheap", "bonus", "% off", "%off", "免费", "优惠", "折扣", "促销", "特价", "秒杀",
    "包邮", *(f"{sign}{digit}" for sign in "$€£¥￥" for digit in _DIGITS),
    *(f"{digit}{unit}" for unit in ("元", "块", "折", "usd", "eur", "rmb") for digit in _DIGITS),
    *(f"{numeral}折" for numeral in "一二三四五六七八九"), *(f"满{digit}" for digit in _DIGITS))
_AT_OR_DIGITS_RE = re.compile(r"@|\d[\d \-]{6,}\d")  # found fast; a run of digits is then checked for a phone's shape
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


def _words(text: str) -> float:
    """Words of ``text``: Latin words, and Han characters / 2."""
    return len(_WORD_RE.findall(HAN_RE.sub(" ", text))) + len(HAN_RE.findall(text)) / 2


def _other_words(line: str) -> float:
    """Words of ``line`` beside its contacts and links."""
    return _words(_LINK_RE.sub(" ", _CONTACT_RE.sub(" ", line)))


def _ad_lines(lines: list[str], lowered: list[str], candidates: set[int], spam_lines: Counter[int],
              cfg: LineFilterConfig) -> set[int]:
    """The indices of the ad ``lines`` (``lowered``: the same lines lowercased), reading the ``candidates`` (lines
    holding a trigger) and the lines holding a spam pattern (``spam_lines``: line -> matches)."""
    ads = set()
    for i in candidates | spam_lines.keys():
        line, patterns = lowered[i], spam_lines.get(i, 0)
        if not line.strip():
            continue
        contact = _CONTACT_RE.search(line) is not None
        offer = _OFFER_RE.search(lines[i]) is not None  # a promo code is told by its capitals
        link = _LINK_RE.search(line) is not None
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
    return ads | {i for i in more if _words(lines[i]) <= cfg.ad_copy_words}


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


def filter_lines(texts: list[str], spam: SpamMatcher | None, cfg: LineFilterConfig) -> list[LineVerdict]:
    """Each text's ad lines found and removed (see the module's docstring). Only the lines holding a trigger of a
    contact, a link or an offer, or a spam pattern, are read with the patterns."""
    lowered = [text.lower() for text in texts]
    triggered: dict[int, list[int]] = defaultdict(list)
    _, hit_text, hit_offset = _trigger_matcher().batch_hits(lowered)
    for d, offset in zip(hit_text.tolist(), hit_offset.tolist(), strict=True):
        triggered[d].append(offset)
    joined = "\0".join(lowered)  # "@" and phone numbers, in one pass over the batch
    starts = np.cumsum([0, *(len(low) + 1 for low in lowered)])
    for match in _AT_OR_DIGITS_RE.finditer(joined):
        if match.group() == "@" or _PHONE_NUMBER_RE.match(joined, match.start()):
            d = int(np.searchsorted(starts, match.start(), side="right")) - 1
            triggered[d].append(match.start() - int(starts[d]))
    verdicts = [LineVerdict(text, []) for text in texts]
    spam_counts, spam_text, spam_offset = spam.batch_hits(lowered) if spam is not None else (None, None, None)
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
            verdicts[d] = LineVerdict(_without(lines, ads), [lines[n] for n in sorted(ads)])
    return verdicts


@functools.lru_cache(maxsize=1)
def _trigger_matcher() -> SpamMatcher:
    return SpamMatcher(_TRIGGER_WORDS)


def _without(lines: list[str], removed: set[int]) -> str:
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
