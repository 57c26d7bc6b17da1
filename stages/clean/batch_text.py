"""A batch of documents as one array of code points, for signals computed over the whole batch.

Per-document Python costs microseconds per call; a pass of numpy over the code points of a whole
batch costs about a nanosecond per character. ``BatchText`` holds the concatenated code points,
where each document starts, a table of character classes, and the pieces the quality signals
are made of: runs of a class, stripped lines and tokens (each found by one compiled loop), and
hashes of any span of text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import numba
import numpy as np

from common.hashing import mix64
from stages.clean.textsets import HAN_CLASS, ZH_STOP_CHARS, common_han

UNICODE_SIZE = 0x110000

# Character classes: one bit each in the table ``char_classes()`` returns.
SPACE = 1 << 0  # str.isspace: what str.strip() and str.split() remove
WORD = 1 << 1  # the \w of Python's re: str.isalnum() or "_"
DIGIT = 1 << 2  # str.isdigit
HAN = 1 << 3  # the Han ideographs of HAN_CLASS
LATIN = 1 << 4  # A-Z, a-z and U+00C0-U+024F (Latin-1 and Latin Extended-A/B letters)
ASCII_LETTER = 1 << 5
COMMON_HAN = 1 << 6  # the Han characters of everyday Chinese (GB2312 level 1, Big5 frequent)
ZH_STOP = 1 << 7
DECORATIVE = 1 << 8  # arrows, dingbats, enclosed and geometric symbols, emoji
LATIN1_LETTER = 1 << 9  # U+00C0-U+00FF: what UTF-8 lead bytes read as Latin-1 look like
DEBRIS_TAIL = 1 << 10  # what UTF-8 continuation bytes read as Latin-1/cp1252 look like
ORPHAN_LEAD = 1 << 11  # â, Ã, Â
SYMBOL_HEAD = 1 << 12  # neither word, space nor box drawing: what a decorative repeated unit starts with
BULLET = 1 << 13
TERMINAL = 1 << 14  # what a finished sentence ends with
APOSTROPHE = 1 << 15
TOKEN = 1 << 16  # letters and digits other than Han and "_": a run of them is one token
LETTER = 1 << 17  # the [^\W\d_] of Python's re: word characters but decimal digits and "_"
UPPER = 1 << 18  # str.isupper
LOWER_OR_TITLE = 1 << 19  # str.islower, or titlecase (Lt): what makes a word not str.isupper
CODE = 1 << 20  # the characters of code and markup that language ID's reading leaves out
IDENTIFIER = 1 << 21  # ASCII letters, digits and the punctuation of identifiers, options and paths
DECIMAL = 1 << 22  # the \d of Python's re: decimal digits (str.isdecimal)
ALPHA = 1 << 23  # str.isalpha

BULLETS = "•-*·●○▪◦‣–"
TERMINAL_PUNCT = ".!?。！？…\"'”’」』)）"
CODE_CHARS = "{}()[]<>=;:_*/\\|#$&%@^~`"
IDENTIFIER_CHARS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                    "_./:\\-+=<>()[]{}*&%$#@!'\"|~^`,;?")
_DECORATIVE_RANGES = ((0x2190, 0x21FF), (0x2300, 0x23FF), (0x2460, 0x24FF), (0x2580, 0x27BF), (0x2900, 0x2BFF),
                      (0x3200, 0x33FF), (0x1F000, 0x1FAFF))
_DEBRIS_TAIL_RANGES = ((0x80, 0xBF), (0x2018, 0x203A), (0x152, 0x178))
_DEBRIS_TAIL_CHARS = "\u02c6\u02dc\u20ac\u2122"
_HAN_RANGES = tuple((ord(a), ord(b)) for a, b in re.findall(r"(.)-(.)", HAN_CLASS))
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant: the base of the span hash
_LENGTH_SALT = np.uint64(0xD6E8FEB86659FD93)


def _regex_mask(pattern: str, everything: str) -> np.ndarray:
    """For every code point, whether ``pattern`` (one character class) matches it."""
    marked = re.sub(pattern, "\x01", everything)
    mask = np.frombuffer(re.sub("[^\x01]", "\x00", marked).encode("latin-1"), dtype=np.uint8).astype(bool)
    mask[1] = re.fullmatch(pattern, "\x01") is not None
    return mask


@functools.lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    """The class bits of every code point (uint32, indexed by code point), built once per process."""
    everything = "".join(map(chr, range(UNICODE_SIZE)))
    table = np.zeros(UNICODE_SIZE, dtype=np.uint32)
    table[_regex_mask(r"\s", everything)] |= SPACE
    word = _regex_mask(r"\w", everything)
    table[word] |= WORD
    table[np.fromiter(map(str.isdigit, everything), dtype=bool, count=UNICODE_SIZE)] |= DIGIT
    decimal = _regex_mask(r"\d", everything)
    table[decimal] |= DECIMAL
    table[np.fromiter(map(str.isalpha, everything), dtype=bool, count=UNICODE_SIZE)] |= ALPHA
    letter = word & ~decimal
    letter[ord("_")] = False
    table[letter] |= LETTER
    table[np.fromiter(map(str.isupper, everything), dtype=bool, count=UNICODE_SIZE)] |= UPPER
    lower_or_title = np.fromiter(map(str.islower, everything), dtype=bool, count=UNICODE_SIZE)
    lower_or_title[[ord(char) for char in everything[:0x10000] if unicodedata.category(char) == "Lt"]] = True  # all in the BMP
    table[lower_or_title] |= LOWER_OR_TITLE
    han = np.zeros(UNICODE_SIZE, dtype=bool)
    for low, high in _HAN_RANGES:
        han[low:high + 1] = True
    table[han] |= HAN
    token = word & ~han
    token[ord("_")] = False
    table[token] |= TOKEN
    for low, high in ((0x41, 0x5A), (0x61, 0x7A)):
        table[low:high + 1] |= LATIN | ASCII_LETTER
    table[0xC0:0x250] |= LATIN
    table[0xC0:0x100] |= LATIN1_LETTER
    for low, high in _DECORATIVE_RANGES:
        table[low:high + 1] |= DECORATIVE
    for low, high in _DEBRIS_TAIL_RANGES:
        table[low:high + 1] |= DEBRIS_TAIL
    for chars, bit in ((_DEBRIS_TAIL_CHARS, DEBRIS_TAIL), ("\u00e2\u00c3\u00c2", ORPHAN_LEAD), (BULLETS, BULLET),
                       (TERMINAL_PUNCT, TERMINAL), ("'’", APOSTROPHE), (CODE_CHARS, CODE), (IDENTIFIER_CHARS, IDENTIFIER), ("".join(ZH_STOP_CHARS), ZH_STOP)):
        table[np.fromiter(map(ord, chars), dtype=np.int64)] |= bit
    common = np.zeros(UNICODE_SIZE, dtype=bool)
    common[np.fromiter(map(ord, common_han()), dtype=np.int64)] = True
    table[common & han] |= COMMON_HAN
    symbol = ~word & ((table & SPACE) == 0)
    symbol[0x2500:0x2580] = False
    table[symbol] |= SYMBOL_HEAD
    return table


@dataclass(frozen=True)
class Runs:
    """Maximal runs of one class inside documents: ``start`` and ``end`` (exclusive) in batch positions."""

    start: np.ndarray
    end: np.ndarray

    @property
    def length(self) -> np.ndarray:
        return self.end - self.start


@dataclass(frozen=True)
class Tokens(Runs):
    """The tokens of a batch (see ``BatchText.tokens``), and which of them are all digits."""

    digits_only: np.ndarray  # per token: str.isdigit of its text


class BatchText:
    """The code points of a batch of documents, end to end, with per-document reductions."""

    def __init__(self, texts: list[str]):
        self.texts = list(texts)  # its own list: the caller's may change after
        self.docs = len(texts)
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=self.docs)
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)))
        self.joined = "".join(texts)
        self.cp = np.frombuffer(self.joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        self.size = len(self.cp)
        self.doc_of = np.repeat(np.arange(self.docs), self.lengths)
        self.classes = char_classes()[self.cp]
        first = np.zeros(self.size + 1, dtype=bool)
        first[self.starts[:-1]] = True
        self.doc_first = first[:-1]  # the first character of its document
        self.doc_last = first[1:] | (np.arange(self.size) == self.size - 1)  # the last character of its document
        self._reduce_at = np.minimum(self.starts[:-1], max(self.size - 1, 0))
        self._masks: dict[int, np.ndarray] = {}
        self._lines: Runs | None = None
        self._line_hashes: np.ndarray | None = None
        self._tokens: Tokens | None = None

    def has(self, bits: int) -> np.ndarray:
        """Per character: whether it is in any of the classes ``bits`` (computed once per ``bits``)."""
        if bits not in self._masks:
            self._masks[bits] = (self.classes & np.uint32(bits)) != 0
        return self._masks[bits]

    def per_doc(self, mask: np.ndarray) -> np.ndarray:
        """How many characters of each document ``mask`` marks."""
        if self.size == 0:
            return np.zeros(self.docs)
        counts = np.add.reduceat(mask.view(np.uint8), self._reduce_at, dtype=np.int64).astype(np.float64)
        counts[self.lengths == 0] = 0.0  # reduceat gives an empty range the element at its start
        return counts

    def span_counts(self, mask: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """How many characters the boolean ``mask`` marks in each span ``[start, end)``; the spans
        are non-empty, in order and disjoint (lines, runs)."""
        if len(start) == 0:
            return np.zeros(0, dtype=np.int64)
        padded = np.concatenate((mask.view(np.uint8), [0]))  # a span may end at the batch's end
        bounds = np.empty(2 * len(start), dtype=np.int64)
        bounds[0::2], bounds[1::2] = start, end
        return np.add.reduceat(padded, bounds, dtype=np.int64)[0::2]

    def runs(self, mask: np.ndarray) -> Runs:
        """The maximal runs of ``mask`` characters, none crossing a document boundary."""
        begins = mask & (self.doc_first | ~np.concatenate(([False], mask[:-1])))
        ends = mask & (self.doc_last | ~np.concatenate((mask[1:], [False])))
        return Runs(np.flatnonzero(begins), np.flatnonzero(ends) + 1)

    def lines(self) -> Runs:
        """Each document's lines (split at "\\n") stripped as ``str.strip`` does, empty ones left out
        (computed once)."""
        if self._lines is None:
            self._lines = Runs(*_line_bounds(self.cp, self.classes, self.starts))
        return self._lines

    def line_hashes(self) -> np.ndarray:
        """``span_hashes`` of each of ``lines()`` (computed once)."""
        if self._line_hashes is None:
            lines = self.lines()
            self._line_hashes = self.span_hashes(lines.start, lines.end)
        return self._line_hashes

    def tokens(self) -> Tokens:
        """Every token (``[HAN]|[^\\W HAN _]+``: one Han character, or a run of other letters and
        digits), document after document (computed once)."""
        if self._tokens is None:
            self._tokens = Tokens(*_token_bounds(self.classes, self.starts))
        return self._tokens

    def span_hashes(self, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """A 64-bit hash of each span ``[start, end)`` of the batch's text: equal texts, equal hashes.

        A polynomial over the code points modulo 2**64 with the span's length, mixed; distinct texts
        collide with probability about 2**-64 unless built to (a polynomial modulo 2**64 is linear:
        a Thue-Morse string of 1,024 characters and its complement collide).
        """
        return mix64(_polynomial_hashes(self.cp, start, end))


@numba.njit(cache=True, nogil=True)
def _line_bounds(cp: np.ndarray, classes: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of the non-space content of each line, documents in order, empty lines left out."""
    line_start = np.empty(len(cp), dtype=np.int64)
    line_end = np.empty(len(cp), dtype=np.int64)
    found = 0
    for doc in range(len(starts) - 1):
        first = -1
        last = -1
        for at in range(starts[doc], starts[doc + 1]):
            if cp[at] == 10:
                if first >= 0:
                    line_start[found], line_end[found] = first, last + 1
                    found += 1
                    first = -1
            elif (classes[at] & SPACE) == 0:
                if first < 0:
                    first = at
                last = at
        if first >= 0:
            line_start[found], line_end[found] = first, last + 1
            found += 1
    return line_start[:found].copy(), line_end[:found].copy()


@numba.njit(cache=True, nogil=True)
def _token_bounds(classes: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end and all-digits of every token, documents in order."""
    size = starts[-1]
    token_start = np.empty(size, dtype=np.int64)
    token_end = np.empty(size, dtype=np.int64)
    digits_only = np.empty(size, dtype=np.bool_)
    found = 0
    for doc in range(len(starts) - 1):
        run = -1
        digits = True
        for at in range(starts[doc], starts[doc + 1]):
            bits = classes[at]
            if bits & TOKEN:
                if run < 0:
                    run = at
                    digits = True
                digits = digits and (bits & DIGIT) != 0
                continue
            if run >= 0:
                token_start[found], token_end[found], digits_only[found] = run, at, digits
                found += 1
                run = -1
            if bits & HAN:
                token_start[found], token_end[found], digits_only[found] = at, at + 1, False
                found += 1
        if run >= 0:
            token_start[found], token_end[found], digits_only[found] = run, starts[doc + 1], digits
            found += 1
    return token_start[:found].copy(), token_end[:found].copy(), digits_only[:found].copy()


@numba.njit(cache=True, nogil=True)
def _polynomial_hashes(cp: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per span: the polynomial of its code points in _HASH_BASE, plus its length times _LENGTH_SALT."""
    hashes = np.empty(len(start), dtype=np.uint64)
    for span in range(len(start)):
        value = np.uint64(0)
        for at in range(start[span], end[span]):
            value = value * _HASH_BASE + np.uint64(cp[at]) + np.uint64(1)
        hashes[span] = value ^ (np.uint64(end[span] - start[span]) * _LENGTH_SALT)
    return hashes
