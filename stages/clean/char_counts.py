"""Per-document character counts for the scalar quality signals, in one compiled pass over a batch.

Each count is what a numpy reduction over ``BatchText``'s class masks would give (a character of
a class, or of a class followed in the same document by another); one loop over the code points
computes them all at once instead of a pass of numpy per mask and per reduction.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from stages.clean import batch_text as bt
from stages.clean.batch_text import BatchText
from stages.clean.textsets import FUNCTION_WORD_CHARS, FUNCTION_WORD_KEYS, LETTER_BITS

MAX_UNIT = 3
"""A repeated symbol unit (★, ☆彡, =-) is 1-3 characters long and repeats 4+ times in a row."""

_LATIN, _ASCII_LETTER, _APOSTROPHE = bt.LATIN, bt.ASCII_LETTER, bt.APOSTROPHE
_SPACE, _HAN, _COMMON_HAN, _ZH_STOP, _DECORATIVE = bt.SPACE, bt.HAN, bt.COMMON_HAN, bt.ZH_STOP, bt.DECORATIVE
_LATIN1_LETTER, _DEBRIS_TAIL, _ORPHAN_LEAD, _SYMBOL_HEAD = bt.LATIN1_LETTER, bt.DEBRIS_TAIL, bt.ORPHAN_LEAD, bt.SYMBOL_HEAD


class CharCounts(NamedTuple):
    """Per document (float64 arrays): characters of each kind."""

    non_space: np.ndarray
    han: np.ndarray
    common_han: np.ndarray
    zh_stop: np.ndarray
    decorative: np.ndarray
    newlines: np.ndarray
    replacement: np.ndarray  # U+FFFD
    symbols: np.ndarray  # "#" before a character that is neither a space nor "#", "…", each "..." of a run of dots
    latin1_letters: np.ndarray
    debris: np.ndarray  # a Latin-1 letter followed by what UTF-8 continuation bytes read as Latin-1 look like
    orphan_leads: np.ndarray  # â, Ã, Â
    orphans: np.ndarray  # â, Ã, Â at the end of the document or before an ASCII character
    repeated_unit: np.ndarray  # 1 where a symbol recurs 1-3 places apart four times (REPEATED_UNIT_RE may match), else 0
    latin_words: np.ndarray  # matches of [A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)? ("don't" is one)
    latin_word_chars: np.ndarray
    function_words: np.ndarray  # the Latin words that are English function words, in any case


_COUNTS = len(CharCounts._fields)  # the kernel fills one column per field, in this order


@numba.njit(cache=True, nogil=True)
def _count(cp: np.ndarray, classes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    counts = np.zeros((len(starts) - 1, _COUNTS), dtype=np.float64)
    for doc in range(len(starts) - 1):
        start, end = starts[doc], starts[doc + 1]
        row = counts[doc]
        dots = 0
        for at in range(start, end):
            char, bits = cp[at], classes[at]
            last = at + 1 == end
            if not bits & _SPACE:
                row[0] += 1
            if bits & _HAN:
                row[1] += 1
                if bits & _COMMON_HAN:
                    row[2] += 1
            if bits & _ZH_STOP:
                row[3] += 1
            if bits & _DECORATIVE:
                row[4] += 1
            if char == 10:
                row[5] += 1
            elif char == 0xFFFD:
                row[6] += 1
            elif char == 0x2026 or (char == 0x23 and not last and not classes[at + 1] & _SPACE and cp[at + 1] != 0x23):
                row[7] += 1  # an ellipsis, or a hashtag: "#" before a word, not a comment or heading marker
            if char == 0x2E:
                dots += 1
            if dots and (last or char != 0x2E):
                row[7] += dots // 3
                dots = 0
            if bits & _LATIN1_LETTER:
                row[8] += 1
                if not last and classes[at + 1] & _DEBRIS_TAIL:
                    row[9] += 1
            if bits & _ORPHAN_LEAD:
                row[10] += 1
                if last or cp[at + 1] < 0x80:
                    row[11] += 1
            if bits & _SYMBOL_HEAD and not row[12]:
                for unit in range(1, MAX_UNIT + 1):
                    if at + 3 * unit < end and cp[at + unit] == char and cp[at + 2 * unit] == char \
                            and cp[at + 3 * unit] == char:
                        row[12] = 1
                        break
        _latin_words(cp, classes, start, end, row)
    return counts


@numba.njit(cache=True, nogil=True)
def _latin_words(cp: np.ndarray, classes: np.ndarray, start: int, end: int, row: np.ndarray) -> None:
    """Scan ``[start, end)`` for Latin words as the regular expression's findall does."""
    at = start
    while at < end:
        if not classes[at] & _LATIN:
            at += 1
            continue
        word = at
        ascii_only = True
        while at < end and classes[at] & _LATIN:
            ascii_only = ascii_only and (classes[at] & _ASCII_LETTER) != 0
            at += 1
        if at + 1 < end and classes[at] & _APOSTROPHE and classes[at + 1] & _ASCII_LETTER:
            ascii_only = False  # no function word holds an apostrophe
            at += 1
            while at < end and classes[at] & _ASCII_LETTER:
                at += 1
        row[13] += 1
        row[14] += at - word
        if ascii_only and at - word <= FUNCTION_WORD_CHARS:
            key = 0
            for i in range(at - word):
                key += ((cp[word + i] | 0x20) - 96) << (LETTER_BITS * i)
            found = np.searchsorted(FUNCTION_WORD_KEYS, key)
            if found < len(FUNCTION_WORD_KEYS) and FUNCTION_WORD_KEYS[found] == key:
                row[15] += 1


def char_counts(batch: BatchText) -> CharCounts:
    """The per-document character counts of ``batch``."""
    counts = _count(batch.cp, batch.classes, batch.starts)
    return CharCounts(*(counts[:, i] for i in range(_COUNTS)))
