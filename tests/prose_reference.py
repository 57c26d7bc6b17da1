"""What language ID reads, one text at a time, in plain Python: the definition that
``stages.clean.lid.prose_texts`` computes over a batch (checked in tests/test_signal_equality.py)."""

from __future__ import annotations

import re

from stages.clean.batch_text import CODE_CHARS
from stages.clean.lid import (
    _HAN,
    _HYPHEN_BREAK,
    _LATIN_RUN,
    MAX_CODE_CHAR_SHARE,
    MIN_HAN_CHARS,
    MIN_HAN_SHARE,
    MIN_LETTER_SHARE,
    MIN_WORDS,
)

_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[^\W\d_]{2,}")


def _reading_line(line: str) -> str | None:
    """What a reader reads on one line, or None for layout: code, tables, options, headers."""
    stripped = line.strip()
    if not stripped:
        return None
    non_space = len(stripped) - stripped.count(" ")
    han = len(_HAN.findall(stripped))
    if han >= 2:
        # A Chinese line is read for its Han text: the Latin identifiers, options and paths
        # in it say nothing about its language.
        if han < MIN_HAN_SHARE * non_space and han < MIN_HAN_CHARS:
            return None
        return _LATIN_RUN.sub(" ", stripped) if han < 0.9 * non_space else stripped
    if len(_LETTER.findall(stripped)) < MIN_LETTER_SHARE * non_space:
        return None
    if sum(map(frozenset(CODE_CHARS).__contains__, stripped)) > MAX_CODE_CHAR_SHARE * non_space:
        return None
    words = _WORD.findall(stripped)
    if len(words) < MIN_WORDS or sum(map(str.isupper, words)) > 0.5 * len(words):
        return None  # labels, option names, table headers and ALL-CAPS table rows
    return stripped


def prose_lines(text: str, min_chars: int = 40) -> str:
    """The text fastText should see: what a person reads, on one line.

    Layout is left out: fenced code, lines of code or symbols, option and table rows, ALL-CAPS
    headings, lines of fewer than four words; words broken across lines are joined. In Chinese
    lines only the Han text is kept. Falls back to the whole text when fewer than ``min_chars``
    characters of prose remain.
    """
    kept = []
    in_fence = False
    for line in _HYPHEN_BREAK.sub(r"\1\2", text).split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence and (reading := _reading_line(line)):
            kept.append(reading)
    prose = " ".join(" ".join(kept).split())
    return prose if len(prose) >= min_chars else " ".join(text.split())
