"""The writing systems of a batch's letters, from Unicode's Scripts.txt (the copy fontTools ships).

Language ID reads a document's words; the script its letters are written in is a sharper fact
where fastText guesses: text in a script that no target language is written in is not a target
language, whatever its top label. Letters of the Common and Inherited scripts (digits,
punctuation, combining marks) belong to no language and are not counted.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

import numpy as np
from fontTools.unicodedata import Scripts

from stages.clean import batch_text as bt
from stages.clean.batch_text import BatchText

NO_LANGUAGE = ("Zyyy", "Zinh", "Zzzz")  # Common, Inherited, Unknown


@functools.lru_cache(maxsize=1)
def _script_table() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(range starts, the script index of each range, the script codes), from Scripts.txt."""
    names = tuple(sorted(set(Scripts.VALUES)))
    index = {name: i for i, name in enumerate(names)}
    return (np.asarray(Scripts.RANGES, dtype=np.int64),
            np.asarray([index[value] for value in Scripts.VALUES], dtype=np.int64), names)


def known_script(code: str) -> bool:
    """Whether ``code`` is an ISO 15924 script code of Scripts.txt (Latn, Hani, Cyrl, ...)."""
    return code in _script_table()[2] and code not in NO_LANGUAGE


class BatchScripts:
    """The scripts of a batch's letters: per document, how many letters, how many in the target scripts, and
    which script is the most used; and, for a document that mixes scripts, its lines in the target ones."""

    def __init__(self, batch: BatchText, targets: Collection[str]):
        starts, range_script, names = _script_table()
        script = range_script[np.searchsorted(starts, batch.cp, side="right") - 1]
        counted = batch.has(bt.LETTER) & ~np.isin(script, [names.index(n) for n in NO_LANGUAGE])
        self._batch = batch
        self._counted = counted
        self._in_target = counted & np.isin(script, [names.index(code) for code in targets])
        self.letters = batch.per_doc(counted)
        self.in_targets = batch.per_doc(self._in_target)
        per_doc = np.bincount(batch.doc_of[counted] * len(names) + script[counted],
                              minlength=batch.docs * len(names)).reshape(batch.docs, len(names))
        self.dominant = [names[i] for i in per_doc.argmax(axis=1)]

    def target_share(self) -> np.ndarray:
        """The share of each document's letters written in a target script (1.0 for a document with no letters)."""
        return np.where(self.letters > 0, self.in_targets / np.maximum(self.letters, 1), 1.0)

    def target_lines(self, docs: Collection[int]) -> list[str]:
        """For each document of ``docs``, its lines whose letters are mostly in the target scripts (a quotation
        in another script left out), joined by newlines."""
        if not docs:
            return []
        batch = self._batch
        lines = batch.lines()
        kept = (batch.span_counts(self._in_target, lines.start, lines.end) * 2
                >= batch.span_counts(self._counted, lines.start, lines.end))
        start, end = lines.start[kept], lines.end[kept]
        bounds = np.searchsorted(batch.doc_of[start], [*docs, *(d + 1 for d in docs)])  # lines run doc by doc
        first, last = bounds[:len(docs)], bounds[len(docs):]
        return ["\n".join(batch.joined[a:b] for a, b in zip(start[lo:hi].tolist(), end[lo:hi].tolist(), strict=True))
                for lo, hi in zip(first.tolist(), last.tolist(), strict=True)]
