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
import re
from dataclasses import dataclass

import numpy as np

from common.config import LineFilterConfig
from stages.clean.spam import SpamMatcher

_PHONE_CUE = r"(?:电话|手机|热线|致电|来电|tel|phone|mobile|call|text|whatsapp|telegram|contact|联系)"
_CONTACT_RE = re.compile(
    r"(?<![\d.])1[3-9]\d{9}(?![\d.])"  # a Chinese mobile number
    rf"|{_PHONE_CUE}[^\n\d+]{{0,12}}(?:\+\d{{1,3}}[ \-]?)?\(?\d{{2,4}}\)?[ \-]?\d{{3,4}}[ \-]?\d{{3,4}}(?![\d.])"
    r"|(?:微信|v信|\b(?:weixin|wechat|vx|qq|telegram|whatsapp|skype))(?:号|群)?\s*(?:id)?\s*[:：]\s*@?[a-z0-9_\-]{5,}"
    r"|(?:微信|weixin|wechat|v信|vx|qq)(?:号|群)?\s*@?[a-z]*\d[a-z0-9_\-]{4,}",
    re.IGNORECASE)
_LINK_RE = re.compile(r"https?://\S+|\bwww\.[a-z0-9\-]+\.[a-z]{2,}\S*|\b[\w.+\-]+@[a-z0-9\-]+\.[a-z.]{2,}", re.IGNORECASE)
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
    re.IGNORECASE | re.MULTILINE)
_ANY_RE = re.compile("|".join(f"(?:{r.pattern})" for r in (_CONTACT_RE, _LINK_RE, _OFFER_RE)), re.IGNORECASE)
_WORD_RE = re.compile(r"[^\W\d_]+")
_HAN_RE = re.compile(r"[\u3400-\u9fff]")


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


def _positions(pattern: re.Pattern, text: str, line_starts: list[int]) -> set[int]:
    """The indices of the lines of ``text`` (starting at ``line_starts``) where ``pattern`` matches."""
    return {bisect.bisect_right(line_starts, m.start()) - 1 for m in pattern.finditer(text)}


def _words(text: str) -> float:
    """Words of ``text``: Latin words, and Han characters / 2."""
    return len(_WORD_RE.findall(_HAN_RE.sub(" ", text))) + len(_HAN_RE.findall(text)) / 2


def _other_words(line: str) -> float:
    """Words of ``line`` beside its contacts and links."""
    return _words(_LINK_RE.sub(" ", _CONTACT_RE.sub(" ", line)))


def _ad_lines(text: str, spam: SpamMatcher | None, cfg: LineFilterConfig) -> tuple[list[str], set[int]]:
    lines = text.split("\n")
    line_starts = [0]
    for line in lines[:-1]:
        line_starts.append(line_starts[-1] + len(line) + 1)
    contact = _positions(_CONTACT_RE, text, line_starts)
    link = _positions(_LINK_RE, text, line_starts)
    offer = _positions(_OFFER_RE, text, line_starts)
    call = _positions(_CALL_RE, text, line_starts)
    patterned: dict[int, int] = {}
    if spam is not None:
        lowered = [line.lower() for line in lines]
        patterned = {i: n for i, n in enumerate(spam.batch_hits(lowered)[0].tolist()) if n}
    ads = set()
    for i in contact | link | offer | call | patterned.keys():
        if not lines[i].strip():
            continue
        short = _other_words(lines[i]) <= cfg.contact_line_words
        if ((i in patterned and (i in contact or i in link or (patterned[i] >= 2 and (i in offer or i in call))))
                or (i in contact and (i in offer or i in call or short))
                or (i in link and i in call and short) or (i in offer and i in call)):
            ads.add(i)
    if not ads:
        return lines, ads
    # A page that carries an ad: the rest of the ad's block, and its other short lines of an offer, a call or a
    # spam pattern, are ad copy too.
    copy = {i for i in offer | call | patterned.keys() if lines[i].strip() and _words(lines[i]) <= cfg.ad_copy_words}
    block = {i for i in _rest_of_ad_blocks(lines, ads, cfg.ad_block_lines) if _words(lines[i]) <= cfg.ad_copy_words}
    return lines, ads | block | copy


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
    """Each text's ad lines found and removed (see the module's docstring). Only texts holding a contact, a
    link, an offer or a spam pattern are read line by line."""
    candidates = {i for i, text in enumerate(texts) if _ANY_RE.search(text)}
    if spam is not None:
        counts = spam.batch_hits([text.lower() for text in texts])[0]
        candidates |= set(np.flatnonzero(counts).tolist())
    verdicts = []
    for i, text in enumerate(texts):
        if i not in candidates:
            verdicts.append(LineVerdict(text, []))
            continue
        lines, ads = _ad_lines(text, spam, cfg)
        verdicts.append(LineVerdict(_without(lines, ads) if ads else text, [lines[n] for n in sorted(ads)]))
    return verdicts


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
