"""Template filling shared by the content modules: word-list parsing, slots, English inflection."""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence

_SLOT_RE = re.compile(r"\{([#\w]+)(?::(\w+))?\}")
_VOWELS = "aeiou"

Pools = Mapping[str, Sequence[str]]


def items(block: str) -> tuple[str, ...]:
    """Split a comma-separated block into entries, collapsing whitespace (line breaks included)."""
    return tuple(" ".join(w.split()) for w in block.split(",") if w.strip())


def plural(noun: str) -> str:
    """Regular English plural of the last word of a noun phrase."""
    if noun.endswith(("s", "sh", "ch", "x", "z")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in _VOWELS:
        return noun[:-1] + "ies"
    return noun + "s"


def third_person(verb: str) -> str:
    """Present third-person singular of a regular English verb."""
    head, _, rest = verb.partition(" ")
    if head == "have":
        head = "has"
    elif head.endswith(("s", "sh", "ch", "x", "z", "o")):
        head += "es"
    elif head.endswith("y") and head[-2:-1] not in _VOWELS:
        head = head[:-1] + "ies"
    else:
        head += "s"
    return f"{head} {rest}".rstrip()


def with_article(phrase: str) -> str:
    """Prefix "a" or "an" according to the first letter."""
    return ("an " if phrase[:1].lower() in _VOWELS else "a ") + phrase


def capitalize(text: str) -> str:
    """Uppercase the first character, leaving the rest untouched."""
    return text[:1].upper() + text[1:]


def _number(rng: random.Random, kind: str) -> str:
    if kind == "#n":
        return str(rng.randint(2, 60))
    if kind == "#big":
        return f"{rng.randint(120, 98000):,}"
    if kind == "#pct":
        return str(rng.randint(3, 96))
    if kind == "#dec":
        return f"{rng.randint(1, 99) / 10:.1f}"
    if kind == "#year":
        return str(rng.randint(1890, 2021))
    raise KeyError(kind)


def _inflect(word: str, form: str | None) -> str:
    if form is None:
        return word.split("/")[0]
    if form == "past":
        return word.split("/")[-1]
    if form == "s3":
        return third_person(word.split("/")[0])
    if form == "pl":
        return plural(word)
    if form == "a":
        return with_article(word)
    if form == "cap":
        return capitalize(word.split("/")[0])
    raise KeyError(form)


@functools.cache
def _compile(template: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """The template as (literal text, slot name, slot form) steps; the last step has no slot."""
    steps, pos = [], 0
    for match in _SLOT_RE.finditer(template):
        steps.append((template[pos : match.start()], match.group(1), match.group(2)))
        pos = match.end()
    steps.append((template[pos:], None, None))
    return tuple(steps)


def fill(template: str, pools: Pools, rng: random.Random, fixed: Mapping[str, str] | None = None) -> str:
    """Replace every {slot} or {slot:form} with a random pool entry (or a fixed value) and return the text.

    Slots starting with "#" are numbers (#n, #big, #pct, #dec, #year). Verb entries are "base/past";
    forms are past, s3, pl, a (with article) and cap.
    """
    out = []
    append, rand = out.append, rng.random
    for literal, name, form in _compile(template):
        append(literal)
        if name is None:
            break
        if name[0] == "#":
            append(_number(rng, name))
            continue
        if fixed is not None and name in fixed:
            word = fixed[name]
            if form is None:
                append(word)
                continue
        else:
            pool = pools[name]
            word = pool[int(rand() * len(pool))]
        append(word if form is None and "/" not in word else _inflect(word, form))
    return "".join(out)
