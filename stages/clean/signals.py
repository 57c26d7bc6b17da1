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

import re

import numpy as np

from common.signal_names import REPETITION_SIGNALS, SCALAR_SIGNALS
from stages.clean import batch_text as bt
from stages.clean import navigation as navigation_rule
from stages.clean.batch_text import BatchText, mix64
from stages.clean.char_counts import char_counts
from stages.clean.navigation import MIN_NAV_LINES
from stages.clean.spam import SpamMatcher, spam_line_frac

# A unit of 1-3 characters starting with a symbol (★, ☆彡, !!, =-), repeated 4+ times in a row.
# Box-drawing characters (U+2500-U+257F) are the rules of text tables, not decoration.
REPEATED_UNIT_RE = re.compile(r"([^\w\s\u2500-\u257f](?:[^\w\s]{0,2}|\w))\1{3,}")
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
    chars = char_counts(batch)
    non_space = np.maximum(chars.non_space, 1)
    han = chars.han
    words, word_chars, function_words = chars.latin_words, chars.latin_word_chars, chars.function_words
    marks = chars.debris + chars.orphans
    symbol_runs = np.zeros(docs)
    for d in np.flatnonzero(chars.repeated_unit).tolist():
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
        "q_symbol_word_ratio": chars.symbols / tokens_or_one,
        "q_alpha_token_frac": (tokens - digit_tokens) / tokens_or_one,
        "q_stop_words": function_words + chars.zh_stop,
        "q_newline_token_ratio": chars.newlines / tokens_or_one,
        "q_symbol_run_frac": symbol_runs / non_space,
        "q_decorative_frac": chars.decorative / non_space,
        "q_mojibake_frac": (chars.replacement + chars.debris) / non_space,
        "q_mojibake_marks": np.where((chars.orphan_leads > 0) & (marks >= 0.5 * chars.latin1_letters), marks, 0.0),
        "q_rare_han_frac": np.where(han >= 20, (han - chars.common_han) / np.maximum(han, 1), 0.0),
        "q_stub_frac": stubs,
    }
    if spam is not None:
        columns["q_spam_line_frac"] = spam_line_frac(texts, spam)
    columns |= _line_signals(batch)
    ids = batch.span_hashes(token_start, token_end).view(np.int64)
    return columns | repetition_signals(ids, token_end - token_start, tokens.astype(np.int64))
