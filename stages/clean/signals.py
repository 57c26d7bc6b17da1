"""Quality signals (the ``q_*`` columns): computed once per document, judged later by rules.

Everything is CJK-aware by construction: a Han character is one token and a run of other
letters/digits is one word; "alphabetic" is decided per script (``str.isalpha`` is true for
Han characters); ``。！？…`` count as terminal punctuation next to ``.!?``.

The signals of a batch are computed together, with numpy over the batch's code points
(``BatchText``); the few that need a regular expression with back-references or many
alternatives are computed per document, only for the documents a vectorized scan shows could
score above zero. tests/signals_reference.py defines each signal one document at a time.
"""

from __future__ import annotations

import functools
import re
import re._constants as sre_constants
import re._parser as sre_parse

import numpy as np

from common.signal_names import REPETITION_SIGNALS, SCALAR_SIGNALS
from stages.clean import batch_text as bt
from stages.clean import navigation as navigation_rule
from stages.clean.batch_text import BatchText, mix64
from stages.clean.navigation import MIN_NAV_LINES
from stages.clean.textsets import FUNCTION_WORD_CHARS, FUNCTION_WORD_KEYS, LETTER_BITS

# A unit of 1-3 characters starting with a symbol (★, ☆彡, !!, =-), repeated 4+ times in a row.
# Box-drawing characters (U+2500-U+257F) are the rules of text tables, not decoration.
REPEATED_UNIT_RE = re.compile(r"([^\w\s\u2500-\u257f](?:[^\w\s]{0,2}|\w))\1{3,}")
MAX_UNIT = 3
STUB_RE = re.compile(
    r"TODO:?\s*implement|[\"']not implemented[\"']|raise\s+NotImplementedError|NotImplementedException"
    r"|UnsupportedOperationException|unimplemented!\(|todo!\(|pass\s*#\s*TODO|//\s*TODO|#\s*TODO|/\*\s*TODO",
    re.IGNORECASE,
)
STUB_HINTS = ("TODO", "todo", "Todo", "mplemented", "Unsupported")
FUNCTION_RE = re.compile(
    r"^\s*(?:def |async def |function\b|func |fn |pub fn |(?:public|private|protected|static|final|\s)+[\w<>\[\],\s]+\s+\w+\s*\([^)]*\)\s*\{?\s*$)",
    re.MULTILINE,
)
SHORT_LINE_CHARS = 30
LINE_SIGNALS = ("q_lines", "q_dup_line_frac", "q_dup_line_char_frac", "q_bullet_line_frac", "q_ellipsis_line_frac",
                "q_terminal_punct_line_frac", "q_short_line_frac", "q_nav_line_frac")


def _group(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each key, how often it occurs in ``keys`` and its dense rank among the distinct keys.

    Sorted by a plain sort of the keys (their high bits, when they need more than the room
    left) with each key's index in the low bits: three times cheaper than an argsort. In the
    rare batch where two different keys share the bits kept, by an argsort of the whole keys.
    """
    values = keys.view(np.uint64)
    index_bits = max(int(len(keys)).bit_length(), 1)
    dropped = np.uint64(max(int(values.max()).bit_length() + index_bits - 64, 0))  # low key bits left out
    packed = np.sort(((values >> dropped) << np.uint64(index_bits)) | np.arange(len(keys), dtype=np.uint64))
    order = (packed & np.uint64((1 << index_bits) - 1)).astype(np.int64)
    ordered = values[order]
    new_key = ordered[1:] != ordered[:-1]
    if dropped and np.any(new_key & ((packed[1:] >> np.uint64(index_bits)) == (packed[:-1] >> np.uint64(index_bits)))):
        order = np.argsort(values)
        ordered = values[order]
        new_key = ordered[1:] != ordered[:-1]
    run_id = np.cumsum(np.concatenate(([True], new_key))) - 1
    occurrences = np.empty(len(keys), dtype=np.int64)
    occurrences[order] = np.bincount(run_id)[run_id]
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = run_id
    return occurrences, rank


def repetition_signals(ids: np.ndarray, lengths: np.ndarray, sizes: np.ndarray) -> dict[str, np.ndarray]:
    """Gopher repetition for a batch of tokenized documents, vectorized over the whole batch.

    ``ids`` are 64-bit token ids (equal tokens, equal ids), ``lengths`` their characters, both
    document after document; ``sizes`` how many tokens each document has.
    ``q_top{n}gram_frac`` (n = 2..4): the largest share of a document's token characters taken
    by the occurrences of one repeated n-gram. ``q_dup{n}gram_frac`` (n = 5..10): the share of
    token characters covered by n-grams that occur more than once in the document.
    """
    docs = len(sizes)
    result = {name: np.zeros(docs) for name in REPETITION_SIGNALS}
    total = len(ids)
    if total == 0:
        return result
    doc_of = np.repeat(np.arange(docs), sizes)
    ends = np.cumsum(sizes)
    room = ends[doc_of] - np.arange(total)  # tokens from each position to its document's end
    cumulative = np.concatenate(([0], np.cumsum(lengths)))
    total_chars = np.bincount(doc_of, weights=lengths, minlength=docs)
    total_chars[total_chars == 0] = 1
    # Every n-gram is named by a dense rank: a token's within its document, then an n-gram's
    # from the rank of its (n-1)-gram and its last token's.
    # One token in two documents is two keys.
    token_count, token_rank = _group(ids ^ mix64(doc_of.astype(np.uint64) + np.uint64(1)).view(np.int64))
    distinct = int(token_rank.max()) + 1
    gram_rank = token_rank.copy()
    # An n-gram can only repeat where its (n-1)-gram repeats and its last token does, so each n
    # only looks at the positions whose shorter gram repeated.
    repeated_token = token_count > 1
    candidates = np.flatnonzero(repeated_token[:-1] & repeated_token[1:] & (room[:-1] >= 2))
    for n in range(2, 11):
        valid = candidates[room[candidates] >= n]
        if len(valid) == 0:
            break
        occurrences, rank = _group(gram_rank[valid] * distinct + token_rank[valid + n - 1])
        gram_rank[valid] = rank
        repeated = occurrences > 1
        candidates = valid[repeated]
        if len(candidates) == 0:
            break
        if n <= 4:
            gram_chars = cumulative[candidates + n] - cumulative[candidates]
            share = occurrences[repeated] * gram_chars
            groups = np.flatnonzero(np.concatenate(([True], doc_of[candidates][1:] != doc_of[candidates][:-1])))
            result[f"q_top{n}gram_frac"][doc_of[candidates[groups]]] = np.maximum.reduceat(share, groups)
            result[f"q_top{n}gram_frac"] /= total_chars
        else:
            # Candidates are in order and equally long, so the characters each adds to the
            # union of the ones before it start where the previous one ends.
            gram_end = candidates + n
            covered_from = np.maximum(candidates, np.concatenate(([0], gram_end[:-1])))
            chars = cumulative[gram_end] - cumulative[covered_from]
            result[f"q_dup{n}gram_frac"] = np.bincount(doc_of[candidates], weights=chars, minlength=docs) / total_chars
    return result


def _symbol_run_chars(text: str) -> int:
    return sum(len(match.group(0)) for match in REPEATED_UNIT_RE.finditer(text))


def _stub_frac(text: str) -> float:
    """Unfinished-stub markers per function defined; 0 below two markers (one TODO is normal)."""
    if not any(marker in text for marker in STUB_HINTS):
        return 0.0
    stubs = len(STUB_RE.findall(text))
    if stubs < 2:
        return 0.0
    return stubs / max(len(FUNCTION_RE.findall(text)), 1)


class SpamMatcher:
    """Counts matches of the configured spam patterns in lowercased text.

    A text's count is the sum over the patterns: for a plain literal, its occurrences as
    ``str.count`` counts them (literals may overlap each other; each is counted); for the
    patterns that use regex syntax, the matches of their one compiled alternation.

    Over a batch, the literals are looked for together, in one pass: a hash table of their
    first few characters picks the positions worth comparing. The alternation runs only on the
    texts where one of its patterns can match: those holding the plain characters every match
    of that pattern holds (``% off`` for ``\\d+% off``), found in the same pass; a pattern
    without such characters is run once over all texts joined by NUL.
    """

    def __init__(self, patterns: tuple[str, ...]):
        self.literals = tuple(p for p in patterns if re.escape(p) == p.replace(" ", "\\ "))
        others = [p for p in patterns if p not in self.literals]
        self.regex = re.compile("|".join(f"(?:{p})" for p in others)) if others else None
        parts = [re.compile(p) for p in others]
        triggers = {part.pattern: _required_literal(part) for part in parts}
        self._unanchored_parts = [part for part in parts if triggers[part.pattern] is None]
        # Anchors, lookarounds and empty matches would see the neighbouring texts: such patterns
        # make every text a candidate.
        self._joinable = all(_UNJOINABLE_RE.search(part.pattern) is None and part.search("") is None
                             for part in self._unanchored_parts)
        self._one_char = tuple(literal for literal in self.literals if len(literal) == 1)
        # Needles: the literals (counted), then the regex patterns' required characters (triggers).
        needles = [*self.literals, *(t for t in triggers.values() if t is not None)]
        self._by_head: dict[tuple[int, int], list[tuple[int, str]]] = {}
        for index, needle in enumerate(needles):
            if len(needle) > 1:
                width = min(len(needle), _HEAD_CHARS)
                self._by_head.setdefault((width, _head_hash(needle[:width])), []).append((index, needle))
        self._widths = sorted({width for width, _ in self._by_head})
        self._head_table = np.zeros(1 << _HEAD_TABLE_BITS, dtype=bool)
        for _, head in self._by_head:
            self._head_table[_head_slot(np.array([head], dtype=np.uint64))] = True
        # A literal whose end can overlap its own start ("扫一扫") is counted without overlaps.
        self._self_overlapping = {i for i, lit in enumerate(self.literals)
                                  if any(lit[:k] == lit[-k:] for k in range(1, len(lit)))}

    def hits(self, lowered: str) -> int:
        """Matches in one lowercased text."""
        count = sum(lowered.count(literal) for literal in self.literals)
        return count + (len(self.regex.findall(lowered)) if self.regex else 0)

    def batch_hits(self, lowered: list[str]) -> tuple[np.ndarray, list[list[int]]]:
        """``hits`` of each lowercased text of a batch, and the offsets of the literals found in each."""
        counts, offsets, triggered = self._needle_hits(lowered)
        for literal in self._one_char:
            counts += np.fromiter((text.count(literal) for text in lowered), dtype=np.int64, count=len(lowered))
        if self.regex is not None:
            for text in sorted(triggered | self._unanchored_candidates(lowered)):
                counts[text] += len(self.regex.findall(lowered[text]))
        return counts, offsets

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

    def _needle_hits(self, lowered: list[str]) -> tuple[np.ndarray, list[list[int]], set[int]]:
        """Per text: literal matches, their offsets; and the texts holding a regex trigger."""
        docs = len(lowered)
        counts = np.zeros(docs, dtype=np.int64)
        offsets: list[list[int]] = [[] for _ in range(docs)]
        triggered: set[int] = set()
        if not self._by_head or not docs:
            return counts, offsets, triggered
        joined = "\n".join(lowered)  # no needle holds a newline: none matches across two texts
        cp = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
        text_starts = np.concatenate(([0], np.cumsum(np.fromiter(map(len, lowered), dtype=np.int64, count=docs) + 1)))
        starts_list = text_starts.tolist()
        last_end: dict[tuple[int, int], int] = {}
        heads = cp.copy()
        for width in range(2, self._widths[-1] + 1):
            heads[:-(width - 1)] = heads[:-(width - 1)] * _HEAD_BASE + cp[width - 1:]
            heads[-(width - 1):] = 0
            if width not in self._widths:
                continue
            positions = np.flatnonzero(self._head_table[_head_slot(heads)])
            texts_of = (np.searchsorted(text_starts, positions, side="right") - 1).tolist()
            for position, head, text in zip(positions.tolist(), heads[positions].tolist(), texts_of, strict=True):
                for index, needle in self._by_head.get((width, head), ()):
                    if not joined.startswith(needle, position):
                        continue
                    if index >= len(self.literals):
                        triggered.add(text)
                        continue
                    if index in self._self_overlapping:
                        if position < last_end.get((text, index), -1):
                            continue
                        last_end[(text, index)] = position + len(needle)
                    counts[text] += 1
                    offsets[text].append(position - starts_list[text])
        return counts, offsets, triggered


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


_HEAD_CHARS = 4
_HEAD_TABLE_BITS = 16
_HEAD_BASE = np.uint64(0x100000001B3)
# ^ $ \A \Z and lookarounds (not escaped): what a pattern could see across the NUL between two texts.
_UNJOINABLE_RE = re.compile(r"(?<!\\)(?:\\\\)*(?:[$]|\\[AZ]|\(\?<?[=!])|(?<![\\\[])\^")


def _head_hash(head: str) -> int:
    """The hash of ``head`` as ``SpamMatcher._literal_hits`` computes it at each position."""
    value = 0
    for char in head:
        value = (value * int(_HEAD_BASE) + ord(char)) % 2**64
    return value


def _head_slot(heads: np.ndarray) -> np.ndarray:
    """A slot of the head table for each head hash (a multiplicative hash)."""
    return ((heads * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _HEAD_TABLE_BITS)).astype(np.int64)


@functools.lru_cache(maxsize=4)
def spam_matcher(patterns: tuple[str, ...]) -> SpamMatcher | None:
    """A cached matcher for the configured patterns (None when there are none)."""
    return SpamMatcher(patterns) if patterns else None


def _tokens(batch: BatchText) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of every token (``[HAN]|[^\\W HAN _]+``: one Han character, or a run of
    other letters and digits), in batch positions, document after document."""
    runs = batch.runs(batch.has(bt.TOKEN))
    run_begin = np.zeros(batch.size, dtype=bool)
    run_begin[runs.start] = True
    starts = np.flatnonzero(run_begin | batch.has(bt.HAN))
    ends = starts + 1
    ends[run_begin[starts]] = runs.end
    return starts, ends


def _latin_words(batch: BatchText) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document: how many words ``[A-Za-z\\u00c0-\\u024f]+(?:['’][A-Za-z]+)?`` matches, their
    characters, and how many of them are English function words.

    Every letter run is covered by the matches; a match may also take an apostrophe and the
    ASCII letters after it ("don't"), which then start no word of their own, unless that run
    was itself taken whole by the match before it ("rock'n'roll" is "rock'n" and "roll").
    """
    runs = batch.runs(batch.has(bt.LATIN))
    non_ascii = np.concatenate(([0], np.cumsum(batch.has(bt.LATIN) & ~batch.has(bt.ASCII_LETTER))))
    all_ascii = non_ascii[runs.end] == non_ascii[runs.start]
    k = len(runs.start)
    linked = np.zeros(k, dtype=bool)
    if k > 1:
        start = runs.start[1:]
        linked[1:] = ((runs.end[:-1] == start - 1) & batch.has(bt.APOSTROPHE)[start - 1]
                      & batch.has(bt.ASCII_LETTER)[start] & (batch.doc_of[start - 2] == batch.doc_of[start]))
    # A run is taken whole by the match before it on every other step of a chain of such runs.
    whole_candidate = linked & all_ascii
    index = np.arange(k)
    chain_start = np.maximum.accumulate(np.where(whole_candidate, -1, index)) + 1
    taken_whole = whole_candidate & ((index - chain_start) % 2 == 0)
    taken = linked & ~np.concatenate(([False], taken_whole[:-1]))
    doc = batch.doc_of[runs.start]
    words = np.bincount(doc, weights=~taken_whole, minlength=batch.docs)
    chars = np.bincount(doc, weights=runs.length + taken, minlength=batch.docs)
    # A function word is a match of its own run alone: all ASCII, no apostrophe either side.
    alone = ~taken & ~np.concatenate((taken[1:], [False])) & all_ascii & (runs.length <= FUNCTION_WORD_CHARS)
    keys = np.zeros(int(alone.sum()), dtype=np.int64)
    starts, lengths = runs.start[alone], runs.length[alone]
    for offset in range(FUNCTION_WORD_CHARS):
        present = lengths > offset
        letters = (batch.cp[np.where(present, starts + offset, 0)] | 0x20) - 96
        keys += np.where(present, letters << (LETTER_BITS * offset), 0)
    function = np.isin(keys, FUNCTION_WORD_KEYS)
    function_words = np.bincount(doc[alone], weights=function, minlength=batch.docs)
    return words, chars, function_words


def _has_repeated_unit(batch: BatchText) -> np.ndarray:
    """Per document: whether REPEATED_UNIT_RE could match (a symbol, and the same character 1-3
    places later three more times); a superset of the documents it matches."""
    head = batch.has(bt.SYMBOL_HEAD)
    found = np.zeros(batch.size, dtype=bool)
    for unit in range(1, MAX_UNIT + 1):
        repeats = head.copy()
        for times in range(1, 4):
            shift = unit * times
            same = np.zeros(batch.size, dtype=bool)
            same[:-shift] = batch.cp[shift:] == batch.cp[:-shift]
            repeats &= same & batch.followed_by(np.ones(batch.size, dtype=bool), shift)
        found |= repeats
    return batch.per_doc(found) > 0


def _containing(batch: BatchText, needles: tuple[str, ...]) -> list[int]:
    """The documents whose text holds any of ``needles`` (one scan of the batch per needle)."""
    found: set[int] = set()
    for needle in needles:
        position = batch.joined.find(needle)
        while position >= 0:
            doc = int(np.searchsorted(batch.starts, position, side="right")) - 1
            if position + len(needle) <= batch.starts[doc + 1]:  # not across two documents
                found.add(doc)
                position = batch.joined.find(needle, int(batch.starts[doc + 1]))
            else:
                position = batch.joined.find(needle, position + 1)
    return sorted(found)


def _line_signals(batch: BatchText) -> dict[str, np.ndarray]:
    """Line-level signals: duplicates, bullets, ellipses, terminal punctuation, short lines, navigation.

    Lines are split at "\\n", stripped, empty ones left out. A line counts as duplicated when it
    repeats the line before it, or when it and the line after it repeat an earlier pair of
    lines: repeated blocks (boilerplate, spam) count, while a label, attribution, speaker prompt
    or table rule that recurs between different lines (formatting) does not.
    """
    lines = batch.lines()
    start, end, length = lines.start, lines.end, lines.length
    if len(start) == 0:
        return {name: np.zeros(batch.docs) for name in LINE_SIGNALS}
    doc = batch.doc_of[start]
    count = np.bincount(doc, minlength=batch.docs).astype(np.float64)
    same_as_next = np.concatenate((doc[1:] == doc[:-1], [False]))
    text = batch.span_hashes(start, end)
    after = np.where(same_as_next, np.concatenate((text[1:], [np.uint64(0)])), np.uint64(0x5BD1E995))
    repeats_before = np.concatenate(([False], same_as_next[:-1] & (text[1:] == text[:-1])))
    pair = (text * np.uint64(0xC2B2AE3D27D4EB4F) + after) * np.uint64(0x165667B19E3779F9) + doc.astype(np.uint64)
    order = np.argsort(pair, kind="stable")
    ordered = pair[order]
    earlier = np.zeros(len(pair), dtype=bool)
    earlier[order] = np.concatenate(([False], ordered[1:] == ordered[:-1]))
    duplicated = repeats_before | earlier
    last = batch.cp[end - 1]
    ellipsis = (last == ord("…")) | ((length >= 3) & (last == 46) & (batch.cp[end - 2] == 46) & (batch.cp[np.maximum(end - 3, 0)] == 46))
    lines_or_one = np.maximum(count, 1)
    chars = np.bincount(doc, weights=length, minlength=batch.docs)
    columns = {
        "q_lines": count,
        "q_dup_line_frac": np.bincount(doc, weights=duplicated, minlength=batch.docs) / lines_or_one,
        "q_dup_line_char_frac": np.bincount(doc, weights=length * duplicated, minlength=batch.docs) / np.maximum(chars, 1),
        "q_bullet_line_frac": np.bincount(doc, weights=batch.has(bt.BULLET)[start], minlength=batch.docs) / lines_or_one,
        "q_ellipsis_line_frac": np.bincount(doc, weights=ellipsis, minlength=batch.docs) / lines_or_one,
        "q_terminal_punct_line_frac": np.bincount(doc, weights=batch.has(bt.TERMINAL)[end - 1], minlength=batch.docs) / lines_or_one,
        "q_short_line_frac": np.bincount(doc, weights=length <= SHORT_LINE_CHARS, minlength=batch.docs) / lines_or_one,
    }
    scored = count[doc] >= MIN_NAV_LINES
    kinds = navigation_rule.line_kinds(batch, start[scored], end[scored])
    entries = np.bincount(doc[scored], weights=kinds == 1, minlength=batch.docs)
    counted = np.bincount(doc[scored], weights=kinds >= 0, minlength=batch.docs)
    columns["q_nav_line_frac"] = navigation_rule.share(entries, counted)
    return columns


def _spam_line_frac(texts: list[str], spam: SpamMatcher) -> np.ndarray:
    """Share of non-empty lines with a spam match, for documents with at least two matches (else 0)."""
    lowered = [text.lower() for text in texts]
    fraction = np.zeros(len(texts))
    counts, offsets = spam.batch_hits(lowered)
    for d in np.flatnonzero(counts >= 2).tolist():
        hits = np.sort(np.array(offsets[d], dtype=np.int64))
        spammy = lines = 0
        start = 0
        for line in lowered[d].split("\n"):
            end = start + len(line)
            if line.strip():
                lines += 1
                first = np.searchsorted(hits, start)
                literal_hit = first < len(hits) and hits[first] < end
                spammy += literal_hit or (spam.regex is not None and spam.regex.search(line) is not None) or any(
                    literal in line for literal in spam._one_char)
            start = end + 1
        fraction[d] = spammy / max(lines, 1)
    return fraction


def compute_signals(texts: list[str], spam: SpamMatcher | None = None) -> dict[str, np.ndarray]:
    """Every q_* signal for a batch of documents, as one float64 array per signal."""
    batch = BatchText(texts)
    docs = batch.docs
    columns = {name: np.zeros(docs) for name in (*SCALAR_SIGNALS, *REPETITION_SIGNALS)}
    if batch.size == 0:
        return columns
    token_start, token_end = _tokens(batch)
    token_doc = batch.doc_of[token_start]
    tokens = np.bincount(token_doc, minlength=docs).astype(np.float64)
    tokens_or_one = np.maximum(tokens, 1)
    non_digit = np.concatenate(([0], np.cumsum(~batch.has(bt.DIGIT))))
    digit_tokens = np.bincount(token_doc, weights=non_digit[token_end] == non_digit[token_start], minlength=docs)
    non_space = np.maximum(batch.per_doc(~batch.has(bt.SPACE)), 1)
    han = batch.per_doc(batch.has(bt.HAN))
    words, word_chars, function_words = _latin_words(batch)
    dots = batch.runs(batch.cp == 46)
    symbols = (batch.per_doc(batch.cp == 35) + np.bincount(batch.doc_of[dots.start], weights=dots.length // 3, minlength=docs)
               + batch.per_doc(batch.cp == 0x2026))
    debris = batch.per_doc(batch.has(bt.LATIN1_LETTER) & batch.followed_by(batch.has(bt.DEBRIS_TAIL)))
    orphan_lead = batch.has(bt.ORPHAN_LEAD)
    orphans = batch.per_doc(orphan_lead & (batch.doc_last | batch.followed_by(batch.cp < 0x80)))
    marks = debris + orphans
    latin1_letters = batch.per_doc(batch.has(bt.LATIN1_LETTER))
    common = batch.per_doc(batch.has(bt.COMMON_HAN))
    symbol_runs = np.zeros(docs)
    for d in np.flatnonzero(_has_repeated_unit(batch)).tolist():
        symbol_runs[d] = _symbol_run_chars(texts[d])
    stubs = np.zeros(docs)
    for d in _containing(batch, STUB_HINTS):
        stubs[d] = _stub_frac(texts[d])
    columns |= {
        "q_chars": batch.lengths.astype(np.float64),
        "q_tokens": tokens,
        "q_han_frac": han / np.maximum(han + word_chars, 1),
        "q_latin_words": words,
        "q_mean_word_len": np.where(words > 0, word_chars / np.maximum(words, 1), 0.0),
        "q_symbol_word_ratio": symbols / tokens_or_one,
        "q_alpha_token_frac": (tokens - digit_tokens) / tokens_or_one,
        "q_stop_words": function_words + batch.per_doc(batch.has(bt.ZH_STOP)),
        "q_newline_token_ratio": batch.per_doc(batch.cp == 10) / tokens_or_one,
        "q_symbol_run_frac": symbol_runs / non_space,
        "q_decorative_frac": batch.per_doc(batch.has(bt.DECORATIVE)) / non_space,
        "q_mojibake_frac": (batch.per_doc(batch.cp == 0xFFFD) + debris) / non_space,
        "q_mojibake_marks": np.where((batch.per_doc(orphan_lead) > 0) & (marks >= 0.5 * latin1_letters), marks, 0.0),
        "q_rare_han_frac": np.where(han >= 20, (han - common) / np.maximum(han, 1), 0.0),
        "q_stub_frac": stubs,
    }
    if spam is not None:
        columns["q_spam_line_frac"] = _spam_line_frac(texts, spam)
    columns |= _line_signals(batch)
    ids = batch.span_hashes(token_start, token_end).view(np.int64)
    return columns | repetition_signals(ids, token_end - token_start, tokens.astype(np.int64))
