"""Text repair with ftfy, skipped for documents that a cheap scan proves it would not change."""

from __future__ import annotations

import re

import ftfy

# Width fixing would turn full-width CJK punctuation (，！？：；) into ASCII; curly quotes are
# legitimate text; NFC (ftfy's default) is kept, NFKC never touches stored text.
FTFY_CONFIG = ftfy.TextFixerConfig(fix_character_width=False, uncurl_quotes=False, explain=False)

# Characters ftfy leaves alone under FTFY_CONFIG: printable ASCII, \t and \n, general
# punctuation up to U+2027, CJK symbols and punctuation, kana, CJK unified ideographs
# (extension A and the basic block), Hangul syllables and full-width forms. HTML entities
# (which ftfy unescapes) are routed to it explicitly. Mojibake always
# brings in characters outside this set (Latin-1 letters such as Ã/Â/â, box drawing, ...), and
# so do control characters, ligatures and text that NFC would change.
_NEEDS_FTFY = re.compile(
    "&#?[0-9A-Za-z]{1,24};|[^\t\n\x20-\x7e\u2010-\u2019\u201b-\u201d\u201f\u2023-\u2027\u3000-\u3029\u3030-\u303f\u3040-\u3098\u309b-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uff01-\uffee]"
)


def needs_repair(text: str) -> bool:
    """False when ftfy is guaranteed to return ``text`` unchanged."""
    return _NEEDS_FTFY.search(text) is not None


_NO_HTML_UNESCAPE = FTFY_CONFIG._replace(unescape_html=False)


def _lines(text: str) -> list[str]:
    """The text cut after each "\\n" (ftfy's own segments; no other line breaks)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def repair(text: str) -> str:
    """ftfy.fix_text with Kiln's settings, run only on the lines where it can change something.

    ftfy fixes text line by line, and once a line holding "<" has been seen it stops unescaping
    HTML entities for the rest of the text; doing the same here gives identical output.
    """
    if not needs_repair(text):
        return text
    out = []
    seen_markup = False
    for line in _lines(text):
        if needs_repair(line):
            out.append(ftfy.fix_text(line, config=_NO_HTML_UNESCAPE if seen_markup else FTFY_CONFIG))
        else:
            out.append(line)
        seen_markup = seen_markup or "<" in line
    return "".join(out)
