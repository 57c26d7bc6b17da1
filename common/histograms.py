"""Fixed-bin histograms of signals per language, small enough to live in a stage's _stats.json."""

from __future__ import annotations

import numpy as np

COUNT_SIGNALS = {"q_chars", "q_tokens", "q_latin_words", "q_lines", "q_stop_words"}
WIDE_SIGNALS = {"q_mean_word_len": 20.0, "q_symbol_word_ratio": 1.0, "q_newline_token_ratio": 1.0, "q_stub_frac": 2.0}
FRACTION_BINS = 50


def bin_edges(signal: str) -> np.ndarray:
    """The left edges of a signal's bins: a zero bin, then log-spaced edges (fine near small
    thresholds such as 0.002, coarse where nothing is decided)."""
    if signal in COUNT_SIGNALS:
        return np.concatenate(([0.0], np.logspace(0, 6, FRACTION_BINS - 1)))
    upper = WIDE_SIGNALS.get(signal, 1.0)
    return np.concatenate(([0.0], np.logspace(-4, np.log10(upper), FRACTION_BINS - 1, endpoint=False)))


def signal_histograms(signals: dict[str, np.ndarray], langs: list[str]) -> dict[str, dict[str, dict[str, int]]]:
    """{signal: {lang: {left edge: count}}}; values beyond the last edge fall in the last bin."""
    lang_array = np.array(langs)
    out: dict[str, dict[str, dict[str, int]]] = {}
    for name, values in signals.items():
        edges = bin_edges(name)
        index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 1)
        per_lang: dict[str, dict[str, int]] = {}
        for lang in np.unique(lang_array):
            bins, counts = np.unique(index[lang_array == lang], return_counts=True)
            per_lang[str(lang)] = {f"{edges[b]:.6g}": int(c) for b, c in zip(bins, counts, strict=True)}
        out[name] = per_lang
    return out
