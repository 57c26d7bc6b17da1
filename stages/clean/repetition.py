"""Gopher repetition signals, one compiled pass per document over its token ids.

``q_top{n}gram_frac`` (n = 2..4): the largest share of a document's token characters taken by the
occurrences of one repeated n-gram. ``q_dup{n}gram_frac`` (n = 5..10): the share of token
characters covered by n-grams that occur more than once in the document.

Each n-gram is named by a dense rank: a token's within its document, then an n-gram's from the
rank of its (n-1)-gram and its last token's, counted in an open-addressing hash table. An n-gram
can only repeat where its (n-1)-gram repeats and its last token does, so each n only looks at
the positions whose shorter gram repeated: for most documents, none are left after a few n.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from common.signal_names import REPETITION_SIGNALS

LONGEST_TOP_N = 4  # q_top2..4gram_frac; then q_dup5..10gram_frac
LONGEST_N = 10
_MIX = np.uint64(0x9E3779B97F4A7C15)


class _Table(NamedTuple):
    """An open-addressing hash table from int64 keys to dense ranks, emptied by a new stamp."""

    keys: np.ndarray
    ranks: np.ndarray
    stamps: np.ndarray
    shift: np.uint64  # 64 less the table's bits: a key's slot is the top bits of key * _MIX


@numba.njit(cache=True, nogil=True)
def _ranks(keys: np.ndarray, table: _Table, stamp: int, rank: np.ndarray, count: np.ndarray) -> int:
    """Dense ranks (in order of first occurrence) of each of ``keys`` into ``rank`` and how often
    each rank occurs into ``count``, with ``table`` under a ``stamp`` not used before; returns how
    many distinct keys there are."""
    mask = len(table.keys) - 1
    distinct = 0
    for i in range(len(keys)):
        key = keys[i]
        slot = np.int64((np.uint64(key) * _MIX) >> table.shift)
        while table.stamps[slot] == stamp and table.keys[slot] != key:
            slot = (slot + 1) & mask  # linear probing
        if table.stamps[slot] != stamp:
            table.stamps[slot], table.keys[slot], table.ranks[slot] = stamp, key, distinct
            count[distinct] = 0
            distinct += 1
        rank[i] = table.ranks[slot]
        count[rank[i]] += 1
    return distinct


@numba.njit(cache=True, nogil=True)
def _document(ids: np.ndarray, cumulative: np.ndarray, table: _Table, stamp: int, out: np.ndarray) -> int:
    """The signals of one document's token ``ids`` (``cumulative``: prefix sums of their lengths)
    into ``out``; returns the last table stamp used."""
    tokens = len(ids)
    total = max(cumulative[tokens], 1)
    token_rank = np.empty(tokens, dtype=np.int64)
    token_count = np.empty(tokens, dtype=np.int64)
    stamp += 1
    distinct = _ranks(ids, table, stamp, token_rank, token_count)
    repeated_token = token_count[token_rank] > 1
    gram_rank = token_rank.copy()
    candidates = np.flatnonzero(repeated_token[:-1] & repeated_token[1:])
    keys = np.empty(tokens, dtype=np.int64)
    rank = np.empty(tokens, dtype=np.int64)
    count = np.empty(tokens, dtype=np.int64)
    for n in range(2, LONGEST_N + 1):
        valid = candidates[candidates <= tokens - n]
        if len(valid) == 0:
            break
        for i in range(len(valid)):
            keys[i] = gram_rank[valid[i]] * distinct + token_rank[valid[i] + n - 1]
        stamp += 1
        _ranks(keys[:len(valid)], table, stamp, rank, count)
        repeated = np.empty(len(valid), dtype=np.bool_)
        best = covered = covered_to = 0
        for i in range(len(valid)):
            at = valid[i]
            gram_rank[at] = rank[i]
            occurrences = count[rank[i]]
            repeated[i] = occurrences > 1
            if not repeated[i]:
                continue
            if n <= LONGEST_TOP_N:
                best = max(best, occurrences * (cumulative[at + n] - cumulative[at]))
            else:  # candidates are in order: each adds the characters past the previous one's end
                covered += cumulative[at + n] - cumulative[max(at, covered_to)]
                covered_to = at + n
        candidates = valid[repeated]
        if len(candidates) == 0:
            break
        out[n - 2] = (best if n <= LONGEST_TOP_N else covered) / total
    return stamp


@numba.njit(cache=True, nogil=True)
def _repetition(ids: np.ndarray, lengths: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out = np.zeros((len(sizes), LONGEST_N - 1))
    bits = 1
    while (1 << bits) < 2 * sizes.max():  # at most half full
        bits += 1
    table = _Table(np.empty(1 << bits, dtype=np.int64), np.empty(1 << bits, dtype=np.int64),
                   np.zeros(1 << bits, dtype=np.int64), np.uint64(64 - bits))
    stamp = start = 0
    for doc in range(len(sizes)):
        end = start + sizes[doc]
        if sizes[doc] >= 2:
            cumulative = np.zeros(sizes[doc] + 1, dtype=np.int64)
            cumulative[1:] = np.cumsum(lengths[start:end])
            stamp = _document(ids[start:end], cumulative, table, stamp, out[doc])
        start = end
    return out


def repetition_signals(ids: np.ndarray, lengths: np.ndarray, sizes: np.ndarray) -> dict[str, np.ndarray]:
    """The repetition signals of a batch of tokenized documents: ``ids`` are 64-bit token ids
    (equal tokens, equal ids), ``lengths`` their characters, both document after document;
    ``sizes`` how many tokens each document has."""
    if len(sizes) == 0:
        return {name: np.zeros(0) for name in REPETITION_SIGNALS}
    out = _repetition(ids.astype(np.int64), lengths.astype(np.int64), sizes.astype(np.int64))
    return {name: out[:, i] for i, name in enumerate(REPETITION_SIGNALS)}  # top2..4, then dup5..10
