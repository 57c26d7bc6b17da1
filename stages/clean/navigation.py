"""Navigation boilerplate: the entries that index, contents and search pages are made of.

A document's score is the share of navigation entries among its counted lines. Each stripped,
non-empty line is one of:

- a lead-in, ending with ":" and holding no code ("The list of modules described in this
  chapter is:"): not counted;
- code or markup (``= ; { } < > ` #``, a call with arguments, a line opening with ``|``, ``@``
  or a ``$`` shell prompt) or a table row (cells apart by two spaces or a tab; more digits than
  letters: a row of figures): counted, never an entry, so a code listing or a table is not a
  page of links;
- an entry, once a leading bullet, box-drawing borders, a section number ("7.5.1.") and trailing
  index references (", [1], [2]", ", 12, 45-47") are set aside:

  - a label: at most NAV_MAX_WORDS words and NAV_MAX_HAN Han characters, no sentence
    punctuation (a comma, or ".!?" after a word), and either no English function word (Gopher's
    stop words and those of questions and answers: "fill() (in module textwrap)"), or title case
    ("Porting Extension Modules to Python 3"), or a capitalized heading with one function word
    ("Comparison with marshal"); a Chinese label holds no Chinese stop character (Chinese has
    no capitals to tell a heading from a phrase);
  - a menu bar: at least MENU_MIN_CELLS cells of at most MENU_MAX_WORDS words between " | "
    or " · " ("Home | News | About | Contact");
  - a term and its description: a label and a dash between spaces ("textwrap — Text wrapping
    and filling", "abc —— 抽象基类", the Chinese double dash also without spaces), or a
    lower-case identifier, perhaps with a parenthesis and a colon ("argparse Command-line option
    and argument parsing library.", "curses (Unix) An interface ..."), then one sentence or
    phrase of at most DESC_MAX_WORDS words and DESC_MAX_HAN Han characters (function words
    and a final full stop allowed);
- prose: anything else (a sentence, a wrapped line of one, a line of verse).

A line costs one regular expression when it is code and a few more otherwise (most prose fails
the first word-count or punctuation test): about as much as the rule it replaced, which counted
fewer kinds of entry and only in documents of 20 lines or more.
"""

from __future__ import annotations

import re

import numpy as np

from stages.clean import batch_text as bt
from stages.clean.batch_text import BatchText
from stages.clean.textsets import EN_FUNCTION_WORDS, HAN_CLASS, HAN_RE, ZH_STOP_CHARS

MIN_NAV_LINES = 8
"""A document with fewer stripped, non-empty lines than this scores 0, so callers may skip it; so does
one with fewer counted lines (lead-ins are not counted). Nine FAQ titles are a contents page."""
NAV_MAX_WORDS = 8
NAV_MAX_HAN = 20
DESC_MAX_WORDS = 14
DESC_MAX_HAN = 30
MENU_MIN_CELLS = 3
MENU_MAX_WORDS = 3
TITLE_MIN_LETTERS = 4
"""Title case capitalizes every word of this many letters or more that is not a function word
("Instrumenting CPython with DTrace" is title case, "Creating Applications with zipapp" is not).
The prepositions of TITLE_MINOR_WORDS stay in lower case too ("Notes from the Field")."""
TITLE_MINOR_WORDS = frozenset(("from", "into", "onto", "over", "upon", "than", "like", "near", "past", "down"))

# Code or markup: a character of code, or a call with arguments ("tn.write(data)", not "fill()" or "ls(1)").
_CODE_RE = re.compile(r"[=;{}<>`#]|\((?<=\w\()(?!\d*\))")
_CODE_OPENINGS = ("|", "@", "$ ")
_BORDERS_RE = re.compile(r"[\u2500-\u257f]+")
_BULLETS = frozenset("•·*-–")
_AFFIXES_RE = re.compile(r"^(?:(?:\d+\.)+\d*|\d+)\s+|(?:,\s*(?:\[\d+\]|\d+(?:[-–]\d+)?))+$")
_MENU_SEP_RE = re.compile(r"\s[|·]\s")
_SENTENCE_PUNCT_RE = re.compile(r"(?<=[\w)\]\"'’”])[.!?…](?=\s|$)|[,，;；。！？]")
# A description is one sentence: no sentence end followed by more text (an abbreviation such as
# "a.k.a." or "e.g." is none), no question, no semicolon.
_SENTENCE_BREAK_RE = re.compile(r"(?:(?<=\w\w)|(?<=[)\]\"'’”]))[.!?…](?=\s+\S)|[。！？](?=\S)|[!?！？]\s*$|[;；]")
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
    if line[0].isdigit() or line[-1].isdigit() or line[-1] == "]":
        line = _AFFIXES_RE.sub("", line)
        if not line:
            return False  # nothing but numbers
    if not _entry(line):
        return False
    digits = sum(map(str.isdigit, line))
    return not digits or digits <= sum(map(str.isalpha, line))


def _entry(line: str) -> bool:
    """A label, or a term and its description."""
    if _label(line):
        return True
    if len(line.split()) > NAV_MAX_WORDS + 1 + DESC_MAX_WORDS:  # a term, a dash, a description
        return False
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
    ``lines`` (0 below MIN_NAV_LINES of them); what counts as an entry is in the module's docstring.
    """
    kinds = [kind for kind in map(line_kind, lines) if kind is not None]
    return share(sum(kinds), len(kinds))


def share(entries: int, counted: int) -> float:
    """The score of a document with ``entries`` navigation entries among ``counted`` lines."""
    return entries / counted if counted >= MIN_NAV_LINES else 0.0


SENTENCE_MARKS = ",，;；。！？"
_FULL_STOPS = ".!?…"
_CLOSERS = ")]\"'’”"
_NOT_PROSE = (*map(ord, "=;{}<>`#—–"), *range(0x2500, 0x2580))  # code, dashes, box drawing
_SEPARATORS = tuple(map(ord, "|·-"))


def prose_lines(batch: BatchText, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per line ``[start, end)`` of ``batch`` (stripped, non-empty): True where ``line_kind``
    certainly returns False because the line is prose, computed over the whole batch.

    Such a line is no label: it holds sentence punctuation (as ``_SENTENCE_PUNCT_RE`` finds it),
    a Chinese stop character or more than NAV_MAX_HAN Han characters. And it holds none of what
    could make it anything else: no code character or dash (no term and description), no box
    drawing, no " | ", " · " or " -" (no menu), no bullet at its start, no section number ("7.5 "),
    digit or "]" at its end (no index reference to set aside), no ":" at its end (no lead-in), and
    it does not open like an identifier or a shell prompt. Callers run ``line_kind`` on the rest.
    """
    if len(start) == 0:
        return np.zeros(0, dtype=bool)
    cp = batch.cp
    first, last = cp[start], cp[end - 1]
    word_before = np.concatenate(([False], (batch.has(bt.WORD) | batch.is_in(tuple(map(ord, _CLOSERS))))[:-1]))
    full_stop = (batch.is_in(tuple(map(ord, _FULL_STOPS))) & word_before & ~batch.doc_first
                 & (batch.doc_last | batch.followed_by(batch.has(bt.SPACE))))
    full_stop[start] = False  # nothing before a line's first character
    sentence = batch.is_in(tuple(map(ord, SENTENCE_MARKS))) | full_stop | batch.has(bt.ZH_STOP)
    no_label = ((batch.span_counts(sentence, start, end) > 0)
                | (batch.span_counts(batch.has(bt.HAN), start, end) > NAV_MAX_HAN))
    others = batch.span_counts(batch.is_in(_NOT_PROSE), start, end) > 0
    separated = batch.span_counts((cp == 32) & batch.followed_by(batch.is_in(_SEPARATORS)), start, end) > 0
    digit = batch.has(bt.DIGIT)
    # A line opening with digits is set aside only when a "." or a space follows them.
    digit_runs = batch.runs(digit)
    run_end = digit_runs.end[np.minimum(np.searchsorted(digit_runs.start, start), len(digit_runs.start) - 1)] \
        if len(digit_runs.start) else end
    after = cp[np.minimum(run_end, batch.size - 1)]
    numbered = digit[start] & ((run_end >= end) | (after == ord(".")) | batch.has(bt.SPACE)[np.minimum(run_end, batch.size - 1)])
    edges = numbered | digit[end - 1] | (last == ord("]")) | (last == ord(":"))
    opening = np.isin(first, [ord(c) for c in "".join(_BULLETS) + "|@$_"]) | ((first >= ord("a")) & (first <= ord("z")))
    return no_label & ~others & ~separated & ~edges & ~opening
