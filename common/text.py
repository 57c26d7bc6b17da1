"""Text helpers shared by the demo corpus and the stages: normalization, tokens, shingles, speaker labels."""

from __future__ import annotations

import re
import unicodedata

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_DIGIT_RE = re.compile(r"\d")
_SEPARATOR_RE = re.compile(r"[\W_]+")
TOKEN_RE = re.compile(rf"[{_HAN}]|[^\W_{_HAN}]+")
"""One dedup token: a Han character or a run of other letters/digits."""
SHINGLE_SEPARATOR = " "
_NAME_WORD = r"[^\s:：，。,.!?！？]{1,24}"
SPEAKER_LABEL = rf"[ \t]*{_NAME_WORD}(?: {_NAME_WORD}){{0,2}}[:：](?!//)[ \t]*"
"""A line's speaker label, as a pattern: up to three words and a colon ("Eileen: ", "艾琳："), not a URL's scheme."""


def _fold(text: str) -> str:
    """NFKC-normalize, lowercase and map every decimal digit to "0"."""
    return _DIGIT_RE.sub("0", unicodedata.normalize("NFKC", text).lower())


def dedup_normalize(text: str) -> str:
    """Return NFKC, lowercased text with digits as "0" and punctuation/whitespace runs as one space."""
    return _SEPARATOR_RE.sub(" ", _fold(text)).strip()


def dedup_tokens(text: str) -> list[str]:
    """Tokenize normalized text: one token per Han character, one per run of other letters/digits."""
    return TOKEN_RE.findall(_fold(text))


def shingles(tokens: list[str], k: int = 5) -> set[str]:
    """Return the set of k-token windows joined by a space; fewer than k tokens give one joined shingle."""
    if not tokens:
        return set()
    if len(tokens) < k:
        return {SHINGLE_SEPARATOR.join(tokens)}
    return {SHINGLE_SEPARATOR.join(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def jaccard(a: set, b: set) -> float:
    """Return |a & b| / |a | b|, or 0.0 when both sets are empty."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)
