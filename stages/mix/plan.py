"""The mixing plan: category budgets, the exponent rule inside a category, the repetition cap."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def exponent_shares(tokens: dict[str, float], alpha: float) -> dict[str, float]:
    """q_s = p_s^alpha / Σ p^alpha for sources with token shares p_s (sources with no tokens get 0)."""
    total = sum(tokens.values())
    if total <= 0:
        return {s: 0.0 for s in tokens}
    powered = {s: (t / total) ** alpha if t > 0 else 0.0 for s, t in tokens.items()}
    norm = sum(powered.values())
    return {s: v / norm for s, v in powered.items()}


def capped_allocation(budget: float, shares: dict[str, float], available: dict[str, float],
                      max_epochs: float, start: dict[str, float] | None = None) -> tuple[dict[str, float], float]:
    """Add ``budget`` tokens to ``start`` (default nothing) by ``shares``, with no source above
    ``max_epochs`` × its available tokens.

    What a capped source cannot take is redistributed to the uncapped ones in proportion to their
    shares (UniMax-style), until nothing moves. Returns (tokens per source, budget left unplaced).
    """
    allocation = {s: (start or {}).get(s, 0.0) for s in shares}
    room = {s: max(max_epochs * available.get(s, 0.0) - allocation[s], 0.0) for s in shares}
    # lists in the order of ``shares``, never sets: float sums must not depend on PYTHONHASHSEED
    open_sources = [s for s, q in shares.items() if q > 0 and room[s] > 0]
    remaining = budget
    while remaining > 1e-9 and open_sources:
        weight = sum(shares[s] for s in open_sources)
        offers = {s: remaining * shares[s] / weight for s in open_sources}
        capped = [s for s in open_sources if offers[s] >= room[s]]
        if not capped:
            for source, offer in offers.items():
                allocation[source] += offer
            return allocation, 0.0
        for source in capped:
            allocation[source] += room[source]
            remaining -= room[source]
            room[source] = 0.0
        open_sources = [s for s in open_sources if s not in capped]
    return allocation, max(remaining, 0.0)


@dataclass
class MixPlan:
    """Planned tokens and epochs (repeat factors) per category and source."""

    category_budget: dict[str, float]
    source_tokens: dict[str, float]          # planned tokens per "category/source"
    epochs: dict[str, float]                 # planned / available per "category/source"
    available: dict[str, float]
    unplaced: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "category_budget": self.category_budget, "source_tokens": self.source_tokens,
            "epochs": self.epochs, "available": self.available, "unplaced": self.unplaced,
            "warnings": self.warnings,
        }

    @classmethod
    def from_dict(cls, data: dict) -> MixPlan:
        return cls(**data)


def make_plan(available: dict[str, dict[str, float]], weights: dict[str, float], alpha: float,
              max_epochs: float, budget: float) -> MixPlan:
    """Plan ``budget`` tokens over categories (``weights``) and their sources (``available`` tokens).

    A weighted category with no data is warned about and its weight goes to the others; so does
    whatever the repetition cap leaves unplaced inside a category, when another category can take it.
    """
    warnings = []
    present = {c: w for c, w in weights.items() if w > 0 and sum(available.get(c, {}).values()) > 0}
    for category in sorted(set(weights) - set(present)):
        if weights[category] > 0:
            warnings.append(f"category {category!r} has no data: its weight {weights[category]:g} "
                            "is redistributed to the other categories")
    total_weight = sum(present.values())
    budgets = {c: budget * w / total_weight for c, w in present.items()} if total_weight else {}
    source_tokens: dict[str, float] = {}
    epochs: dict[str, float] = {}
    flat_available: dict[str, float] = {}
    unplaced = 0.0
    left_over: dict[str, float] = {}
    for category, category_budget in budgets.items():
        sources = available[category]
        allocation, rest = capped_allocation(category_budget, exponent_shares(sources, alpha), sources, max_epochs)
        left_over[category] = rest
        for source, tokens in allocation.items():
            key = f"{category}/{source}"
            source_tokens[key] = tokens
            flat_available[key] = sources[source]
    spill = sum(left_over.values())
    takers = [c for c in budgets if left_over[c] == 0]
    for category in takers:
        sources = available[category]
        current = {s: source_tokens[f"{category}/{s}"] for s in sources}
        extra = spill * present[category] / sum(present[c] for c in takers)
        allocation, rest = capped_allocation(extra, exponent_shares(sources, alpha), sources, max_epochs, current)
        for source, tokens in allocation.items():
            source_tokens[f"{category}/{source}"] = tokens
        unplaced += rest
    if not takers:
        unplaced = spill
    if unplaced > 1e-6:
        warnings.append(f"the budget exceeds what max_epochs={max_epochs:g} allows: "
                        f"{unplaced:,.0f} of {budget:,.0f} tokens cannot be placed")
    for key, tokens in source_tokens.items():
        epochs[key] = tokens / flat_available[key] if flat_available[key] else 0.0
    realized_budget = {c: sum(t for k, t in source_tokens.items() if k.startswith(f"{c}/")) for c in budgets}
    return MixPlan(realized_budget, source_tokens, epochs, flat_available, unplaced, warnings)


def repeats(epochs: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """⌊e⌋ copies, plus one more when the document's seeded draw falls below frac(e)."""
    whole = np.floor(epochs)
    return (whole + (draws < epochs - whole)).astype(np.int32)
