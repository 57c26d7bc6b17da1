"""Quality signals (the ``q_*`` columns): computed once per document, judged later by rules.

Everything is CJK-aware by construction: a Han character is one token and a run of other
letters/digits is one word; "alphabetic" is decided per script (``str.isalpha`` is true for
Han characters); ``。！？…`` count as terminal punctuation next to ``.!?``.

The signals of a batch are computed together: with numpy over the batch's code points
(``BatchText``), and with compiled kernels (numba) where a loop over the code points, lines or
tokens does in one pass what numpy would need many for: character counts (char_counts.py),
navigation entries (navigation.py), spam literals (spam.py) and n-gram repetition
(repetition.py). The few signals read with a regular expression (symbol runs, with a
back-reference; code stubs; licence sentences) are computed per document, only for the documents a scan shows
could score above zero.
tests/signals_reference.py defines each signal one document at a time.
"""

from __future__ import annotations

import re

import numpy as np

from common.signal_names import REPETITION_SIGNALS, SCALAR_SIGNALS
from common.text import SPEAKER_LABEL
from stages.clean import batch_text as bt
from stages.clean import navigation as navigation_rule
from stages.clean.batch_text import BatchText
from stages.clean.char_counts import char_counts
from stages.clean.licence import HINTS as LICENCE_HINTS
from stages.clean.licence import licence_sentence_frac
from stages.clean.navigation import MIN_NAV_LINES
from stages.clean.repetition import repetition_signals
from stages.clean.spam import SpamMatcher, SpamScan, spam_line_frac

# A unit of 1-3 characters starting with a symbol (★, ☆彡, !!, =-), repeated 4+ times in a row.
# Box-drawing characters (U+2500-U+257F) are the rules of text tables, not decoration.
REPEATED_UNIT_RE = re.compile(r"([^\w\s\u2500-\u257f](?:[^\w\s]{0,2}|\w))\1{3,}")
# A border line of a plain-text table (psql, reStructuredText, Markdown): rules of "-" or "=" joined by "+"
# or "|" (with ":" for Markdown's alignment), nothing else on the line; or the top or bottom of a C comment box
# ("/*****", " *****/").
TABLE_BORDER_RE = re.compile(r"[ \t]*(?:[+|]?(?:[ \t]*:?[-=]{3,}:?[ \t]*[+|])+(?:[ \t]*:?[-=]{3,}:?)?|/\*{3,}|\*{3,}/)[ \t]*")
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
OPENING_ELLIPSIS_RE = re.compile(rf"(?:{SPEAKER_LABEL})?(?:\.\.\.|…)")
"""A line that opens with an ellipsis, perhaps after its speaker label: it carries on the line before."""
LINE_SIGNALS = ("q_lines", "q_dup_line_frac", "q_dup_line_char_frac", "q_bullet_line_frac", "q_ellipsis_line_frac",
                "q_terminal_punct_line_frac", "q_short_line_frac", "q_nav_line_frac")


MIN_LOST_MARKS = 3
"""Fewer question marks in place of lost characters than this are left in the text and not scored."""
MIN_RUN, MIN_RUN_AT_END = 3, 8
URL_OR_CODE_CHARS = "/=&%"


def lost_marks(batch: BatchText) -> np.ndarray:
    """Per document: question marks standing where characters were lost (text written through a legacy
    encoding with errors="replace"): inside a word ("don?t", "r?sum?"), or a run that follows no letter
    ("???????" for a Chinese phrase) of three or more with text right after it, or of eight or more (a
    "???" after a space and before the next word or line is a reader's puzzlement). Tokens holding "/",
    "=", "&" or "%" (URLs, queries, code) are not read."""
    marks = batch.cp == ord("?")
    if not marks.any():
        return np.zeros(batch.docs)
    runs = batch.runs(marks)
    letter = batch.has(bt.LETTER)
    letter_before = ~batch.doc_first[runs.start] & letter[np.maximum(runs.start - 1, 0)]
    after = np.minimum(runs.end, batch.size - 1)
    letter_after = ~batch.doc_last[runs.end - 1] & letter[after]
    text_after = ~batch.doc_last[runs.end - 1] & ~batch.has(bt.SPACE)[after]
    alone = (runs.length >= MIN_RUN) & ~letter_before & (text_after | (runs.length >= MIN_RUN_AT_END))
    candidates = np.flatnonzero((letter_before & letter_after) | alone)
    counted = np.zeros(batch.docs)
    if len(candidates) == 0:
        return counted
    spaces = np.flatnonzero(batch.has(bt.SPACE))
    for run in candidates.tolist():  # few: read the token around each
        start, end, doc = int(runs.start[run]), int(runs.end[run]), int(batch.doc_of[runs.start[run]])
        before = np.searchsorted(spaces, start)
        token_start = max(int(spaces[before - 1]) + 1 if before else 0, int(batch.starts[doc]))
        token_end = min(int(spaces[before]) if before < len(spaces) else batch.size, int(batch.starts[doc + 1]))
        if not any(c in batch.joined[token_start:token_end] for c in URL_OR_CODE_CHARS):
            counted[doc] += end - start
    return counted


def _symbol_run_chars(text: str) -> int:
    """Characters in runs of a repeated symbol unit, except on the border lines of plain-text tables and
    comment boxes (TABLE_BORDER_RE: "-----+-----", "|---|---|", "+====+", "/*****")."""
    counted = 0
    for match in REPEATED_UNIT_RE.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        if not TABLE_BORDER_RE.fullmatch(text[line_start:line_end if line_end >= 0 else len(text)]):
            counted += len(match.group(0))
    return counted


def _stub_frac(text: str) -> float:
    """Unfinished-stub markers per function defined; 0 below two markers (one TODO is normal)."""
    if not any(marker in text for marker in STUB_HINTS):
        return 0.0
    stubs = len(STUB_RE.findall(text))
    if stubs < 2:
        return 0.0
    return stubs / max(len(FUNCTION_RE.findall(text)), 1)


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


def _line_signals(batch: BatchText) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Line-level signals: duplicates, bullets, ellipses, terminal punctuation, short lines, navigation;
    and per document, its lines carried on by the next (``_carried_on``).

    Lines are split at "\\n", stripped, empty ones left out. A line counts as duplicated when it
    repeats the line before it, or when it and the line after it repeat an earlier pair of
    lines: repeated blocks (boilerplate, spam) count, while a label, attribution, speaker prompt
    or table rule that recurs between different lines (formatting) does not. A line cut short
    ends in an ellipsis that the next line does not carry on.
    """
    lines = batch.lines()
    start, end, length = lines.start, lines.end, lines.length
    if len(start) == 0:
        return {name: np.zeros(batch.docs) for name in LINE_SIGNALS}, np.zeros(batch.docs)
    doc = batch.doc_of[start]
    count = np.bincount(doc, minlength=batch.docs).astype(np.float64)
    same_as_next = np.concatenate((doc[1:] == doc[:-1], [False]))
    text = batch.line_hashes()
    after = np.where(same_as_next, np.concatenate((text[1:], [np.uint64(0)])), np.uint64(0x5BD1E995))
    repeats_before = np.concatenate(([False], same_as_next[:-1] & (text[1:] == text[:-1])))
    pair = (text * np.uint64(0xC2B2AE3D27D4EB4F) + after) * np.uint64(0x165667B19E3779F9) + doc.astype(np.uint64)
    order = np.argsort(pair, kind="stable")
    ordered = pair[order]
    earlier = np.zeros(len(pair), dtype=bool)
    earlier[order] = np.concatenate(([False], ordered[1:] == ordered[:-1]))
    duplicated = repeats_before | earlier
    last = batch.cp[end - 1]
    # A line cut short ends in "…" or "...": not in "……", the ellipsis Chinese writers end a trailing-off sentence with.
    before = batch.cp[np.maximum(end - 2, 0)]
    ellipsis = (((last == ord("…")) & ((length < 2) | (before != ord("…"))))
                | ((length >= 3) & (last == 46) & (before == 46) & (batch.cp[np.maximum(end - 3, 0)] == 46)))
    carried_on = _carried_on(batch, lines, ellipsis & same_as_next)
    lines_or_one = np.maximum(count, 1)
    chars = np.bincount(doc, weights=length, minlength=batch.docs)
    columns = {
        "q_lines": count,
        "q_dup_line_frac": np.bincount(doc, weights=duplicated, minlength=batch.docs) / lines_or_one,
        "q_dup_line_char_frac": np.bincount(doc, weights=length * duplicated, minlength=batch.docs) / np.maximum(chars, 1),
        "q_bullet_line_frac": np.bincount(doc, weights=(batch.classes[start] & bt.BULLET) != 0, minlength=batch.docs) / lines_or_one,
        "q_ellipsis_line_frac": np.bincount(doc, weights=ellipsis & ~carried_on, minlength=batch.docs) / lines_or_one,
        "q_terminal_punct_line_frac": np.bincount(doc, weights=(batch.classes[end - 1] & bt.TERMINAL) != 0, minlength=batch.docs) / lines_or_one,
        "q_short_line_frac": np.bincount(doc, weights=length <= SHORT_LINE_CHARS, minlength=batch.docs) / lines_or_one,
    }
    scored = count[doc] >= MIN_NAV_LINES
    kinds = navigation_rule.line_kinds(batch, start[scored], end[scored])
    entries = np.bincount(doc[scored], weights=kinds == 1, minlength=batch.docs)
    counted = np.bincount(doc[scored], weights=kinds >= 0, minlength=batch.docs)
    prose_lines = np.maximum(length[scored] // navigation_rule.PROSE_LINE_CHARS, 1)
    weight = np.bincount(doc[scored], weights=np.where(kinds == 1, 1, np.where(kinds == 0, prose_lines, 0)),
                         minlength=batch.docs)
    columns["q_nav_line_frac"] = navigation_rule.share(entries, counted, weight)
    return columns, np.bincount(doc, weights=carried_on, minlength=batch.docs)


def _carried_on(batch: BatchText, lines: bt.Runs, candidates: np.ndarray) -> np.ndarray:
    """Per line: whether it is a ``candidates`` line (one ending in an ellipsis, with a line after it in its
    document) whose next line opens with an ellipsis (``OPENING_ELLIPSIS_RE``): one sentence carried across two
    lines or turns, as subtitles and scripts write it ("I was going to..." / "...tell you"), not text cut short."""
    carried = np.zeros(len(lines.start), dtype=bool)
    for line in np.flatnonzero(candidates).tolist():
        following = batch.cp[lines.start[line + 1]:lines.end[line + 1]].tobytes().decode("utf-32-le", "surrogatepass")
        carried[line] = OPENING_ELLIPSIS_RE.match(following) is not None
    return carried


def compute_signals(texts: list[str], spam: SpamMatcher | None = None, batch: BatchText | None = None,
                    scan: SpamScan | None = None) -> dict[str, np.ndarray]:
    """Every q_* signal for a batch of documents, as one float64 array per signal (``batch`` and ``scan``: the
    ``BatchText`` and the spam matcher's ``SpamScan`` of ``texts``, if the caller has them)."""
    batch = batch or BatchText(texts)
    docs = batch.docs
    columns = {name: np.zeros(docs) for name in (*SCALAR_SIGNALS, *REPETITION_SIGNALS)}
    if batch.size == 0:
        return columns
    token_spans = batch.tokens()
    token_doc = batch.doc_of[token_spans.start]
    tokens = np.bincount(token_doc, minlength=docs).astype(np.float64)
    tokens_or_one = np.maximum(tokens, 1)
    digit_tokens = np.bincount(token_doc, weights=token_spans.digits_only, minlength=docs)
    chars = char_counts(batch)
    non_space = np.maximum(chars.non_space, 1)
    han = chars.han
    words, word_chars, function_words = chars.latin_words, chars.latin_word_chars, chars.function_words
    marks = chars.debris + chars.orphans
    lost = lost_marks(batch)
    symbol_runs = np.zeros(docs)
    for d in np.flatnonzero(chars.repeated_unit).tolist():
        symbol_runs[d] = _symbol_run_chars(texts[d])
    line_columns, carried_on = _line_signals(batch)
    stubs = np.zeros(docs)
    for d in _containing(batch, STUB_HINTS):
        stubs[d] = _stub_frac(texts[d])
    licence = np.zeros(docs)
    for d in _containing(batch, LICENCE_HINTS):
        licence[d] = licence_sentence_frac(texts[d])
    columns |= {
        "q_chars": batch.lengths.astype(np.float64),
        "q_tokens": tokens,
        "q_han_frac": han / np.maximum(han + word_chars, 1),
        "q_latin_words": words,
        "q_mean_word_len": np.where(words > 0, word_chars / np.maximum(words, 1), 0.0),
        # The ellipsis opening a line that carries on the one before is the same pause: counted once.
        "q_symbol_word_ratio": (chars.symbols - carried_on) / tokens_or_one,
        "q_alpha_token_frac": (tokens - digit_tokens) / tokens_or_one,
        "q_stop_words": function_words + chars.zh_stop,
        "q_newline_token_ratio": chars.newlines / tokens_or_one,
        "q_symbol_run_frac": symbol_runs / non_space,
        "q_decorative_frac": chars.decorative / non_space,
        "q_mojibake_frac": (chars.replacement + chars.debris) / non_space,
        "q_mojibake_marks": np.where((chars.orphan_leads > 0) & (marks >= 0.5 * chars.latin1_letters), marks, 0.0),
        "q_rare_han_frac": np.where(han >= 20, (han - chars.common_han) / np.maximum(han, 1), 0.0),
        "q_stub_frac": stubs,
        "q_licence_sentence_frac": licence,
        "q_lost_char_frac": np.where(lost >= MIN_LOST_MARKS, lost / non_space, 0.0),
    }
    if spam is not None:
        columns["q_spam_line_frac"] = spam_line_frac(texts, spam, scan)
    columns |= line_columns
    ids = batch.span_hashes(token_spans.start, token_spans.end).view(np.int64)
    return columns | repetition_signals(ids, token_spans.length, tokens.astype(np.int64))
