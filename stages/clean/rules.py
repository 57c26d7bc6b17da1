"""Quality rules as data: (name, signal, per-language min/max) applied to signal columns."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from stages.clean.config import RuleConfig

ANY_LANGUAGE = "*"


@dataclass(frozen=True)
class Rule:
    """Drop a document whose ``signal`` is below ``min`` or above ``max`` for its language."""

    name: str
    signal: str
    min: dict[str, float]
    max: dict[str, float]

    def bounds(self, lang: str) -> tuple[float, float]:
        """(lower, upper) for ``lang``; NaN where the rule does not judge that language."""
        low = self.min.get(lang, self.min.get(ANY_LANGUAGE, math.nan))
        high = self.max.get(lang, self.max.get(ANY_LANGUAGE, math.nan))
        return low, high


def build_rules(configured: dict[str, RuleConfig]) -> list[Rule]:
    """The enabled rules in configuration order (their signals are checked when the config loads)."""
    return [Rule(name, rule.signal, dict(rule.min), dict(rule.max)) for name, rule in configured.items() if rule.enabled]


def apply_rules(rules: list[Rule], signals: dict[str, np.ndarray], langs: list[str],
                decided: list[str | None]) -> tuple[list[str | None], list[str | None]]:
    """The first failing rule per document (None = kept) and the signal value that failed it.

    ``decided`` holds reasons fixed before the rules (e.g. language ID); those are kept as is.
    """
    reasons = list(decided)
    details: list[str | None] = [None] * len(langs)
    lang_index = {lang: [i for i, x in enumerate(langs) if x == lang] for lang in set(langs)}
    for rule in rules:
        values = signals[rule.signal]
        low = np.full(len(langs), np.nan)
        high = np.full(len(langs), np.nan)
        for lang, rows in lang_index.items():
            low[rows], high[rows] = rule.bounds(lang)
        with np.errstate(invalid="ignore"):
            failed = (values < low) | (values > high)
        for i in np.nonzero(failed)[0]:
            if reasons[i] is None:
                reasons[i] = rule.name
                bound = f"min {low[i]:g}" if values[i] < low[i] else f"max {high[i]:g}"
                details[i] = f"{rule.signal}={values[i]:.4g} ({bound}, lang {langs[i]})"
    return reasons, details
