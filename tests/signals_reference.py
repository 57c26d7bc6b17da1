"""The quality signals written one document at a time, in plain Python: their definition.

stages/clean/signals.py computes the same values over a whole batch with numpy;
tests/test_signal_equality.py checks that the two agree on the demo corpus and the real-text
development set. A change to a signal is made in both.

Everything is CJK-aware by construction: a Han character is one token and a run of other
letters/digits is one word; "alphabetic" is decided per script (``str.isalpha`` is true for
Han characters); ``。！？…`` count as terminal punctuation next to ``.!?``.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from common.signal_names import REPETITION_SIGNALS, SCALAR_SIGNALS
from stages.clean.licence import licence_sentence_frac  # per document in both: the definition
from stages.clean.signals import (  # per document or line in both: the definition
    OPENING_ELLIPSIS_RE,
    _stub_frac,
    _symbol_run_chars,
)
from stages.clean.textsets import EN_FUNCTION_WORDS, HAN_CLASS, HAN_RE, ZH_STOP_CHARS, common_han
from tests.navigation_reference import nav_line_frac

TOKEN_RE = re.compile(rf"[{HAN_CLASS}]|[^\W{HAN_CLASS}_]+")
LATIN_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f]+(?:['’][A-Za-z]+)?")
HASHTAG_RE = re.compile(r"#(?=[^\s#])")  # a "#" before a word: not a comment marker ("# ") or a heading ("## ")
TERMINAL_PUNCT = tuple(".!?。！？…\"'”’」』)）")
BULLETS = ("•", "-", "*", "·", "●", "○", "▪", "◦", "‣", "–")
ELLIPSES = ("...", "…")
DECORATIVE_RE = re.compile(
    r"[\u2190-\u21ff\u2300-\u23ff\u2460-\u24ff\u2580-\u27bf\u2900-\u2bff\u3200-\u33ff\U0001F000-\U0001FAFF]")
LATIN1_DEBRIS_RE = re.compile(r"[\u00c0-\u00ff][\u0080-\u00bf\u2018-\u203a\u0152-\u0178\u02c6\u02dc\u20ac\u2122]")
# UTF-8 lead bytes of punctuation (â: U+2000-U+2FFF) and Latin-1 letters (Ã, Â) read as Latin-1,
# left alone because the bytes after them were lost or stripped as C1 controls.
ORPHAN_LEAD_RE = re.compile(r"[\u00e2\u00c3\u00c2](?=[\x00-\x7f]|$)")
LATIN1_LETTER_RE = re.compile(r"[\u00c0-\u00ff]")


def _occurrences(keys: np.ndarray) -> np.ndarray:
    """For each key, how often it occurs in ``keys`` (an unstable sort: cheaper than np.unique)."""
    order = np.argsort(keys)
    ordered = keys[order]
    run_id = np.cumsum(np.concatenate(([True], ordered[1:] != ordered[:-1]))) - 1
    counts = np.bincount(run_id)
    occurrences = np.empty_like(keys)
    occurrences[order] = counts[run_id]
    return occurrences


def repetition_signals(token_lists: list[list[str]]) -> dict[str, np.ndarray]:
    """Gopher repetition for a batch of tokenized documents, vectorized over the whole batch.

    ``q_top{n}gram_frac`` (n = 2..4): the largest share of a document's token characters taken
    by the occurrences of one repeated n-gram. ``q_dup{n}gram_frac`` (n = 5..10): the share of
    token characters covered by n-grams that occur more than once in the document.
    """
    docs = len(token_lists)
    result = {name: np.zeros(docs) for name in REPETITION_SIGNALS}
    sizes = np.fromiter(map(len, token_lists), dtype=np.int64, count=docs)
    if sizes.sum() == 0:
        return result
    flat = [token for tokens in token_lists for token in tokens]
    ids = np.fromiter(map(hash, flat), dtype=np.int64, count=len(flat))  # 64-bit ids, batch-local
    lengths = np.fromiter(map(len, flat), dtype=np.int64, count=len(flat))
    doc_of = np.repeat(np.arange(docs), sizes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    position = np.arange(len(flat)) - starts[doc_of]
    cumulative = np.concatenate(([0], np.cumsum(lengths)))
    total_chars = np.bincount(doc_of, weights=lengths, minlength=docs)
    total_chars[total_chars == 0] = 1
    grams = ids.copy()
    # An n-gram can only repeat where its (n-1)-gram prefix repeats, so each n only looks at
    # the positions whose shorter gram repeated: exact counts, far fewer to sort.
    candidates = np.nonzero(position <= sizes[doc_of] - 2)[0]
    for n in range(2, 11):
        count = len(flat) - n + 1
        if count <= 0:
            break
        grams = grams[:count] * np.int64(1_000_003) + ids[n - 1:]
        candidates = candidates[candidates < count]
        valid = candidates[position[candidates] <= sizes[doc_of[candidates]] - n]
        if len(valid) == 0:
            break
        occurrences = _occurrences(grams[valid] * np.int64(7919) + doc_of[valid])
        repeated = occurrences > 1
        candidates = valid[repeated]
        if not repeated.any():
            break
        if n <= 4:
            gram_chars = cumulative[valid + n] - cumulative[valid]
            share = np.zeros(docs)
            np.maximum.at(share, doc_of[candidates], (occurrences * gram_chars)[repeated])
            result[f"q_top{n}gram_frac"] = share / total_chars
        else:
            cover = np.zeros(len(flat) + 1, dtype=np.int64)
            np.add.at(cover, candidates, 1)
            np.add.at(cover, candidates + n, -1)
            covered = np.cumsum(cover[:-1]) > 0
            result[f"q_dup{n}gram_frac"] = np.bincount(doc_of, weights=lengths * covered, minlength=docs) / total_chars
    return result


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


def _cut_short(line: str) -> bool:
    return line.endswith(ELLIPSES) and not line.endswith("……")


def _carried_on(lines: list[str]) -> list[bool]:
    """Per line: it ends in an ellipsis and the next line opens with one, after a speaker label if it has one."""
    return [_cut_short(line) and following is not None and OPENING_ELLIPSIS_RE.match(following) is not None
            for line, following in zip(lines, [*lines[1:], None][:len(lines)], strict=True)]


def line_signals(text: str) -> dict[str, float]:
    """Line-level signals: duplicates, bullets, ellipses, terminal punctuation, short lines, navigation.

    A line counts as duplicated when it repeats the line before it, or when it and the line
    after it repeat an earlier pair of lines: repeated blocks (boilerplate, spam) count, while a
    label, attribution, speaker prompt or table rule that recurs between different lines
    (formatting) does not.
    """
    lines = _stripped_lines(text)
    n = len(lines) or 1
    seen: set[tuple[str, str | None]] = set()
    dup_lines = dup_chars = 0
    for before, line, after in zip([None, *lines][:len(lines)], lines, [*lines[1:], None], strict=False):
        if line == before or (line, after) in seen:
            dup_lines += 1
            dup_chars += len(line)
        seen.add((line, after))
    total_chars = sum(len(line) for line in lines) or 1
    return {
        "q_lines": len(lines),
        "q_dup_line_frac": dup_lines / n,
        "q_dup_line_char_frac": dup_chars / total_chars,
        "q_bullet_line_frac": sum(line.startswith(BULLETS) for line in lines) / n,
        "q_ellipsis_line_frac": sum(_cut_short(line) and not carried
                                    for line, carried in zip(lines, _carried_on(lines), strict=True)) / n,
        "q_terminal_punct_line_frac": sum(line.endswith(TERMINAL_PUNCT) for line in lines) / n,
        "q_short_line_frac": sum(len(line) <= 30 for line in lines) / n,
        "q_nav_line_frac": nav_line_frac(lines),
    }


def _mojibake_marks(text: str) -> int:
    """Marks of mojibake left after repair: Latin-1 debris pairs ("â€", "Ã©") and orphaned UTF-8
    lead bytes read as Latin-1 (â, Ã, Â before ASCII, their other bytes lost or stripped).

    Counted only when they are at least half of the document's Latin-1 letters, so French
    ("âge", "château") and character tables, where â is one accented letter among many, count 0.
    """
    if "\u00e2" not in text and "\u00c3" not in text and "\u00c2" not in text:
        return 0
    marks = len(LATIN1_DEBRIS_RE.findall(text)) + len(ORPHAN_LEAD_RE.findall(text))
    return marks if marks >= 0.5 * len(LATIN1_LETTER_RE.findall(text)) else 0


class SpamMatcher:
    """Counts matches of the configured spam patterns in lowercased text.

    Plain-literal patterns (most of them) are counted with ``str.count``; only the patterns that
    use regex syntax go through one compiled alternation.
    """

    def __init__(self, patterns: tuple[str, ...]):
        self.literals = tuple(p for p in patterns if re.escape(p) == p.replace(" ", "\\ "))
        others = [p for p in patterns if p not in self.literals]
        self.regex = re.compile("|".join(f"(?:{p})" for p in others)) if others else None

    def hits(self, lowered: str) -> int:
        """Matches in ``lowered`` (literals may overlap each other; each is counted)."""
        count = sum(lowered.count(literal) for literal in self.literals)
        return count + (len(self.regex.findall(lowered)) if self.regex else 0)


@functools.lru_cache(maxsize=4)
def spam_matcher(patterns: tuple[str, ...]) -> SpamMatcher | None:
    """A cached matcher for the configured patterns (None when there are none)."""
    return SpamMatcher(patterns) if patterns else None


LETTER_RE = re.compile(r"[^\W\d_]")


def _lost_marks(text: str) -> int:
    """Question marks in place of lost characters: inside a word, or a run after no letter of three or more with
    more of the token after it, or of eight or more; tokens with "/", "=", "&" or "%" are not read."""
    lost = 0
    for token in text.split():
        if any(c in token for c in "/=&%"):
            continue
        for run in re.finditer(r"\?+", token):
            before = run.start() > 0 and LETTER_RE.fullmatch(token[run.start() - 1]) is not None
            after = run.end() < len(token) and LETTER_RE.fullmatch(token[run.end()]) is not None
            length = len(run.group())
            if (before and after) or (not before and length >= 3 and (run.end() < len(token) or length >= 8)):
                lost += length
    return lost


def document_signals(text: str, tokens: list[str], spam: SpamMatcher | None = None) -> dict[str, float]:
    """The per-document (non-repetition) q_* signals of one document and its tokens."""
    han = HAN_RE.findall(text)
    latin_words = LATIN_WORD_RE.findall(text)
    n_tokens = len(tokens) or 1
    non_space = len("".join(text.split())) or 1
    letters = len(han) + sum(map(len, latin_words))
    lowered = [w.lower() for w in latin_words]
    signals: dict[str, float] = {
        "q_chars": len(text),
        "q_tokens": len(tokens),
        "q_han_frac": len(han) / (letters or 1),
        "q_latin_words": len(latin_words),
        "q_mean_word_len": (sum(map(len, latin_words)) / len(latin_words)) if latin_words else 0.0,
        "q_symbol_word_ratio": (len(HASHTAG_RE.findall(text)) + text.count("...") + text.count("…")
                                - sum(_carried_on(_stripped_lines(text)))) / n_tokens,
        "q_alpha_token_frac": (len(tokens) - sum(map(str.isdigit, tokens))) / n_tokens,
        "q_stop_words": sum(map(EN_FUNCTION_WORDS.__contains__, lowered)) + sum(map(ZH_STOP_CHARS.__contains__, han)),
        "q_newline_token_ratio": text.count("\n") / n_tokens,
        "q_symbol_run_frac": _symbol_run_chars(text) / non_space,
        "q_decorative_frac": len(DECORATIVE_RE.findall(text)) / non_space,
        "q_mojibake_frac": (text.count("\ufffd") + len(LATIN1_DEBRIS_RE.findall(text))) / non_space,
        "q_mojibake_marks": _mojibake_marks(text),
        "q_rare_han_frac": (len(han) - sum(map(common_han().__contains__, han))) / len(han) if len(han) >= 20 else 0.0,
        "q_stub_frac": _stub_frac(text),
        "q_licence_sentence_frac": licence_sentence_frac(text),
        "q_lost_char_frac": lost / non_space if (lost := _lost_marks(text)) >= 3 else 0.0,
    }
    if spam is not None:
        lowered_text = text.lower()
        signals["q_spam_line_frac"] = 0.0
        if spam.hits(lowered_text) >= 2:
            lines = [line for line in lowered_text.split("\n") if line.strip()]
            signals["q_spam_line_frac"] = sum(1 for line in lines if spam.hits(line)) / max(len(lines), 1)
    signals |= line_signals(text)
    return signals


def compute_signals(texts: list[str], spam: SpamMatcher | None = None) -> dict[str, np.ndarray]:
    """Every q_* signal for a batch of documents, as one array per signal."""
    token_lists = [TOKEN_RE.findall(text) for text in texts]
    rows = [document_signals(text, tokens, spam) for text, tokens in zip(texts, token_lists, strict=True)]
    columns = {name: np.array([row.get(name, 0.0) for row in rows], dtype=np.float64) for name in SCALAR_SIGNALS}
    return columns | repetition_signals(token_lists)
