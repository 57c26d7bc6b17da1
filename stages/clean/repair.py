"""Text repair with ftfy, skipped for documents and lines that a cheap scan proves it would not change."""

from __future__ import annotations

import re
import unicodedata

import ftfy
from ftfy.badness import is_bad
from ftfy.chardata import HTML_ENTITY_RE, LIGATURES

# Width fixing would turn full-width CJK punctuation (，！？：；) into ASCII; curly quotes are
# legitimate text; NFC (ftfy's default) is kept, NFKC never touches stored text.
FTFY_CONFIG = ftfy.TextFixerConfig(fix_character_width=False, uncurl_quotes=False, explain=False)

# Characters ftfy leaves alone under FTFY_CONFIG: printable ASCII, \t and \n, general
# punctuation up to U+2027, CJK symbols and punctuation, kana, CJK unified ideographs
# (extension A and the basic block), Hangul syllables and full-width forms. HTML entities
# (which ftfy unescapes) are routed to it explicitly. Mojibake always
# brings in characters outside this set (Latin-1 letters such as Ã/Â/â, box drawing, ...), and
# so do control characters, ligatures and text that NFC would change.
_HTML_ENTITY = HTML_ENTITY_RE.pattern  # what ftfy's unescape_html replaces
_NEEDS_FTFY = re.compile(
    _HTML_ENTITY + "|[^\t\n\x20-\x7e\u2010-\u2019\u201b-\u201d\u201f\u2023-\u2027\u3000-\u3029\u3030-\u303f\u3040-\u3098\u309b-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uff01-\uffee]"
)

# What ftfy's fixers other than mojibake decoding replace under FTFY_CONFIG: HTML entities
# (unescape_html), C0 controls but \t \n \f and DEL (remove_control_chars, remove_terminal_escapes),
# C1 controls (fix_c1_controls), \r, NEL, U+2028/2029 (fix_line_breaks), bidi-format controls,
# BOM and interlinear annotation marks (remove_control_chars), surrogates (fix_surrogates) and
# ligatures (fix_latin_ligatures).
_FIXED_WITHOUT_DECODING = re.compile(
    _HTML_ENTITY + "|[\x00-\x08\x0b\x0d-\x1f\x7f-\x9f\u2028\u2029\u206a-\u206f\ufeff\ufff9-\ufffc"
    "\ud800-\udfff" + "".join(map(chr, LIGATURES)) + "]"
)


def ftfy_may_change(line: str) -> bool:
    """False when ftfy is guaranteed to return ``line`` unchanged: none of its fixers' characters,
    already NFC, and no mojibake by ftfy's own test (its decoding starts only on ``is_bad`` text).
    ftfy cuts a line longer than ``max_decode_length`` into pieces and tests each: such a line
    always goes to ftfy (``is_bad`` anchors a pattern at the start of a piece)."""
    return (len(line) > FTFY_CONFIG.max_decode_length or _FIXED_WITHOUT_DECODING.search(line) is not None
            or not unicodedata.is_normalized("NFC", line) or is_bad(line))


_NO_HTML_UNESCAPE = FTFY_CONFIG._replace(unescape_html=False)

DAGGER = "\u2020"
LOST_QUOTE_DEBRIS = "\u00e2\u20ac "  # "â€ ": E2 80 read as cp1252, then a space


def _fix_line(line: str, config: ftfy.TextFixerConfig) -> str:
    """ftfy's fix of one line, or the line as it was when the fix would invent a dagger.

    ftfy reads the debris "â€ " as a dagger (bytes E2 80 A0) whose A0 byte became a space. The same
    debris is what every closing quote ” (E2 80 9D) leaves when cp1252's undefined byte 9D is
    dropped, which is far more common: the fix would put daggers where quotes were. Such a line is
    lossy, and left as it came so that the mojibake rules see its debris.
    """
    fixed = ftfy.fix_text(line, config=config)
    if LOST_QUOTE_DEBRIS in line and fixed.count(DAGGER) > line.count(DAGGER):
        return line
    return fixed


def repair(text: str) -> str:
    """ftfy.fix_text with Kiln's settings (a line whose fix would invent daggers left as it came),
    run only on the lines where it can change something.

    ftfy fixes text line by line (segments ending in "\\n"), and once a line holding "<" has been
    seen it stops unescaping HTML entities for the rest of the text; doing the same here gives
    identical output. One scan finds the lines holding a character ftfy may touch.
    """
    match = _NEEDS_FTFY.search(text)
    if match is None:
        return text
    out: list[str] = []
    done = 0  # text[:done] is in out
    seen_markup = False
    while match is not None:
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end()) + 1 or len(text)
        line = text[start:end]
        # ftfy turns unescaping off at the first line holding "<", that line included
        seen_markup = seen_markup or text.find("<", done, end) >= 0
        out.append(text[done:start])
        if ftfy_may_change(line):
            line = _fix_line(line, _NO_HTML_UNESCAPE if seen_markup else FTFY_CONFIG)
        out.append(line)
        done = end
        match = _NEEDS_FTFY.search(text, end)
    out.append(text[done:])
    return "".join(out)
