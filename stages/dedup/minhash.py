"""Exact keys, stable shingle hashes and vectorized MinHash signatures.

Tokens and shingles follow ``common.text``: NFKC, lowercase, digits as "0", one token per Han
character and one per run of other letters/digits, shingles of ``k`` consecutive tokens. A
document with fewer than ``k`` tokens has no shingles (it goes to exact dedup only).

Tokenization runs on whole batches as numpy arrays of code points. A per-code-point table maps
each character to its folded form and token class; characters whose folding depends on their
neighbours (combining marks, composing jamo, capital sigma, multi-character foldings ...) send
their document to ``common.text.dedup_tokens`` instead, so the tokens always equal
``dedup_tokens``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

import numpy as np
import xxhash

from common.hashing import mix64, seeded_draws
from common.text import TOKEN_RE, dedup_normalize, dedup_tokens

EMPTY = np.uint64(np.iinfo(np.uint64).max)
"""Signature value of a document without shingles."""

_CODE_POINTS = 0x110000
_CLASS_SHIFT = 21
_CODE_MASK = np.uint32((1 << _CLASS_SHIFT) - 1)
_HAN, _WORD = 1, 2
_KEY_BIT = np.uint32(1 << 23)
_KEY_CHAR = re.compile(r"[^\W_]")
_UNKNOWN = np.uint32(0xFFFFFFFF)
_SLOW = np.uint32(0xFFFFFFFE)
_BATCH_CHARS = 1 << 16
_CACHED_POWERS = 1 << 18
_WINDOW_BYTES = 6 << 20
_PAIR_CHUNK = 1 << 16
_MASK64 = (1 << 64) - 1
_BASE = 0x100000001B3


def exact_key(text: str) -> bytes:
    """16-byte xxh128 of the dedup-normalized text (UTF-32-LE) without whitespace and punctuation."""
    return xxhash.xxh3_128_digest(dedup_normalize(text).replace(" ", "").encode("utf-32-le"))


@functools.cache
def _composers() -> frozenset[str]:
    """Characters that can follow a starter inside a canonical decomposition (a superset of composing ones)."""
    chars = "\x00".join(chr(c) for c in range(1, _CODE_POINTS) if not 0xD800 <= c < 0xE000)
    parts = unicodedata.normalize("NFD", chars).split("\x00")
    return frozenset(ch for part in parts if len(part) > 1 for ch in part[1:])


def _class_of(ch: str) -> int:
    """Token class of a character as ``TOKEN_RE`` sees it: 0 separator, 1 Han, 2 other letter/digit."""
    if not TOKEN_RE.fullmatch(ch):
        return 0
    return _WORD if TOKEN_RE.fullmatch(ch + ch) else _HAN


def _plain_entry(code: int) -> int:
    """Table entry of an already folded character: itself, its token class and whether keys keep it."""
    ch = chr(code)
    return code | _class_of(ch) << _CLASS_SHIFT | (int(_KEY_BIT) if _KEY_CHAR.fullmatch(ch) else 0)


def _fast_entry(code: int) -> int:
    """Table entry of a raw character: its folded code point and class, or ``_SLOW``."""
    if 0xD800 <= code < 0xE000:
        return int(_SLOW)
    ch = chr(code)
    nfkc = unicodedata.normalize("NFKC", ch)
    composers = _composers()
    if "\u03a3" in nfkc or any(unicodedata.combining(x) or x in composers for x in ch + nfkc):
        return int(_SLOW)
    tokens = dedup_tokens(ch)
    if not tokens:
        return 0
    if len(nfkc.lower()) != 1:
        return int(_SLOW)
    return _plain_entry(ord(tokens[0]))


_FAST = np.full(_CODE_POINTS, _UNKNOWN, dtype=np.uint32)
_PLAIN = np.full(_CODE_POINTS, _UNKNOWN, dtype=np.uint32)


def _lookup(table: np.ndarray, entry: Callable[[int], int], codes: np.ndarray) -> np.ndarray:
    """``table[codes]``, filling the entries not computed yet."""
    values = table[codes]
    missing = values == _UNKNOWN
    if missing.any():
        for code in np.unique(codes[missing]).tolist():
            table[code] = entry(code)
        values = table[codes]
    return values


def _code_points(text: str) -> np.ndarray:
    """Code points of ``text`` (lone surrogates included) as uint32."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _folded(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Table entries (folded code point, class, key bit) of texts joined by spaces; and segment starts."""
    lengths = np.fromiter((len(t) + 1 for t in texts), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    values = _lookup(_FAST, _fast_entry, _code_points(" ".join(texts) + " "))
    slow = np.flatnonzero(np.maximum.reduceat(values, starts[:-1]) == _SLOW)
    if len(slow) == 0:
        return values, starts
    pieces, begin = [], 0
    for i in slow.tolist():
        folded = " ".join(dedup_tokens(texts[i])) + " "
        pieces += [values[begin : starts[i]], _lookup(_PLAIN, _plain_entry, _code_points(folded))]
        begin = starts[i + 1]
        lengths[i] = len(folded)
    pieces.append(values[begin:])
    np.cumsum(lengths, out=starts[1:])
    return np.concatenate(pieces), starts


def _power_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``_BASE**i`` and ``_BASE**-i`` modulo 2**64 for i < n."""
    forward = np.ones(n, dtype=np.uint64)
    backward = np.ones(n, dtype=np.uint64)
    np.cumprod(np.full(n - 1, _BASE, dtype=np.uint64), out=forward[1:])
    np.cumprod(np.full(n - 1, pow(_BASE, -1, 1 << 64), dtype=np.uint64), out=backward[1:])
    return forward, backward


_cached_powers = functools.cache(_power_table)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Power tables of at least ``n`` entries, cached up to ``_CACHED_POWERS``."""
    return _cached_powers(_CACHED_POWERS) if n <= _CACHED_POWERS else _power_table(n)


def _token_hashes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hash and first position of every token in a folded code point stream."""
    kind = (values >> np.uint32(_CLASS_SHIFT)) & np.uint32(3)
    han = kind == _HAN
    word = kind == _WORD
    before = np.empty_like(word)
    before[0] = False
    before[1:] = word[:-1]
    after = np.empty_like(word)
    after[-1] = False
    after[:-1] = word[1:]
    first = np.flatnonzero(han | (word & ~before))
    last = np.flatnonzero(han | (word & ~after)) + 1
    forward, backward = _powers(len(values) + 1)
    prefix = np.zeros(len(values) + 1, dtype=np.uint64)
    np.cumsum((values & _CODE_MASK) * forward[: len(values)], out=prefix[1:])
    raw = (prefix[last] - prefix[first]) * backward[first]
    return mix64(raw), first


def _batch_shingles(texts: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Shingle hashes of one batch and the shingle count of each document."""
    values, starts = _folded(texts)
    tokens, first = _token_hashes(values)
    bounds = np.searchsorted(first, starts)
    counts = np.maximum(np.diff(bounds) - (k - 1), 0)
    if len(tokens) < k:
        return np.zeros(0, dtype=np.uint64), counts
    combined = tokens[: len(tokens) - k + 1].copy()
    for j in range(1, k):
        combined *= np.uint64(_BASE)
        combined += tokens[j : len(tokens) - k + 1 + j]
    window_start = np.arange(len(combined))
    doc_end = np.repeat(bounds[1:], np.diff(bounds))[: len(combined)]
    return mix64(combined[window_start + k <= doc_end]), counts


def _batches(texts: list[str]) -> list[list[str]]:
    """Consecutive groups of texts of about ``_BATCH_CHARS`` characters."""
    groups, current, size = [], [], 0
    for text in texts:
        current.append(text)
        size += len(text)
        if size >= _BATCH_CHARS:
            groups.append(current)
            current, size = [], 0
    if current:
        groups.append(current)
    return groups


def shingle_hashes(texts: list[str], k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Stable 64-bit hashes of every ``k``-token shingle of every text, concatenated, and int64 offsets.

    Document ``i`` owns ``hashes[offsets[i]:offsets[i + 1]]`` (one hash per window, repeats kept);
    the hash is a function of the shingle's tokens only, identical in every process.
    """
    if k < 1:
        raise ValueError(f"shingle size must be >= 1, got {k}")
    parts, counts = [], []
    for batch in _batches(texts):
        hashes, batch_counts = _batch_shingles(batch, k)
        parts.append(hashes)
        counts.append(batch_counts)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    if texts:
        np.cumsum(np.concatenate(counts), out=offsets[1:])
    return (np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)), offsets


def exact_keys(texts: list[str]) -> list[bytes]:
    """``exact_key`` of every text, computed on whole batches."""
    keys = []
    for batch in _batches(texts):
        values, starts = _folded(batch)
        kept = (values & _KEY_BIT) > 0
        bounds = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum(kept, out=bounds[1:])
        data = memoryview((values[kept] & _CODE_MASK).tobytes())
        keys += [
            xxhash.xxh3_128_digest(data[4 * lo : 4 * hi])
            for lo, hi in zip(bounds[starts[:-1]].tolist(), bounds[starts[1:]].tolist(), strict=True)
        ]
    return keys


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Multipliers (odd) and offsets of the hash family h_i(x) = (a_i * x + b_i) mod 2**64."""
    draws = seeded_draws(seed, 2 * num_perm)
    return draws[:num_perm] | np.uint64(1), draws[num_perm:]


def signatures(shingle_hashes: np.ndarray, offsets: np.ndarray, num_perm: int = 128, seed: int = 1) -> np.ndarray:
    """MinHash signatures, uint64 (docs x num_perm); a document without shingles gets a row of ``EMPTY``.

    Column i is min over the document's shingle hashes x of (a_i * x + b_i) mod 2**64 (``permutations``).
    Shingles are processed in windows whose permuted values take ``_WINDOW_BYTES`` (6 MiB), so memory
    stays bounded however large a document or a batch is.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    hashes = np.asarray(shingle_hashes, dtype=np.uint64)
    a, b = permutations(num_perm, seed)
    a, b = a[:, None], b[:, None]
    docs = len(offsets) - 1
    out = np.full((docs, num_perm), EMPTY, dtype=np.uint64)
    window = max(_WINDOW_BYTES // (8 * num_perm), 1)
    buffer = np.empty(num_perm * window, dtype=np.uint64)
    for low in range(int(offsets[0]), int(offsets[-1]), window):
        high = min(low + window, int(offsets[-1]))
        first = int(np.searchsorted(offsets, low, side="right")) - 1
        doc = np.arange(first, int(np.searchsorted(offsets, high, side="left")))
        begin = np.maximum(offsets[doc], low)
        inside = np.minimum(offsets[doc + 1], high) > begin
        doc, begin = doc[inside], begin[inside] - low
        values = buffer[: num_perm * (high - low)].reshape(num_perm, high - low)
        np.multiply(a, hashes[low:high], out=values)
        values += b
        out[doc] = np.minimum(out[doc], np.minimum.reduceat(values, begin, axis=1).T)
    return out


def estimate_jaccard(sig_a: np.ndarray, sig_b: np.ndarray) -> float:
    """Fraction of equal signature positions; 0.0 when either document has no shingles."""
    if (sig_a == EMPTY).all() or (sig_b == EMPTY).all():
        return 0.0
    return float(np.mean(sig_a == sig_b))


def estimate_jaccard_rows(sigs: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``estimate_jaccard`` of each (row, row) pair of ``sigs``, as float64."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    empty = (sigs == EMPTY).all(axis=1)
    out = np.zeros(len(pairs), dtype=np.float64)
    for low in range(0, len(pairs), _PAIR_CHUNK):
        left, right = pairs[low : low + _PAIR_CHUNK, 0], pairs[low : low + _PAIR_CHUNK, 1]
        share = (sigs[left] == sigs[right]).mean(axis=1)
        out[low : low + _PAIR_CHUNK] = np.where(empty[left] | empty[right], 0.0, share)
    return out
