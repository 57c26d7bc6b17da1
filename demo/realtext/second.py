"""Genres of the second real-text development set: packages and kinds of text the first set has none of.

Manuals (the Debian installation guide, the maintainers' guide and FAQ in Chinese, PostgreSQL's and
Bash's manuals), a hacker's lexicon and a satirical dictionary (dictd databases), and the dialogue of
a visual novel in English and Chinese. Its planted pages are real ones too: the manuals' title,
copyright, contents and index pages (``boilerplate``) and the same manuals and help pages in scripts
that are not a target language (``other_lang``).
"""

from __future__ import annotations

import gzip
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError
from demo.realtext.genres import DOCBOOK_TOC, Document, collection_pages, html_sections, page_text
from demo.realtext.other_scripts import in_own_script

INSTALL_GUIDE = "usr/share/doc/installation-guide-amd64"
POSTGRES_DOCS = "usr/share/doc/postgresql-doc-15/html"
BASH_MANUAL = "usr/share/doc/bash/bashref.html"
HELP_PAGES = "usr/share/help"
INDEX_PAGES = 20  # pages of about 3,000 characters taken from the start of each index
CONTENTS_PAGES = 20  # contents pages taken from each manual, in file-name order
# Languages of the installation guide and of GNOME's help written in a script no target language uses.
OTHER_LANGS_GUIDE = ("el", "ja", "ko", "ru")
OTHER_LANGS_HELP = ("as", "gu", "mr", "ta", "te")
_DICTD_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_NAV = re.compile(r'<div class="nav(?:header|footer)">.*?</div>', re.S)
CONTENTS_MAX_TEXT = 500
"""A DocBook page whose text outside its table of contents and navigation bars is shorter than this is a
contents page (a part's or chapter's list of sections), not a chapter."""
_RENPY_LINE = re.compile(r'^\s*(#\s*)?(\w+)\s+"((?:[^"\\]|\\.)*)"\s*$')
_RENPY_TAG = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Page:
    """A real page planted whole as a defect: the document it is, the defect, and its address if it has one."""

    doc: Document
    defect: str
    url: str | None = None


def _page(name: str, lang: str, source: str, genre: str, defect: str, text: str) -> Page:
    """A page of one of the manuals (category tech_docs)."""
    return Page(Document(genre, lang, "tech_docs", source, name, text), defect)


def _read(path: Path) -> str:
    if not path.is_file():
        raise KilnError(f"{path}: missing from the unpacked packages of the second development set")
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", errors="replace")


def _is_contents_page(html: str) -> bool:
    return bool(DOCBOOK_TOC.search(html)) and len(page_text(_NAV.sub("", DOCBOOK_TOC.sub("", html))).strip()) < CONTENTS_MAX_TEXT


def _chapters(folder: Path, pattern: str, skip: frozenset[str] = frozenset()) -> Iterator[tuple[Path, str]]:
    """(path, HTML without its table of contents) of each chapter page of a DocBook manual: not its title
    page (``index.*``), contents pages or the pages named in ``skip``."""
    for path in sorted(folder.glob(pattern)):
        if not path.name.startswith("index.") and path.name not in skip:
            html = _read(path)
            if not _is_contents_page(html):
                yield path, DOCBOOK_TOC.sub("", html)


def mostly_chinese(text: str) -> bool:
    """More Han characters than ASCII letters: a section of a Chinese manual that is mostly an untranslated
    English example is left out of the clean documents (neither clean Chinese nor clean English)."""
    han = sum("\u4e00" <= c <= "\u9fff" for c in text)
    return han > sum(c.isascii() and c.isalpha() for c in text)


INSTALL_GUIDE_LICENCE = "apf.html"  # the appendix holding the GNU GPL


def install_guide(root: Path, lang: str) -> Iterator[Document]:
    """Sections of the Debian installation guide's chapters (not its title, contents or licence pages)."""
    folder = {"en": "en", "zh": "zh_CN"}[lang]
    for path, html in _chapters(root / INSTALL_GUIDE / folder, "*.html", frozenset((INSTALL_GUIDE_LICENCE,))):
        for i, text in enumerate(html_sections(html, None, min_chars=600 if lang == "en" else 300)):
            if lang == "en" or mostly_chinese(text):
                yield Document("install_guide", lang, "tech_docs", f"install-guide-{lang}", f"{path.stem}#{i}", text)


CHINESE_GUIDES = ("usr/share/doc/maint-guide-zh-cn/html", "usr/share/doc/debian/FAQ/zh-cn")


def chinese_debian_guides(root: Path) -> Iterator[Document]:
    """Sections of the Debian New Maintainers' Guide and the Debian FAQ in Simplified Chinese."""
    for folder in CHINESE_GUIDES:
        for path, html in _chapters(root / folder, "*.zh-cn.html"):
            for i, text in enumerate(html_sections(html, None, min_chars=300)):
                if mostly_chinese(text):
                    yield Document("debian_guides", "zh", "tech_docs", "debian-guides-zh", f"{path.stem}#{i}", text)


POSTGRES_FRONT = frozenset(("legalnotice.html", "bookindex.html"))


def postgres_docs(root: Path) -> Iterator[Document]:
    """Sections of PostgreSQL's manual (not its title, legal notice, contents or index pages)."""
    for path, html in _chapters(root / POSTGRES_DOCS, "*.html", POSTGRES_FRONT):
        for i, text in enumerate(html_sections(html, None, min_chars=800)):
            yield Document("postgres_docs", "en", "tech_docs", "postgres-docs", f"{path.stem}#{i}", text)


def _contents_pages(folder: Path, pattern: str) -> list[tuple[Path, str]]:
    return [(path, page_text(html)) for path in sorted(folder.glob(pattern))
            if not path.name.startswith("index.") and _is_contents_page(html := _read(path))]


def _bash_parts(root: Path) -> list[tuple[str, str]]:
    """(id, html) of each chapter, section and appendix of the Bash reference manual."""
    html = _read(root / BASH_MANUAL)
    cuts = [(m.start(), m.group(1)) for m in re.finditer(r'<div class="(?:chapter|section|appendix|unnumbered)[^"]*" id="([^"]+)"', html)]
    return [(name, html[start:end]) for (start, name), (end, _) in zip(cuts, [*cuts[1:], (len(html), "")], strict=True)]


def bash_manual(root: Path) -> Iterator[Document]:
    """Sections of the Bash reference manual (not its indexes or the licence appendix)."""
    for name, html in _bash_parts(root):
        if "Index" not in name and "GNU-Free" not in name:
            for i, text in enumerate(html_sections(html, None, min_chars=800)):
                yield Document("bash_manual", "en", "tech_docs", "bash-manual", f"{name}#{i}", text)


def _dictd_number(digits: str) -> int:
    value = 0
    for digit in digits:
        value = value * 64 + _DICTD_DIGITS.index(digit)
    return value


def dictd_entries(root: Path, name: str) -> list[str]:
    """The entries of a dictd database in index order, its ``00-database-*`` header entries left out."""
    folder = root / "usr/share/dictd"
    data = gzip.decompress((folder / f"{name}.dict.dz").read_bytes())
    entries = []
    for line in (folder / f"{name}.index").read_text(encoding="utf-8").splitlines():
        word, offset, length = line.split("\t")[:3]
        if not word.startswith("00-database") and not word.startswith("00database"):
            start = _dictd_number(offset)
            entries.append(data[start:start + _dictd_number(length)].decode("utf-8", errors="replace").strip())
    return list(dict.fromkeys(entries))


def jargon(root: Path) -> Iterator[Document]:
    """Pages of the Jargon File, a lexicon of hacker slang: consecutive entries of about 1,000 characters."""
    for i, page in enumerate(collection_pages(dictd_entries(root, "jargon"), 1000)):
        yield Document("jargon", "en", "encyclopedia", "jargon-file", f"jargon#{i}", page)


def devils_dictionary(root: Path) -> Iterator[Document]:
    """Pages of Ambrose Bierce's The Devil's Dictionary: consecutive entries of about 900 characters."""
    for i, page in enumerate(collection_pages(dictd_entries(root, "devil"), 900)):
        yield Document("devils_dictionary", "en", "literature", "devils-dictionary", f"devil#{i}", page)


def _renpy_scripts(root: Path) -> list[tuple[list[str], list[str]]]:
    """(English lines, Chinese lines) of each translated Ren'Py demo script: ``speaker: text`` turns."""
    folder = root / "usr/share/games/renpy/demo/game/tl/schinese"
    scripts = []
    for path in sorted(folder.glob("*.rpy")):
        english, chinese = [], []
        for line in path.read_text(encoding="utf-8-sig").splitlines():
            found = _RENPY_LINE.match(line)
            if found and found.group(2) not in ("old", "new"):  # "old"/"new": the interface's strings, not dialogue
                text = _RENPY_TAG.sub("", found.group(3).replace('\\"', '"')).strip()
                if text:
                    (english if found.group(1) else chinese).append(text)
        scripts.append((english, chinese))
    return scripts


def visual_novel(root: Path, lang: str) -> Iterator[Document]:
    """The Ren'Py demo's dialogue as scripts of a narrator's turns, a page of consecutive lines."""
    speaker, colon, size = {"en": ("Eileen", ": ", 900), "zh": ("艾琳", "：", 400)}[lang]
    for n, (english, chinese) in enumerate(_renpy_scripts(root)):
        lines = [f"{speaker}{colon}{text}" for text in (english if lang == "en" else chinese)]
        for i, page in enumerate(collection_pages(lines, size, separator="\n")):
            yield Document("dialogue", lang, "dialogue", f"renpy-{lang}", f"script{n}#{i}", page)


def boilerplate_pages(root: Path) -> Iterator[Page]:
    """The manuals' own title, copyright, licence, contents and index pages."""
    for lang, folder in (("en", "en"), ("zh", "zh_CN")):
        yield _page(f"install-guide/{folder}/index", lang, f"install-guide-{lang}", "front_matter", "boilerplate",
                   page_text(_read(root / INSTALL_GUIDE / folder / "index.html")))
    for folder in CHINESE_GUIDES:
        path = next((root / folder).glob("index.zh-cn.html"))
        yield _page(f"{path.parent.parent.name}/index", "zh", "debian-guides-zh", "front_matter", "boilerplate",
                   page_text(_read(path)))
    for (folder, pattern, lang, source) in ((INSTALL_GUIDE + "/en", "*.html", "en", "install-guide-en"),
                                            (INSTALL_GUIDE + "/zh_CN", "*.html", "zh", "install-guide-zh"),
                                            (POSTGRES_DOCS, "*.html", "en", "postgres-docs")):
        for path, text in _contents_pages(root / folder, pattern)[:CONTENTS_PAGES]:
            yield _page(f"{source}/{path.stem}", lang, source, "contents", "boilerplate", text)
    for lang, folder in (("en", "en"), ("zh", "zh_CN")):
        licence = page_text(_read(root / INSTALL_GUIDE / folder / INSTALL_GUIDE_LICENCE))
        for i, page in enumerate(collection_pages(licence.split("\n"), 3000, separator="\n")):
            yield _page(f"install-guide/{folder}/licence#{i}", lang, f"install-guide-{lang}", "licence", "boilerplate",
                        page)
    for name, genre in (("index", "front_matter"), ("legalnotice", "licence")):
        yield _page(f"postgres/{name}", "en", "postgres-docs", genre, "boilerplate",
                   page_text(_read(root / POSTGRES_DOCS / f"{name}.html")))
    index = page_text(_read(root / POSTGRES_DOCS / "bookindex.html"))
    for i, page in enumerate(itertools.islice(collection_pages(index.split("\n"), 3000, separator="\n"), INDEX_PAGES)):
        yield _page(f"postgres/bookindex#{i}", "en", "postgres-docs", "index", "boilerplate", page)
    for name, html in _bash_parts(root):
        if "Index" in name or "GNU-Free" in name:
            pages = collection_pages(page_text(html).split("\n"), 3000, separator="\n")
            for i, page in enumerate(itertools.islice(pages, INDEX_PAGES)):
                yield _page(f"bash/{name}#{i}", "en", "bash-manual", "licence" if "GNU-Free" in name else "index",
                           "boilerplate", page)


def other_script_pages(root: Path, per_language: int = 20) -> Iterator[Page]:
    """Sections of the installation guide and pages of GNOME's help in Greek, Japanese, Korean, Russian,
    Assamese (Bengali script), Gujarati, Marathi (Devanagari), Tamil and Telugu, written in that script
    (partly translated pages left out): a few per language."""
    for lang in OTHER_LANGS_GUIDE:
        chapters = _chapters(root / INSTALL_GUIDE / lang, "ch0*.html")
        texts = [t for _, html in chapters for t in html_sections(html, None, min_chars=400) if in_own_script(t)]
        for i, text in enumerate(texts[:per_language]):
            yield _page(f"install-guide/{lang}#{i}", lang, f"install-guide-{lang}", "other_script", "other_lang", text)
    for lang in OTHER_LANGS_HELP:
        pages = sorted((root / HELP_PAGES / lang / "gnome-help").glob("*.page"))
        texts = [t for t in (_help_text(_read(p)) for p in pages) if len(t) >= 300 and in_own_script(t)]
        for i, text in enumerate(texts[:per_language]):
            yield _page(f"gnome-help/{lang}#{i}", lang, f"gnome-help-{lang}", "other_script", "other_lang", text)


def _help_text(xml: str) -> str:
    """The text of a Mallard help page, without its <info> block (credits, licence, links)."""
    return page_text(re.sub(r"<info>.*?</info>", "", xml, flags=re.S))
