"""Spam patterns: the configured literals and regular expressions, matched over a whole batch.

A text's count is the sum over the patterns: for a plain literal, its occurrences as ``str.count``
counts them (literals may overlap each other; each is counted); for the patterns that use regex
syntax, the matches of their one compiled alternation.

Over a batch, the literals are looked for together by one compiled scan (numba): a table of
their first two characters picks the positions worth comparing. The alternation runs only on
the texts where one of its patterns can match: those holding the plain characters every match
of that pattern holds (``% off`` for ``\\d+% off``), found in the same scan; a pattern without
such characters is run once over all texts joined by NUL. On each such text it runs with only
the patterns that can match there, in their order: a branch that matches nowhere in a text
changes none of the alternation's matches (unless a pattern holds capture groups, whose numbers
a shorter alternation would change: then every text runs the whole alternation).
"""

from __future__ import annotations

import functools
import re
import re._constants as sre_constants
import re._parser as sre_parse
from dataclasses import dataclass

import numba
import numpy as np

_HEAD_BITS = 16
_HEAD_BASE = 1_000_003
# ^ $ \A \Z and lookarounds (not escaped): what a pattern could see across the NUL between two texts. A lookaround
# that only says "no digit here" sees the NUL as it sees a text's edge, so it may be joined.
_UNJOINABLE_RE = re.compile(r"(?<!\\)(?:\\\\)*(?:[$]|\\[AZ]|\(\?<?[=!])|(?<![\\\[])\^")
_NOT_A_DIGIT_RE = re.compile(r"\(\?<?!\\d\)")


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


@numba.njit(cache=True, nogil=True)
def _head(first: int, second: int) -> int:
    return (first * _HEAD_BASE + second) & ((1 << _HEAD_BITS) - 1)


@numba.njit(cache=True, nogil=True)
def _scan(cp: np.ndarray, starts: np.ndarray, needles: np.ndarray, needle_starts: np.ndarray, literals: int,
          self_overlapping: np.ndarray, bucket_starts: np.ndarray, buckets: np.ndarray):
    """Every needle found in each text ``[starts[t], starts[t + 1])`` of ``cp``: per text, the literal
    matches and which triggers (needle ``literals`` and on) occur; and each literal match's text and
    offset. A self-overlapping literal is counted without overlaps, as ``str.count`` counts it."""
    texts = len(starts) - 1
    counts = np.zeros(texts, dtype=np.int64)
    triggered = np.zeros((texts, len(needle_starts) - 1 - literals), dtype=np.bool_)
    hit_text = np.empty(64, dtype=np.int64)
    hit_offset = np.empty(64, dtype=np.int64)
    hits = 0
    last_end = np.empty(len(needle_starts) - 1, dtype=np.int64)
    for text in range(texts):
        start, end = starts[text], starts[text + 1]
        last_end[:] = -1
        for at in range(start, end - 1):
            head = _head(cp[at], cp[at + 1])
            for slot in range(bucket_starts[head], bucket_starts[head + 1]):
                needle = buckets[slot]
                first, length = needle_starts[needle], needle_starts[needle + 1] - needle_starts[needle]
                if at + length > end:
                    continue
                matched = True
                for i in range(length):
                    if cp[at + i] != needles[first + i]:
                        matched = False
                        break
                if not matched:
                    continue
                if needle >= literals:
                    triggered[text, needle - literals] = True
                    continue
                if self_overlapping[needle]:
                    if at < last_end[needle]:
                        continue
                    last_end[needle] = at + length
                counts[text] += 1
                if hits == len(hit_text):
                    hit_text = np.concatenate((hit_text, np.empty(hits, dtype=np.int64)))
                    hit_offset = np.concatenate((hit_offset, np.empty(hits, dtype=np.int64)))
                hit_text[hits], hit_offset[hits] = text, at - start
                hits += 1
    return counts, triggered, hit_text[:hits], hit_offset[:hits]


class SpamMatcher:
    """Counts matches of the configured spam patterns in lowercased text (see the module's docstring)."""

    def __init__(self, patterns: tuple[str, ...]):
        self.literals = tuple(p for p in patterns if re.escape(p) == p.replace(" ", "\\ "))
        others = [p for p in patterns if p not in self.literals]
        self._others = tuple(others)
        self.regex = self._alternation(tuple(range(len(others)))) if others else None
        parts = [re.compile(p) for p in others]
        self._numbered_groups = any(part.groups for part in parts)
        triggers = [_required_literal(part) for part in parts]
        self._unanchored = tuple(i for i, trigger in enumerate(triggers) if trigger is None)
        self._unanchored_parts = [parts[i] for i in self._unanchored]
        self._triggered_parts = np.array([i for i, trigger in enumerate(triggers) if trigger is not None], dtype=np.int64)
        # Anchors, lookarounds and empty matches would see the neighbouring texts: such patterns
        # make every text a candidate.
        self._joinable = all(_UNJOINABLE_RE.search(_NOT_A_DIGIT_RE.sub("", part.pattern)) is None
                             and part.search("") is None
                             for part in self._unanchored_parts)
        self._one_char = tuple(literal for literal in self.literals if len(literal) == 1)
        # Needles: the literals of two or more characters (counted), then the regex patterns'
        # required characters (triggers).
        counted = [literal for literal in self.literals if len(literal) > 1]
        self._needle_list = [*counted, *(t for t in triggers if t is not None)]
        self._literal_needles = len(counted)
        self._needles = _code_points("".join(self._needle_list))
        self._needle_starts = np.concatenate(([0], np.cumsum([len(n) for n in self._needle_list]))).astype(np.int64)
        # A literal whose end can overlap its own start ("扫一扫") is counted without overlaps.
        self._self_overlapping = np.array([any(n[:k] == n[-k:] for k in range(1, len(n))) for n in self._needle_list],
                                          dtype=bool)
        heads = np.array([_head(ord(n[0]), ord(n[1])) for n in self._needle_list], dtype=np.int64)
        order = np.argsort(heads, kind="stable")
        self._buckets = order.astype(np.int64)
        self._bucket_starts = np.searchsorted(heads[order], np.arange((1 << _HEAD_BITS) + 1)).astype(np.int64)

    def batch_hits(self, lowered: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Matches in each lowercased text of a batch; and the text and offset of each literal
        match of two or more characters, text after text."""
        starts = np.concatenate(([0], np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)))))
        counts, triggered, hit_text, hit_offset = _scan(
            _code_points("".join(lowered)), starts, self._needles, self._needle_starts, self._literal_needles,
            self._self_overlapping, self._bucket_starts, self._buckets)
        for literal in self._one_char:
            counts += np.fromiter((text.count(literal) for text in lowered), dtype=np.int64, count=len(lowered))
        if self.regex is not None:
            unanchored = self._unanchored_candidates(lowered)
            for text in sorted(set(np.flatnonzero(triggered.any(axis=1)).tolist()) | unanchored):
                parts = {*self._triggered_parts[triggered[text]].tolist(), *(self._unanchored if text in unanchored else ())}
                regex = self.regex if self._numbered_groups else self._alternation(tuple(sorted(parts)))
                counts[text] += len(regex.findall(lowered[text]))
        return counts, hit_text, hit_offset

    @functools.lru_cache(maxsize=256)  # noqa: B019 (matchers are cached for the process themselves)
    def _alternation(self, parts: tuple[int, ...]) -> re.Pattern:
        """The regex patterns ``parts`` (indices, in order) as one alternation."""
        return re.compile("|".join(f"(?:{self._others[i]})" for i in parts))

    def other_offsets(self, lowered: str) -> list[int]:
        """Where the regex patterns and one-character literals match in one lowercased text (``batch_hits``
        gives the other literals' offsets)."""
        found = [m.start() for m in self.regex.finditer(lowered)] if self.regex is not None else []
        for literal in self._one_char:
            at = lowered.find(literal)
            while at >= 0:
                found.append(at)
                at = lowered.find(literal, at + 1)
        return found

    def line_hit(self, line: str) -> bool:
        """Whether a lowercased line holds a one-character literal or a regex match (the other
        literals are found by ``batch_hits``)."""
        return (self.regex is not None and self.regex.search(line) is not None) or any(
            literal in line for literal in self._one_char)

    def _unanchored_candidates(self, lowered: list[str]) -> set[int]:
        """The texts where a pattern without required characters matches (a match over a NUL
        separator marks every text it touches)."""
        if not self._unanchored_parts:
            return set()
        if not self._joinable:
            return set(range(len(lowered)))
        joined = "\0".join(lowered)
        ends = np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered)) + 1) - 1
        found: set[int] = set()
        for part in self._unanchored_parts:
            for match in part.finditer(joined):
                first, last = np.searchsorted(ends, (match.start(), match.end()))
                found.update(range(int(first), min(int(last), len(lowered) - 1) + 1))
        return found


def _required_literal(pattern: re.Pattern) -> str | None:
    """The longest run of plain characters (at least two, no newline) that every match of
    ``pattern`` holds, read from its top-level sequence; None when there is none."""
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        items = list(sre_parse.parse(pattern.pattern, pattern.flags))
    except (re.error, TypeError, ValueError):
        return None
    best = current = ""
    for op, value in items:
        if op is sre_constants.LITERAL and chr(value) != "\n":
            current += chr(value)
            continue
        best, current = max(best, current, key=len), ""
    best = max(best, current, key=len)
    return best if len(best) >= 2 else None


def text_hits(text: int, hit_text: np.ndarray, hit_offset: np.ndarray) -> np.ndarray:
    """The offsets of the literal matches in text ``text`` of a batch (``SpamMatcher.batch_hits``' hits, which
    come text after text)."""
    return hit_offset[np.searchsorted(hit_text, text):np.searchsorted(hit_text, text, side="right")]


@functools.lru_cache(maxsize=4)
def spam_matcher(patterns: tuple[str, ...]) -> SpamMatcher | None:
    """A cached matcher for the configured patterns (None when there are none)."""
    return SpamMatcher(patterns) if patterns else None


@dataclass(frozen=True)
class SpamScan:
    """A batch's texts lowercased and the spam matcher's hits in them (``SpamMatcher.batch_hits``): scanned once,
    and again only for the texts that change (the line filters remove lines from a few)."""

    texts: list[str]
    lowered: list[str]
    counts: np.ndarray
    hit_text: np.ndarray
    hit_offset: np.ndarray

    @classmethod
    def of(cls, texts: list[str], spam: SpamMatcher) -> SpamScan:
        """Lowercase and scan ``texts``."""
        lowered = [text.lower() for text in texts]
        return cls(list(texts), lowered, *spam.batch_hits(lowered))

    def updated(self, texts: list[str], spam: SpamMatcher) -> SpamScan:
        """The scan of ``texts``: the same batch with some texts replaced (told apart by identity)."""
        changed = [i for i, (old, new) in enumerate(zip(self.texts, texts, strict=True)) if old is not new]
        if not changed:
            return self
        part = SpamScan.of([texts[i] for i in changed], spam)
        lowered, counts = list(self.lowered), self.counts.copy()
        for k, i in enumerate(changed):
            lowered[i], counts[i] = part.lowered[k], part.counts[k]
        kept = ~np.isin(self.hit_text, changed)
        hit_text = np.concatenate((self.hit_text[kept], np.array(changed, dtype=np.int64)[part.hit_text]))
        hit_offset = np.concatenate((self.hit_offset[kept], part.hit_offset))
        order = np.argsort(hit_text, kind="stable")
        return SpamScan(list(texts), lowered, counts, hit_text[order], hit_offset[order])


def spam_line_frac(texts: list[str], spam: SpamMatcher, scan: SpamScan | None = None) -> np.ndarray:
    """Share of non-empty lines with a spam match, for documents with at least two matches (else 0); ``scan``:
    the scan of ``texts``, if the caller has one."""
    scan = scan or SpamScan.of(texts, spam)
    lowered, counts, hit_text, hit_offset = scan.lowered, scan.counts, scan.hit_text, scan.hit_offset
    fraction = np.zeros(len(texts))
    for d in np.flatnonzero(counts >= 2).tolist():
        hits = np.sort(text_hits(d, hit_text, hit_offset))
        spammy = lines = 0
        start = 0
        for line in lowered[d].split("\n"):
            end = start + len(line)
            if line.strip():
                lines += 1
                first = np.searchsorted(hits, start)
                spammy += (first < len(hits) and hits[first] < end) or spam.line_hit(line)
            start = end + 1
        fraction[d] = spammy / max(lines, 1)
    return fraction
