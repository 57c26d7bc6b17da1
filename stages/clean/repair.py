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


def repair(text: str) -> str:
    """ftfy.fix_text with Kiln's settings, run only where it can change something."""
    if not needs_repair(text):
        return text
    return ftfy.fix_text(text, config=FTFY_CONFIG)
