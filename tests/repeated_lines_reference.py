"""The repeated-lines filter defined one line at a time (stages/clean/repeated_lines.py computes it over a batch's
code points): per group, the lines of enough documents, without the documents that are copies."""

from __future__ import annotations

from collections import Counter

from stages.clean.config import LineFilterConfig
from stages.clean.lines import words
from stages.clean.repeated_lines import MAX_REPEATED_SHARE


def _frame(lines_of: list[dict[str, list[int]]], groups: list[str], docs: list[int], sizes: Counter[str],
           cfg: LineFilterConfig) -> set[tuple[str, str]]:
    counts = Counter((groups[d], line) for d in docs for line in lines_of[d])
    return {(group, line) for (group, line), n in counts.items()
            if n >= cfg.repeated_min_documents and n >= cfg.repeated_min_share * sizes[group]
            and words(line) >= cfg.repeated_min_words}


def repeated_lines(texts: list[str], groups: list[str], cfg: LineFilterConfig) -> list[set[int]]:
    """Per text, the indices (in ``text.split("\\n")``) of its lines repeated across its group's documents."""
    lines_of: list[dict[str, list[int]]] = []
    for text in texts:
        where: dict[str, list[int]] = {}
        for n, line in enumerate(text.split("\n")):
            if stripped := line.strip():
                where.setdefault(stripped, []).append(n)
        lines_of.append(where)
    sizes = Counter(groups)
    everyone = list(range(len(texts)))
    first = _frame(lines_of, groups, everyone, sizes, cfg)
    framed = [d for d in everyone
              if sum((groups[d], line) in first for line in lines_of[d]) <= MAX_REPEATED_SHARE * len(lines_of[d])]
    frame = _frame(lines_of, groups, framed, sizes, cfg)
    removed: list[set[int]] = [set() for _ in texts]
    for d in framed:
        removed[d] = {n for line, at in lines_of[d].items() if (groups[d], line) in frame for n in at}
    return removed
