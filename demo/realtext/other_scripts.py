"""Pages written in scripts that no target language uses, for the first development set.

Man pages in Russian, Greek and Japanese (``manpages-ru``, ``manpages-el``, ``manpages-ja``) and pages of
LibreOffice's help in Korean, Khmer, Dzongkha (Tibetan script) and Hindi (Devanagari) (``libreoffice-help-*``):
of each page, the paragraphs written in its own script, so that option lists, commands and paragraphs left
untranslated do not make a page of another language partly English.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from demo.realtext.genres import Document, man_page_files, page_text, render_man_page

MAN_LANGS = ("ru", "el", "ja")  # Cyrillic, Greek, Japanese (kana and Han)
HELP_LANGS = ("ko", "km", "dz", "hi")  # Hangul, Khmer, Tibetan, Devanagari
LIBREOFFICE_HELP = "usr/share/libreoffice/help"
MIN_PAGE_CHARS = 400
MAX_ASCII_LETTERS = 0.1


def in_own_script(text: str) -> bool:
    """At most a tenth of the letters are ASCII: text in its own script, not a partly translated one."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) <= MAX_ASCII_LETTERS * len(letters)


def own_script_text(text: str) -> str | None:
    """The paragraphs of ``text`` written in their own script, when they make a page of MIN_PAGE_CHARS or more."""
    kept = "\n\n".join(p.strip() for p in text.split("\n\n") if p.strip() and in_own_script(p))
    return kept if len(kept) >= MIN_PAGE_CHARS else None


def _help_page_text(path: Path) -> str:
    """The text of one LibreOffice help page's display area (no navigation, no search box)."""
    html = path.read_text(encoding="utf-8", errors="replace")
    start = html.find('id="DisplayArea"')
    return page_text(html[html.rfind("<", 0, start):]) if start >= 0 else ""


def other_script_documents(root: Path, per_language: int = 20) -> Iterator[Document]:
    """Up to ``per_language`` pages per language (see the module's docstring), in sorted file order."""
    for lang in MAN_LANGS:
        texts = (own_script_text(render_man_page(path)) for path in man_page_files(root, lang))
        for i, text in enumerate(itertools.islice(filter(None, texts), per_language)):
            yield Document("other_script", lang, "tech_docs", f"man-{lang}", f"man-{lang}#{i}", text)
    for lang in HELP_LANGS:
        paths = sorted((root / LIBREOFFICE_HELP / lang / "text").rglob("*.html"))
        texts = (own_script_text(_help_page_text(path)) for path in paths)
        for i, text in enumerate(itertools.islice(filter(None, texts), per_language)):
            yield Document("other_script", lang, "tech_docs", f"libreoffice-help-{lang}", f"help-{lang}#{i}", text)
