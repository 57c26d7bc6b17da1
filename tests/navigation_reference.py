"""The navigation rule one line at a time, with regular expressions: the definition the batch
kernels of stages/clean/navigation.py are checked against (see that module's docstring)."""

from __future__ import annotations

import re

import numpy as np

from stages.clean.navigation import (
    DESC_MAX_HAN,
    DESC_MAX_WORDS,
    HEADING_MAX_WORDS,
    MENU_MAX_WORDS,
    MENU_MIN_CELLS,
    NAV_MAX_HAN,
    NAV_MAX_WORDS,
    PROSE_LINE_CHARS,
    TITLE_MIN_LETTERS,
    TITLE_MINOR_WORDS,
    share,
)
from stages.clean.textsets import EN_FUNCTION_WORDS, HAN_CLASS, HAN_RE, ZH_STOP_CHARS

# Code or markup: a character of code, or a call with arguments ("tn.write(data)", not "fill()" or "ls(1)").
_CODE_RE = re.compile(r"[=;{}<>`#]|\((?<=\w\()(?!\d*\))")
_CODE_OPENINGS = ("|", "@", "$ ")
# A word of a command line: an option ("-p", "--help") or a path ("/usr/lib", "./configure", "~/.bashrc").
# With another word beside it, the line is a command.
_COMMAND_WORD_RE = re.compile(r"(?:^|(?<=\s))(?:-{1,2}[A-Za-z]|\.{0,2}/[\w.]|~/)")
_BORDERS_RE = re.compile(r"[\u2500-\u257f]+")
_BULLETS = frozenset("•·*-–")
# A section number: parts of digits, one capital or a Roman numeral apart by dots ("3.1.", "B.1",
# "IV."), all digits, ending with a dot or of two parts at least; with a dot, perhaps after one
# capitalized word or up to three Han characters ("Chapter 3.", "Part VIII.", "附录 B.").
_PART = r"(?:\d+|[IVXLCDM]+|[A-Z])"
_SECTION_RE = re.compile(
    rf"^(?:(?:(?:[A-Z][a-z]{{1,11}}|[{HAN_CLASS}]{{1,3}})\s+)?(?:{_PART}\.)+|{_PART}(?:\.{_PART})+|\d+)\s+")
_REFERENCES_RE = re.compile(r"(?:,\s*(?:\[\d+\]|\d+(?:[-–]\d+)?))+$")
_MENU_SEP_RE = re.compile(r"\s[|·]\s")
_SENTENCE_PUNCT_RE = re.compile(r"(?<=[\w)\]\"'’”])[.!?…](?=\s|$)|[,，;；。！？]")
# A description is one sentence: no sentence end followed by more text (an abbreviation such as
# "a.k.a." or "e.g." is none), no question, no semicolon.
_SENTENCE_BREAK_RE = re.compile(r"(?:(?<=\w\w)|(?<=[)\]\"'’”]))[.!?…](?=\s+\S)|[。！？](?=\S)|[!?！？]\s*$|[;；]")
# What a heading does not end with: a full stop, a comma, a semicolon; nor, once its final marks
# ("?!…") are set aside, does it hold two sentences.
_HEADING_BAD_END = frozenset(".。,，;；")
_TRAILING_MARKS_RE = re.compile(r"[!?！？…]+$")
# A dash between spaces, or the Chinese double dash with or without them.
_DASH_RE = re.compile(r"\s+(?:—{1,2}|–|-{1,2})\s+|\s*——\s*")
_IDENT_HEAD_RE = re.compile(rf"([a-z_][\w.]*)(?:\s*\([^()]*\))?:?\s*(?=[A-Z{HAN_CLASS}])")
_WORD_PUNCT = "\"'“”‘’()[],.:;!?"


def _label(line: str) -> bool:
    """A short title, heading or term: see the module's docstring."""
    words = line.split()
    if len(words) > NAV_MAX_WORDS or _SENTENCE_PUNCT_RE.search(line):
        return False
    if not ZH_STOP_CHARS.isdisjoint(line) or len(HAN_RE.findall(line)) > NAV_MAX_HAN:
        return False
    words = [word.strip(_WORD_PUNCT) for word in words]
    function_words = sum(word.lower() in EN_FUNCTION_WORDS for word in words)
    if not function_words:
        return True
    content = [word for word in words if len(word) >= TITLE_MIN_LETTERS and word.isalpha()
               and word.lower() not in EN_FUNCTION_WORDS and word not in TITLE_MINOR_WORDS]
    if all(word[0].isupper() for word in content):
        return True  # title case
    first = next((char for char in line if char.isalpha()), "")
    return function_words == 1 and first.isupper()


def _description(text: str) -> bool:
    """One phrase or sentence describing a term."""
    return (len(text.split()) <= DESC_MAX_WORDS and not _SENTENCE_BREAK_RE.search(text)
            and len(HAN_RE.findall(text)) <= DESC_MAX_HAN)


def _menu(line: str) -> bool:
    cells = _MENU_SEP_RE.split(line)
    return len(cells) >= MENU_MIN_CELLS and all(
        len(cell.split()) <= MENU_MAX_WORDS and not _SENTENCE_PUNCT_RE.search(cell) for cell in cells)


def line_kind(line: str) -> bool | None:
    """True for a navigation entry, False for any other counted line, None for a line not counted."""
    if _CODE_RE.search(line) or line.startswith(_CODE_OPENINGS):
        return False
    if _COMMAND_WORD_RE.search(line) and len(line.split()) > 1:  # a command; an option alone is an index entry
        return False
    if line.endswith(":"):
        return None  # a lead-in
    if not line.isascii():
        line = _BORDERS_RE.sub("", line).strip()
    if line[:1] in _BULLETS and line[1:2].isspace():
        line = line[1:].lstrip()
    if not line:
        return None
    if "  " in line or "\t" in line:
        return False
    if (" | " in line or " · " in line) and _menu(line):
        return True
    section = _SECTION_RE.match(line)
    numbered = bool(section) and not section.group().strip().isdigit()  # a section's number, not a year
    if section:
        line = line[section.end():]
    if line[-1].isdigit() or line[-1] == "]":
        line = _REFERENCES_RE.sub("", line)
        if not line:
            return False  # nothing but numbers
    if not (_entry(line) or numbered and _numbered_heading(line)):
        return False
    digits = sum(map(str.isdigit, line))
    return not digits or digits <= sum(map(str.isalpha, line))


def _numbered_heading(line: str) -> bool:
    """The title after a section number: short, no sentence ended by a full stop, not two sentences."""
    if len(line.split()) > HEADING_MAX_WORDS or len(HAN_RE.findall(line)) > NAV_MAX_HAN:
        return False
    return line[-1] not in _HEADING_BAD_END and not _SENTENCE_BREAK_RE.search(_TRAILING_MARKS_RE.sub("", line))


def _entry(line: str) -> bool:
    """A label, an index entry (labels apart by ", "), or a term and its description."""
    if _label(line):
        return True
    if len(line.split()) > NAV_MAX_WORDS + 1 + DESC_MAX_WORDS:  # a term, a dash, a description
        return False
    if ", " in line and all(cell.strip() and _label(cell.strip()) for cell in line.split(", ")):
        return True
    if "—" in line or "–" in line or " -" in line:
        parts = _DASH_RE.split(line, maxsplit=1)
        if len(parts) == 2:
            return _label(parts[0]) and _description(parts[1])
    if line[0] == "_" or "a" <= line[0] <= "z":
        head = _IDENT_HEAD_RE.match(line)
        return bool(head) and head.group(1) not in EN_FUNCTION_WORDS and _description(line[head.end():])
    return False


def nav_line_frac(lines: list[str]) -> float:
    """Share of navigation entries among the counted lines of a document's stripped, non-empty
    ``lines`` (0 below MIN_NAV_LINES of them), other lines weighed by their length (see
    PROSE_LINE_CHARS); what counts as an entry is in the module's docstring.
    """
    kinds = [(kind, len(line)) for line in lines if (kind := line_kind(line)) is not None]
    weight = sum(1 if kind else max(length // PROSE_LINE_CHARS, 1) for kind, length in kinds)
    return float(share(np.array(sum(kind for kind, _ in kinds)), np.array(len(kinds)), np.array(weight)))
