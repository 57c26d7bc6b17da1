"""Clean documents for each category in English and Chinese, laid out the way each kind of source looks."""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from demo import content_code, content_en, content_zh
from demo.content_fill import capitalize, fill


@dataclass(frozen=True)
class Language:
    """Everything a builder needs to write in one language."""

    code: str
    pools: dict[str, tuple[str, ...]]
    templates: dict[str, tuple[str, ...]]
    layout: dict[str, object]
    ency_subject: Callable[[random.Random, str], dict[str, str]]


LANGUAGES = {
    "en": Language("en", content_en.POOLS, content_en.TEMPLATES, content_en.LAYOUT, content_en.ency_subject),
    "zh": Language("zh", content_zh.POOLS, content_zh.TEMPLATES, content_zh.LAYOUT, content_zh.ency_subject),
}


class _Writer:
    """Fills one document's sentences; a template comes back only once all others of its kind were used."""

    def __init__(self, rng: random.Random, lang: Language, fixed: dict[str, str] | None = None) -> None:
        self.rng, self.lang, self.fixed = rng, lang, fixed
        self._used: dict[str, set[int]] = {}

    def sentence(self, key: str) -> str:
        templates = self.lang.templates[key]
        used = self._used.setdefault(key, set())
        if len(used) == len(templates):
            used.clear()
        index = int(self.rng.random() * len(templates))
        while index in used:
            index = int(self.rng.random() * len(templates))
        used.add(index)
        text = fill(templates[index], self.lang.pools, self.rng, self.fixed)
        return capitalize(text) if self.lang.code == "en" else text

    def paragraph(self, key: str, count: int) -> str:
        return str(self.lang.layout["joiner"]).join(self.sentence(key) for _ in range(count))

    def count(self, low: int, high: int) -> int:
        """A sentence count; Chinese sentences carry fewer bytes, so they get a third more."""
        count = self.rng.randint(low, high)
        return count + count // 3 if self.lang.code == "zh" else count


def _academic(rng: random.Random, lang: Language, source: str) -> str:
    w = _Writer(rng, lang)
    parts = [w.sentence("academic_title")]
    if rng.random() < 0.6:
        parts.append(f"{lang.layout['abstract']}\n{w.paragraph('academic', w.count(3, 5))}")
    headings = lang.layout["academic_sections"] if rng.random() < 0.4 else ()
    for i in range(rng.randint(3, 5)):
        body = w.paragraph("academic", w.count(3, 6))
        parts.append(f"{headings[i]}\n{body}" if i < len(headings) else body)
    return "\n\n".join(parts)


def _fence(fence: str, code: str) -> str:
    return f"```{fence}\n{code}\n```"


def tech_document(rng: random.Random, lang: Language, stub: bool = False) -> str:
    """A README-like doc; with stub=True its code blocks are unfinished functions."""
    project = content_code.project_name(rng)
    lang_name = rng.choice(content_code.LANG_NAMES)
    w = _Writer(rng, lang, {"project": project, "lang_name": lang_name})
    layout = lang.layout
    parts = [f"# {w.sentence('tech_title')}", w.paragraph("tech", w.count(3, 5))]
    if rng.random() < 0.7:
        command = content_code.install_command(lang_name, project)
        lead = rng.choice(layout["install_lead"])
        parts.append(f"## {layout['install']}\n\n{lead}\n\n{_fence('bash', command)}")
    sections = rng.sample(layout["tech_sections"], rng.randint(2, 3) if stub else rng.randint(2, 4))
    snippets = content_code.complete_snippets(rng, lang_name, project, 1 if lang.code == "zh" else 2)
    for i, heading in enumerate(sections):
        parts.append(f"## {heading}")
        parts.append(w.paragraph("tech", w.count(2, 4)))
        if stub:
            parts.append(_fence(*content_code.stub_snippet(rng, lang_name, project)))
        elif snippets and (i == 0 or rng.random() < 0.5):
            parts.append(rng.choice(layout["code_lead"]))
            parts.append(_fence(*snippets.pop()))
        else:
            bullets = "\n".join(f"- {w.sentence('tech_list')}" for _ in range(rng.randint(3, 5)))
            parts.append(f"{rng.choice(layout['list_lead'])}\n\n{bullets}")
    return "\n\n".join(parts)


def _encyclopedia(rng: random.Random, lang: Language, source: str) -> str:
    kind = rng.choice(("place", "species", "person", "structure"))
    fixed = lang.ency_subject(rng, kind)
    born = rng.randint(1800, 1940)
    fixed.update(born=str(born), died=str(born + rng.randint(45, 80)), mid=str(born + rng.randint(25, 44)))
    w = _Writer(rng, lang, fixed)
    key = f"ency_{kind}"
    joiner = str(lang.layout["joiner"])
    parts = [fixed["subj"], joiner.join([w.sentence(f"{key}_lead"), w.paragraph(key, w.count(3, 4))])]
    headings = lang.layout["ency_sections"] if rng.random() < 0.35 else ()
    for i in range(rng.randint(2, 4)):
        body = w.paragraph(key, w.count(3, 6))
        parts.append(f"{headings[i]}\n{body}" if i < len(headings) else body)
    return "\n\n".join(parts)


def _news(rng: random.Random, lang: Language, source: str) -> str:
    w = _Writer(rng, lang)
    title = w.sentence("news_title")
    if rng.random() < 0.3:
        count = rng.randint(6, 9) if lang.code == "zh" else rng.randint(3, 4)
        return f"{title}\n\n{w.paragraph('news', count)}"
    paragraphs = [w.paragraph("news", w.count(2, 5)) for _ in range(rng.randint(4, 8))]
    return "\n\n".join([title, *paragraphs])


def _wrap(lang: Language, text: str) -> str:
    width = int(lang.layout["wrap"])
    if lang.code == "zh":
        return "\n".join(text[i : i + width] for i in range(0, len(text), width))
    return textwrap.fill(text, width=width)


def _literature(rng: random.Random, lang: Language, source: str) -> str:
    w = _Writer(rng, lang)
    title = w.sentence("lit_title")
    if source == "poetry_like" or (source != "fiction_like" and rng.random() < 0.5):
        stanzas = [
            "\n".join(w.sentence("poem") for _ in range(rng.randint(4, 6))) for _ in range(rng.randint(4, 8))
        ]
        return "\n\n".join([title, *stanzas])
    paragraphs = [_wrap(lang, w.paragraph("fiction", w.count(3, 6))) for _ in range(rng.randint(4, 7))]
    return "\n\n".join([title, *paragraphs])


_DIALOGUE_STYLES = {"support_chat": "support", "qa_forum": "qa", "chitchat": "chat"}


def _dialogue(rng: random.Random, lang: Language, source: str) -> str:
    style = _DIALOGUE_STYLES.get(source) or rng.choice(tuple(_DIALOGUE_STYLES.values()))
    first, second = lang.layout["speakers"][style]
    colon = lang.layout["colon"]
    w = _Writer(rng, lang, {"project": content_code.project_name(rng)})
    turns = []
    if style == "qa":
        for _ in range(rng.randint(3, 5)):
            turns.append((first, w.sentence("qa_question")))
            turns += [(second, w.sentence("qa_answer")) for _ in range(rng.randint(2, 4))]
    else:
        keys = ("support_user", "support_agent") if style == "support" else ("chat", "chat")
        for i in range(rng.randint(10, 24)):
            turns.append(((first, second)[i % 2], w.sentence(keys[i % 2])))
    return "\n".join(f"{speaker}{colon}{line}" for speaker, line in turns)


_BUILDERS: dict[str, Callable[[random.Random, Language, str], str]] = {
    "academic": _academic,
    "tech_docs": lambda rng, lang, source: tech_document(rng, lang),
    "encyclopedia": _encyclopedia,
    "news": _news,
    "literature": _literature,
    "dialogue": _dialogue,
}

CATEGORIES = tuple(_BUILDERS)


def clean_document(rng: random.Random, category: str, lang: str, source: str) -> str:
    """A defect-free document of a category ("en" or "zh"); source picks the style where it matters."""
    return _BUILDERS[category](rng, LANGUAGES[lang], source)
