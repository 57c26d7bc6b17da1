"""Navigation boilerplate: the entries that index, contents and search pages are made of.

A document's score is the share of navigation entries among its counted lines, each line that is
not an entry weighing one per PROSE_LINE_CHARS characters (so a paragraph written on one line
weighs as it would wrapped). Each stripped, non-empty line is one of:

- a lead-in, ending with ":" and holding no code ("The list of modules described in this
  chapter is:"): not counted;
- code or markup (``= ; { } < > ` #``, a call with arguments, a line opening with ``|``, ``@``
  or a ``$`` shell prompt, a command: an option or a path beside another word) or a table row
  (cells apart by two spaces or a tab; more digits than letters: a row of figures): counted,
  never an entry, so a code listing or a table is not a page of links;
- an entry, once a leading bullet, box-drawing borders, a section number ("7.5.1.", "B.2.",
  "IV.", "Chapter 3.", "附录 B.") and trailing index references (", [1], [2]", ", 12, 45-47")
  are set aside:

  - a label: at most NAV_MAX_WORDS words and NAV_MAX_HAN Han characters, no sentence
    punctuation (a comma, or ".!?" after a word), and either no English function word (Gopher's
    stop words and those of questions and answers: "fill() (in module textwrap)"), or title case
    ("Porting Extension Modules to Python 3"), or a capitalized heading with one function word
    ("Comparison with marshal"); a Chinese label holds no Chinese stop character (Chinese has
    no capitals to tell a heading from a phrase);
  - after a section number that is not a bare number (a year), any heading: at most
    HEADING_MAX_WORDS words, not ended by a full stop or comma, one sentence (a question too);
  - an index entry: labels apart by ", " ("ALTER TABLE, ALTER TABLE", "arrays, shell: Arrays");
  - a menu bar: at least MENU_MIN_CELLS cells of at most MENU_MAX_WORDS words between " | "
    or " · " ("Home | News | About | Contact");
  - a term and its description: a label and a dash between spaces ("textwrap — Text wrapping
    and filling", "abc —— 抽象基类", the Chinese double dash also without spaces), or a
    lower-case identifier, perhaps with a parenthesis and a colon ("argparse Command-line option
    and argument parsing library.", "curses (Unix) An interface ..."), then one sentence or
    phrase of at most DESC_MAX_WORDS words and DESC_MAX_HAN Han characters (function words
    and a final full stop allowed);
- prose: anything else (a sentence, a wrapped line of one, a line of verse).

The rule runs as one compiled kernel (numba) over the lines of a whole batch, a few passes over
each line's code points with the character classes of ``BatchText``; tests/navigation_reference.py
states it one line at a time with regular expressions, and the kernel is tested equal to it.
"""

from __future__ import annotations

import numba
import numpy as np

from stages.clean import batch_text as bt
from stages.clean.batch_text import BatchText
from stages.clean.textsets import FUNCTION_WORD_KEYS, KEY_LETTERS, LETTER_BITS, word_key

MIN_NAV_LINES = 8
"""A document with fewer stripped, non-empty lines than this scores 0, so callers may skip it; so does
one with fewer counted lines (lead-ins are not counted). Nine FAQ titles are a contents page."""
NAV_MAX_WORDS = 8
NAV_MAX_HAN = 20
HEADING_MAX_WORDS = 12
PROSE_LINE_CHARS = 120
"""A line that is not an entry weighs one per whole PROSE_LINE_CHARS characters (at least one): a paragraph
written on one line weighs about as much as the same paragraph wrapped, so a long introduction outweighs a
short menu of sections below it, while a one-sentence introduction weighs one line."""
DESC_MAX_WORDS = 14
DESC_MAX_HAN = 30
MENU_MIN_CELLS = 3
MENU_MAX_WORDS = 3
TITLE_MIN_LETTERS = 4
"""Title case capitalizes every word of this many letters or more that is not a function word
("Instrumenting CPython with DTrace" is title case, "Creating Applications with zipapp" is not).
The prepositions of TITLE_MINOR_WORDS stay in lower case too ("Notes from the Field")."""
TITLE_MINOR_WORDS = frozenset(("from", "into", "onto", "over", "upon", "than", "like", "near", "past", "down"))

_SPACE, _WORD, _DIGIT, _DECIMAL, _ALPHA, _UPPER, _HAN, _ZH_STOP = (
    bt.SPACE, bt.WORD, bt.DIGIT, bt.DECIMAL, bt.ALPHA, bt.UPPER, bt.HAN, bt.ZH_STOP)

# The rule's own punctuation, one bit per set, for the code points below U+10000 (none above is in any).
(_CODE, _FULL_STOP, _CLOSER, _SENTENCE_MARK, _WORD_PUNCT, _BULLET, _MENU_SEP, _CJK_STOP, _QUESTION, _SEMICOLON,
 _HEADING_BAD_END, _TRAILING_MARK) = (1 << bit for bit in range(12))
_PUNCT_SETS = {
    _CODE: "=;{}<>`#",  # code or markup
    _FULL_STOP: ".!?…",
    _CLOSER: ")]\"'’”",  # what may close a sentence before its full stop
    _SENTENCE_MARK: ",，;；。！？",  # sentence punctuation wherever it stands
    _WORD_PUNCT: "\"'“”‘’()[],.:;!?",  # stripped from a word's ends before it is looked up
    _BULLET: "•·*-–",
    _MENU_SEP: "|·",
    _CJK_STOP: "。！？",
    _QUESTION: "!?！？",
    _SEMICOLON: ";；",
    _HEADING_BAD_END: ".。,，;；",  # what a numbered heading does not end with
    _TRAILING_MARK: "!?！？…",  # what it may end with
}
_PUNCT = np.zeros(0x10000, dtype=np.uint16)
for _bit, _chars in _PUNCT_SETS.items():
    _PUNCT[[ord(char) for char in _chars]] |= _bit
_MINOR_KEYS = np.array(sorted(map(word_key, TITLE_MINOR_WORDS)), dtype=np.int64)
_BORDER_FIRST, _BORDER_LAST = 0x2500, 0x257F
_EM_DASH, _EN_DASH = ord("—"), ord("–")
_ROMAN = np.zeros(128, dtype=np.bool_)
_ROMAN[[ord(char) for char in "IVXLCDM"]] = True
_ENTRY, _OTHER, _NOT_COUNTED = 1, 0, -1
_jit = numba.njit(cache=True, nogil=True)


@_jit
def _punct(cp: np.ndarray, at: int, bits: int) -> bool:
    return cp[at] < 0x10000 and (_PUNCT[cp[at]] & bits) != 0


@_jit
def _skip_space(cls: np.ndarray, at: int, end: int) -> int:
    while at < end and cls[at] & _SPACE:
        at += 1
    return at


@_jit
def _words(cls: np.ndarray, start: int, end: int) -> int:
    """len(text.split())."""
    words = 0
    for at in range(start, end):
        if not cls[at] & _SPACE and (at == start or cls[at - 1] & _SPACE):
            words += 1
    return words


@_jit
def _count(cls: np.ndarray, start: int, end: int, bits: int) -> int:
    found = 0
    for at in range(start, end):
        if cls[at] & bits:
            found += 1
    return found


@_jit
def _in_keys(cp: np.ndarray, start: int, end: int, keys: np.ndarray, lower_only: bool) -> bool:
    """Whether the word ``[start, end)``, lowercased (or, with ``lower_only``, as it is), is one of ``keys``."""
    if end <= start or end - start > KEY_LETTERS:
        return False
    key = 0
    for i in range(end - start):
        char = cp[start + i]
        if not (0x61 <= char <= 0x7A or (not lower_only and 0x41 <= char <= 0x5A)):
            return False
        key += ((char | 0x20) - 96) << (LETTER_BITS * i)
    at = np.searchsorted(keys, key)
    return at < len(keys) and keys[at] == key


@_jit
def _sentence_punct(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """_SENTENCE_PUNCT_RE: a comma or semicolon, a CJK full stop, or ".!?…" after a word or a
    closer and before a space or the end."""
    for at in range(start, end):
        if _punct(cp, at, _SENTENCE_MARK):
            return True
        if (_punct(cp, at, _FULL_STOP) and at > start and (cls[at - 1] & _WORD or _punct(cp, at - 1, _CLOSER))
                and (at + 1 == end or cls[at + 1] & _SPACE)):
            return True
    return False


@_jit
def _sentence_break(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """More than one sentence, or a question or semicolon (_SENTENCE_BREAK_RE)."""
    for at in range(start, end):
        if _punct(cp, at, _SEMICOLON):
            return True
        if _punct(cp, at, _FULL_STOP):
            after_word = at - 2 >= start and cls[at - 1] & _WORD and cls[at - 2] & _WORD
            if (after_word or (at > start and _punct(cp, at - 1, _CLOSER))) and at + 1 < end and cls[at + 1] & _SPACE \
                    and _skip_space(cls, at + 1, end) < end:
                return True
        if _punct(cp, at, _CJK_STOP) and at + 1 < end and not cls[at + 1] & _SPACE:
            return True
        if _punct(cp, at, _QUESTION) and _skip_space(cls, at + 1, end) == end:
            return True
    return False


@_jit
def _label(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """A short title, heading or term: see the module's docstring."""
    if _words(cls, start, end) > NAV_MAX_WORDS or _sentence_punct(cp, cls, start, end):
        return False
    if _count(cls, start, end, _ZH_STOP) or _count(cls, start, end, _HAN) > NAV_MAX_HAN:
        return False
    function_words = 0
    title_case = True
    at = start
    while at < end:
        at = _skip_space(cls, at, end)
        if at == end:
            break
        word_end = at
        while word_end < end and not cls[word_end] & _SPACE:
            word_end += 1
        first, last = at, word_end
        while first < last and _punct(cp, first, _WORD_PUNCT):
            first += 1
        while last > first and _punct(cp, last - 1, _WORD_PUNCT):
            last -= 1
        if _in_keys(cp, first, last, FUNCTION_WORD_KEYS, False):
            function_words += 1
        elif (last - first >= TITLE_MIN_LETTERS and _count(cls, first, last, _ALPHA) == last - first
              and not _in_keys(cp, first, last, _MINOR_KEYS, True) and not cls[first] & _UPPER):
            title_case = False
        at = word_end
    if function_words == 0 or title_case:
        return True
    for at in range(start, end):
        if cls[at] & _ALPHA:
            return function_words == 1 and (cls[at] & _UPPER) != 0
    return False


@_jit
def _description(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """One phrase or sentence describing a term."""
    return (_words(cls, start, end) <= DESC_MAX_WORDS and not _sentence_break(cp, cls, start, end)
            and _count(cls, start, end, _HAN) <= DESC_MAX_HAN)


@_jit
def _menu_separator(cp: np.ndarray, cls: np.ndarray, at: int, end: int) -> bool:
    """_MENU_SEP_RE at ``at``: a space, "|" or "·", a space."""
    return at + 2 < end and cls[at] & _SPACE and _punct(cp, at + 1, _MENU_SEP) and cls[at + 2] & _SPACE


@_jit
def _menu(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    cells = 0
    cell = at = start
    while at <= end:
        if at == end or _menu_separator(cp, cls, at, end):
            if _words(cls, cell, at) > MENU_MAX_WORDS or _sentence_punct(cp, cls, cell, at):
                return False
            cells += 1
            cell = at = at + 3
        else:
            at += 1
    return cells >= MENU_MIN_CELLS


@_jit
def _reference_group(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """Whether ``[start, end)``, what follows a comma, is one index reference: spaces, then
    "[12]", "12" or "45-47"."""
    at = _skip_space(cls, start, end)
    bracket = at < end and cp[at] == 0x5B
    if bracket:
        at += 1
    digits = at
    while at < end and cls[at] & _DECIMAL:
        at += 1
    if at == digits:
        return False
    if bracket:
        return at + 1 == end and cp[at] == 0x5D
    if at < end and (cp[at] == 0x2D or cp[at] == _EN_DASH):
        digits = at = at + 1
        while at < end and cls[at] & _DECIMAL:
            at += 1
        if at == digits:
            return False
    return at == end


@_jit
def _command_word(cp: np.ndarray, cls: np.ndarray, at: int, end: int) -> bool:
    """Whether the word at ``at`` is an option ("-p", "--help") or a path ("/usr", "./configure", "~/")
    (_COMMAND_WORD_RE)."""
    if cp[at] == 0x2D:
        letter = at + 2 if at + 1 < end and cp[at + 1] == 0x2D else at + 1
        return letter < end and (0x41 <= cp[letter] <= 0x5A or 0x61 <= cp[letter] <= 0x7A)
    if cp[at] == 0x7E:
        return at + 1 < end and cp[at + 1] == 0x2F
    slash = at
    while slash < end and slash - at < 2 and cp[slash] == 0x2E:
        slash += 1
    return slash + 1 < end and cp[slash] == 0x2F and (cls[slash + 1] & _WORD or cp[slash + 1] == 0x2E)


@_jit
def _section_token(cp: np.ndarray, cls: np.ndarray, at: int, end: int) -> tuple[int, bool, bool]:
    """A section number's parts at ``at`` (digits, a Roman numeral or one capital, apart by dots): where it
    ends (``at`` if it is none, or if no space follows it), whether it ends with a dot and whether it is a
    bare number ("1907": a year as likely as a section)."""
    first, parts, dotted, digits_only = at, 0, False, True
    while at < end:
        if cls[at] & _DECIMAL:
            while at < end and cls[at] & _DECIMAL:
                at += 1
        elif cp[at] < 128 and _ROMAN[cp[at]]:
            while at < end and cp[at] < 128 and _ROMAN[cp[at]]:
                at += 1
            digits_only = False
        elif 0x41 <= cp[at] <= 0x5A:
            at += 1
            digits_only = False
        else:
            return first, False, False
        parts += 1
        dotted = at < end and cp[at] == 0x2E
        if dotted:
            at += 1
        if at == end or cls[at] & _SPACE:
            break
        if not dotted:
            return first, False, False
    if at == end or not (digits_only or dotted or parts >= 2):
        return first, False, False
    return at, dotted, digits_only and parts == 1 and not dotted


@_jit
def _without_section_number(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> tuple[int, bool]:
    """The line without its section number (_SECTION_RE), and whether it had one that is not bare digits."""
    token_end, dotted, bare = _section_token(cp, cls, start, end)
    if token_end == start:
        word = start
        if 0x41 <= cp[start] <= 0x5A:  # a capitalized word ("Chapter", "Part")
            word += 1
            while word < end and word - start <= 11 and 0x61 <= cp[word] <= 0x7A:
                word += 1
            if word - start < 2:
                return start, False
        else:  # up to three Han characters ("附录")
            while word < end and word - start < 3 and cls[word] & _HAN:
                word += 1
        if word in (start, end) or not cls[word] & _SPACE:
            return start, False
        token_start = _skip_space(cls, word, end)
        token_end, dotted, bare = _section_token(cp, cls, token_start, end)
        if token_end == token_start or not dotted:
            return start, False
    return _skip_space(cls, token_end, end), not bare


@_jit
def _without_references(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> int:
    """The end of the line without its trailing index references (_REFERENCES_RE)."""
    references = end
    for at in range(end - 1, start - 1, -1):
        if cp[at] == 0x2C:
            if not _reference_group(cp, cls, at + 1, references):
                break
            references = at
    return references


@_jit
def _numbered_heading(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """The title after a section number: short, no sentence ended by a full stop, not two sentences."""
    if _words(cls, start, end) > HEADING_MAX_WORDS or _count(cls, start, end, _HAN) > NAV_MAX_HAN:
        return False
    if _punct(cp, end - 1, _HEADING_BAD_END):
        return False
    while end > start and _punct(cp, end - 1, _TRAILING_MARK):
        end -= 1
    return not _sentence_break(cp, cls, start, end)


@_jit
def _dash(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """The first match of _DASH_RE (a dash between spaces, or "——"), or (-1, -1)."""
    at = start
    while at < end:
        if cls[at] & _SPACE:
            dash = _skip_space(cls, at, end)
            if dash + 1 < end and cp[dash] == _EM_DASH and cp[dash + 1] == _EM_DASH:
                return at, _skip_space(cls, dash + 2, end)
            width = 2 if dash + 1 < end and cp[dash] == 0x2D and cp[dash + 1] == 0x2D else 1
            if dash < end and (cp[dash] == _EM_DASH or cp[dash] == _EN_DASH or cp[dash] == 0x2D) \
                    and dash + width < end and cls[dash + width] & _SPACE:
                return at, _skip_space(cls, dash + width, end)
            at = dash
        elif cp[at] == _EM_DASH and at + 1 < end and cp[at + 1] == _EM_DASH:
            return at, _skip_space(cls, at + 2, end)
        else:
            at += 1
    return -1, -1


@_jit
def _lookahead_head(cp: np.ndarray, cls: np.ndarray, at: int, end: int) -> bool:
    return at < end and (0x41 <= cp[at] <= 0x5A or cls[at] & _HAN)


@_jit
def _identifier_head(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """_IDENT_HEAD_RE.match: the end of the identifier and where its description starts, or (-1, -1)."""
    name_end = start + 1
    while name_end < end and (cls[name_end] & _WORD or cp[name_end] == 0x2E):
        name_end += 1
    paren = _skip_space(cls, name_end, end)
    if paren < end and cp[paren] == 0x28:
        close = paren + 1
        while close < end and cp[close] != 0x28 and cp[close] != 0x29:
            close += 1
        if close < end and cp[close] == 0x29:
            after = close + 1
            if after < end and cp[after] == 0x3A:
                after += 1
            after = _skip_space(cls, after, end)
            if _lookahead_head(cp, cls, after, end):
                return name_end, after
    after = name_end
    if after < end and cp[after] == 0x3A:
        after += 1
    after = _skip_space(cls, after, end)
    if _lookahead_head(cp, cls, after, end):
        return name_end, after
    for shorter in range(name_end - 1, start, -1):  # back off into the name, as the regex does
        if _lookahead_head(cp, cls, shorter, end):
            return shorter, shorter
    return -1, -1


@_jit
def _index_entry(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """Labels apart by ", " ("ALTER TABLE, ALTER TABLE", "arrays, shell: Arrays")."""
    cells = 0
    cell = start
    for at in range(start, end + 1):
        if at == end or (cp[at] == 0x2C and at + 1 < end and cp[at + 1] == 0x20):
            first = _skip_space(cls, cell, at)
            last = at
            while last > first and cls[last - 1] & _SPACE:
                last -= 1
            if first == last or not _label(cp, cls, first, last):
                return False
            cells += 1
            cell = at + 1
    return cells >= 2


@_jit
def _entry(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> bool:
    """A label, an index entry (labels apart by ", "), or a term and its description."""
    if _label(cp, cls, start, end):
        return True
    if _words(cls, start, end) > NAV_MAX_WORDS + 1 + DESC_MAX_WORDS:  # a term, a dash, a description
        return False
    if _index_entry(cp, cls, start, end):
        return True
    dashed = False
    for at in range(start, end):
        if cp[at] == _EM_DASH or cp[at] == _EN_DASH or (cp[at] == 0x20 and at + 1 < end and cp[at + 1] == 0x2D):
            dashed = True
            break
    if dashed:
        term_end, description = _dash(cp, cls, start, end)
        if term_end >= 0:
            return _label(cp, cls, start, term_end) and _description(cp, cls, description, end)
    if cp[start] == 0x5F or 0x61 <= cp[start] <= 0x7A:
        name_end, description = _identifier_head(cp, cls, start, end)
        return (name_end >= 0 and not _in_keys(cp, start, name_end, FUNCTION_WORD_KEYS, True)
                and _description(cp, cls, description, end))
    return False


@_jit
def _line_kind(cp: np.ndarray, cls: np.ndarray, start: int, end: int) -> int:
    """_ENTRY, _OTHER or _NOT_COUNTED for the stripped, non-empty line ``[start, end)`` of the
    buffers ``cp`` and ``cls``, which it may rewrite."""
    for at in range(start, end):
        if _punct(cp, at, _CODE):
            return _OTHER
        if (at == start or cls[at - 1] & _SPACE) and _command_word(cp, cls, at, end) and _words(cls, start, end) > 1:
            return _OTHER  # a command line; an option alone is an index entry
        if cp[at] == 0x28 and at > start and cls[at - 1] & _WORD:  # a call with arguments
            close = at + 1
            while close < end and cls[close] & _DECIMAL:
                close += 1
            if close == end or cp[close] != 0x29:
                return _OTHER
    if cp[start] == 0x7C or cp[start] == 0x40 or (cp[start] == 0x24 and start + 1 < end and cp[start + 1] == 0x20):
        return _OTHER
    if cp[end - 1] == 0x3A:
        return _NOT_COUNTED  # a lead-in
    kept = start
    for at in range(start, end):  # box-drawing borders set aside
        if not _BORDER_FIRST <= cp[at] <= _BORDER_LAST:
            cp[kept], cls[kept] = cp[at], cls[at]
            kept += 1
    end = kept
    start = _skip_space(cls, start, end)
    while end > start and cls[end - 1] & _SPACE:
        end -= 1
    if end - start >= 2 and _punct(cp, start, _BULLET) and cls[start + 1] & _SPACE:
        start = _skip_space(cls, start + 1, end)
    if start == end:
        return _NOT_COUNTED
    menu = False
    for at in range(start, end):
        if cp[at] == 0x09 or (cp[at] == 0x20 and at + 1 < end and cp[at + 1] == 0x20):
            return _OTHER  # table cells
        if cp[at] == 0x20 and at + 2 < end and cp[at + 2] == 0x20 and _punct(cp, at + 1, _MENU_SEP):
            menu = True
    if menu and _menu(cp, cls, start, end):
        return _ENTRY
    start, numbered = _without_section_number(cp, cls, start, end)
    if cls[end - 1] & _DIGIT or cp[end - 1] == 0x5D:
        end = _without_references(cp, cls, start, end)
        if start == end:
            return _OTHER  # nothing but numbers
    if not (_entry(cp, cls, start, end) or numbered and _numbered_heading(cp, cls, start, end)):
        return _OTHER
    digits = _count(cls, start, end, _DIGIT)
    return _ENTRY if digits == 0 or digits <= _count(cls, start, end, _ALPHA) else _OTHER


@_jit
def _line_kinds(cp: np.ndarray, cls: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    kinds = np.empty(len(start), dtype=np.int8)
    longest = np.max(end - start) if len(start) else 0
    line_cp = np.empty(longest, dtype=cp.dtype)
    line_cls = np.empty(longest, dtype=cls.dtype)
    for line in range(len(start)):
        length = end[line] - start[line]
        line_cp[:length] = cp[start[line]:end[line]]
        line_cls[:length] = cls[start[line]:end[line]]
        kinds[line] = _line_kind(line_cp, line_cls, 0, length)
    return kinds


def line_kinds(batch: BatchText, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Per stripped, non-empty line ``[start, end)`` of ``batch``: 1 for a navigation entry, 0 for any
    other counted line, -1 for a line not counted (a lead-in)."""
    return _line_kinds(batch.cp, batch.classes, start.astype(np.int64), end.astype(np.int64))


def share(entries: np.ndarray, counted: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The score of each document with ``entries`` navigation entries among ``counted`` lines that
    weigh ``weight`` (an entry one, any other line its length in lines of PROSE_LINE_CHARS)."""
    return np.where(counted >= MIN_NAV_LINES, entries / np.maximum(weight, 1), 0.0)
