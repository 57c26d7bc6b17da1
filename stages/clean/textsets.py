"""Character and word sets the clean stage's signals and rules share."""

from __future__ import annotations

import functools
import re

import numpy as np

HAN_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_RE = re.compile(rf"[{HAN_CLASS}]")
EN_STOP_WORDS = frozenset(("the", "be", "to", "of", "and", "that", "have", "with"))
# Gopher's eight stop words and the function words of questions, answers and instructions
# ("can you write a type hint?"): text in English has them, word lists and keyword spam do not.
EN_FUNCTION_WORDS = EN_STOP_WORDS | frozenset((
    "a", "an", "is", "are", "was", "were", "it", "this", "i", "you", "we", "he", "she", "they", "my", "your",
    "do", "does", "not", "what", "how", "can", "will", "for", "on", "at", "as", "if", "or", "but", "so"))
ZH_STOP_CHARS = frozenset("的年在月是和日了为有被人中他也而由")
LETTER_BITS = 5
"""A lower-case ASCII word of up to KEY_LETTERS letters as one integer key, five bits a letter."""
KEY_LETTERS = 63 // LETTER_BITS


def word_key(word: str) -> int:
    """The integer key of a lower-case ASCII ``word`` (what the batch code compares words by)."""
    return sum((ord(char) - 96) << (LETTER_BITS * i) for i, char in enumerate(word))


FUNCTION_WORD_KEYS = np.array(sorted(map(word_key, EN_FUNCTION_WORDS)), dtype=np.int64)
FUNCTION_WORD_CHARS = max(map(len, EN_FUNCTION_WORDS))


@functools.lru_cache(maxsize=1)
def common_han() -> frozenset[str]:
    """The Han characters of everyday Chinese: GB2312 level 1 and Big5's frequent block."""
    chars: set[str] = set()
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    for hi in range(0xA4, 0xC7):
        for lo in [*range(0x40, 0x7F), *range(0xA1, 0xFF)]:
            try:
                chars.add(bytes([hi, lo]).decode("big5"))
            except UnicodeDecodeError:
                continue
    return frozenset(chars)
