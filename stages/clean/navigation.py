"""Navigation boilerplate: the entries that index, contents and search pages are made of."""

from __future__ import annotations

import re

from stages.clean.textsets import EN_STOP_WORDS, HAN_RE, ZH_STOP_CHARS

MIN_NAV_LINES = 20
"""Documents with fewer non-code lines than this score 0 (a short list is not a page of links)."""
NAV_MAX_WORDS = 8
NAV_MAX_HAN = 20
# A line of code or markup is neither prose nor a navigation entry.
_CODE_LINE_RE = re.compile(r"[=;{}<>`#]|:$")
_SENTENCE_PUNCT_RE = re.compile(r"[.!?…](?:\s|$)|[,，;；。！？]")
_LATIN_TOKEN_RE = re.compile(r"[^\W\d_]+")
_SECTION_NUMBER_RE = re.compile(r"^(?:\d+\.)+\d*\s+|^\d+\s+")


def nav_line_frac(lines: list[str]) -> float:
    """Share of navigation entries among the non-code lines of a document's stripped, non-empty ``lines``
    (0 below MIN_NAV_LINES of them).

    An entry is what index, contents and search pages are made of: a short line with no sentence
    punctuation and no stop word unless it is in title case ("fill() (in module textwrap)",
    "7.5.1. Basic fonts", "Porting Extension Modules to Python 3").
    """
    lines = [line for line in lines if not _CODE_LINE_RE.search(line)]
    if len(lines) < MIN_NAV_LINES:
        return 0.0
    entries = 0
    for line in lines:
        line = _SECTION_NUMBER_RE.sub("", line)
        if _SENTENCE_PUNCT_RE.search(line) or len(line.split()) > NAV_MAX_WORDS:
            continue
        if len(HAN_RE.findall(line)) > NAV_MAX_HAN or not ZH_STOP_CHARS.isdisjoint(line):
            continue
        words = _LATIN_TOKEN_RE.findall(line)
        title_case = all(word[0].isupper() for word in words if len(word) >= 4)
        if not title_case and any(word.lower() in EN_STOP_WORDS for word in words):
            continue
        entries += 1
    return entries / len(lines)
