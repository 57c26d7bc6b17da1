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
    """An open-addressing hash table from int64 keys to dense ranks, emptied by a new stamp. A call
    uses only as many slots as its keys need (the top ``bits`` of key * _MIX), so a short document's
    keys stay in a few cache lines however long the batch's longest document is."""

    keys: np.ndarray
    ranks: np.ndarray
    stamps: np.ndarray


class _Workspace(NamedTuple):
    """Per-token buffers of a batch's longest document, reused by every document of the batch."""

    cumulative: np.ndarray  # prefix sums of the token lengths
    token_rank: np.ndarray
    token_count: np.ndarray
    gram_rank: np.ndarray  # per start position: the rank of its n-gram for the current n
    candidates: np.ndarray  # the start positions whose n-gram may repeat, in order
    keys: np.ndarray
    rank: np.ndarray
    count: np.ndarray


@numba.njit(cache=True, nogil=True)
def _ranks(keys: np.ndarray, size: int, table: _Table, stamp: int, rank: np.ndarray, count: np.ndarray) -> int:
    """Dense ranks (in order of first occurrence) of the first ``size`` of ``keys`` into ``rank``
    and how often each rank occurs into ``count``, with ``table`` under a ``stamp`` not used
    before; returns how many distinct keys there are."""
    bits = 1
    while (1 << bits) < 2 * size:  # at most half full
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    distinct = 0
    for i in range(size):
        key = keys[i]
        slot = np.int64((np.uint64(key) * _MIX) >> shift)
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
def _document(ids: np.ndarray, lengths: np.ndarray, table: _Table, work: _Workspace, stamp: int,
              out: np.ndarray) -> int:
    """The signals of one document's token ``ids`` and ``lengths`` into ``out``; returns the last
    table stamp used."""
    tokens = len(ids)
    cumulative = work.cumulative
    for i in range(tokens):
        cumulative[i + 1] = cumulative[i] + lengths[i]
    total = max(cumulative[tokens], 1)
    token_rank, token_count, gram_rank = work.token_rank, work.token_count, work.gram_rank
    candidates, keys, rank, count = work.candidates, work.keys, work.rank, work.count
    stamp += 1
    distinct = _ranks(ids, tokens, table, stamp, token_rank, token_count)
    left = 0
    for i in range(tokens - 1):
        gram_rank[i] = token_rank[i]
        if token_count[token_rank[i]] > 1 and token_count[token_rank[i + 1]] > 1:
            candidates[left] = i
            left += 1
    for n in range(2, LONGEST_N + 1):
        while left > 0 and candidates[left - 1] > tokens - n:  # no n-gram starts there
            left -= 1
        if left == 0:
            break
        for i in range(left):
            keys[i] = gram_rank[candidates[i]] * distinct + token_rank[candidates[i] + n - 1]
        stamp += 1
        _ranks(keys, left, table, stamp, rank, count)
        best = covered = covered_to = 0
        repeated = 0
        for i in range(left):
            at = candidates[i]
            gram_rank[at] = rank[i]
            occurrences = count[rank[i]]
            if occurrences < 2:
                continue
            if n <= LONGEST_TOP_N:
                best = max(best, occurrences * (cumulative[at + n] - cumulative[at]))
            else:  # candidates are in order: each adds the characters past the previous one's end
                covered += cumulative[at + n] - cumulative[max(at, covered_to)]
                covered_to = at + n
            candidates[repeated] = at  # the repeated ones, kept in order
            repeated += 1
        left = repeated
        if left == 0:
            break
        out[n - 2] = (best if n <= LONGEST_TOP_N else covered) / total
    return stamp


@numba.njit(cache=True, nogil=True)
def _repetition(ids: np.ndarray, lengths: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out = np.zeros((len(sizes), LONGEST_N - 1))
    longest = sizes.max()
    slots = 2
    while slots < 2 * longest:
        slots *= 2
    table = _Table(np.empty(slots, dtype=np.int64), np.empty(slots, dtype=np.int64), np.zeros(slots, dtype=np.int64))
    work = _Workspace(np.zeros(longest + 1, dtype=np.int64), np.empty(longest, dtype=np.int64),
                      np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64),
                      np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64),
                      np.empty(longest, dtype=np.int64), np.empty(longest, dtype=np.int64))
    stamp = start = 0
    for doc in range(len(sizes)):
        end = start + sizes[doc]
        if sizes[doc] >= 2:
            stamp = _document(ids[start:end], lengths[start:end], table, work, stamp, out[doc])
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
