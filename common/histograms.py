"""Fixed-bin histograms of signals per language, small enough to live in a stage's _stats.json."""

from __future__ import annotations

import functools

import numpy as np

COUNT_SIGNALS = {"q_chars", "q_tokens", "q_latin_words", "q_lines", "q_stop_words"}
WIDE_SIGNALS = {"q_mean_word_len": 20.0, "q_symbol_word_ratio": 1.0, "q_newline_token_ratio": 1.0, "q_stub_frac": 2.0}
FRACTION_BINS = 50


@functools.lru_cache(maxsize=128)
def bin_edges(signal: str) -> np.ndarray:
    """The left edges of a signal's bins: a zero bin, then log-spaced edges (fine near small
    thresholds such as 0.002, coarse where nothing is decided)."""
    if signal in COUNT_SIGNALS:
        return np.concatenate(([0.0], np.logspace(0, 6, FRACTION_BINS - 1)))
    upper = WIDE_SIGNALS.get(signal, 1.0)
    return np.concatenate(([0.0], np.logspace(-4, np.log10(upper), FRACTION_BINS - 1, endpoint=False)))


@functools.lru_cache(maxsize=128)
def _bin_labels(signal: str) -> tuple[str, ...]:
    return tuple(f"{edge:.6g}" for edge in bin_edges(signal))


def signal_histograms(signals: dict[str, np.ndarray], langs: list[str]) -> dict[str, dict[str, dict[str, int]]]:
    """{signal: {lang: {left edge: count}}}; values beyond the last edge fall in the last bin."""
    lang_names, lang_of = np.unique(np.array(langs), return_inverse=True)
    out: dict[str, dict[str, dict[str, int]]] = {}
    for name, values in signals.items():
        edges, labels = bin_edges(name), _bin_labels(name)
        index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 1)
        counts = np.bincount(lang_of * len(edges) + index, minlength=len(lang_names) * len(edges))
        counts = counts.reshape(len(lang_names), len(edges))
        out[name] = {str(lang): {labels[b]: int(counts[i, b]) for b in np.flatnonzero(counts[i]).tolist()}
                     for i, lang in enumerate(lang_names)}
    return out
