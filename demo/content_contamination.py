"""Evaluation items in the demo corpus: pages that copy the sample questions Kiln ships for evaluation as exam-prep
sites, forums and answer keys copy them, and hard negatives that share only exam phrasing, options or a short piece
of a question with them.
"""

from __future__ import annotations

import functools
import random
import unicodedata

from common.eval_sets import SHIPPED_EVAL_SETS
from common.questions import LETTERS, Question, read_question_set
from common.text import TOKEN_RE

MIN_TOKENS = 8  # decontaminate.min_item_tokens' default: shorter questions are not matched, so not planted
SETS = {"zh": ("ceval_sample.csv", "cmmlu_sample.csv"), "en": ("english_sample.csv",)}
ANSWER_LABEL = {"zh": "答案：", "en": "Answer: "}
PHRASING = {"zh": ("下列说法正确的是", "以下哪一项是错误的", "根据材料回答问题"),
            "en": ("Which of the following is true?", "Choose the best answer.", "Read the passage and answer.")}
_TO_FULL_WIDTH = str.maketrans({"?": "？", ",": "，", ":": "：", "(": "（", ")": "）"})
_TO_HALF_WIDTH = str.maketrans({"？": "?", "，": ",", "：": ":", "（": "(", "）": ")", "。": "."})


def _tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower())


@functools.lru_cache(maxsize=1)
def _questions() -> dict[str, list[Question]]:
    """The shipped sample questions long enough to be matched, per language."""
    return {lang: [q for name in names for q in read_question_set(SHIPPED_EVAL_SETS / name).questions
                   if len(_tokens(q.question)) >= MIN_TOKENS]
            for lang, names in SETS.items()}


def _exam_block(question: Question, number: int, lang: str) -> str:
    """A numbered question with its options on lines of their own and the answer after them."""
    options = "\n".join(f"{letter}. {text}" for letter, text in zip(LETTERS, question.options, strict=True))
    return f"{number}. {question.question}\n{options}\n{ANSWER_LABEL[lang]}{LETTERS[question.answer]}"


def _reformatted(question: str, rng: random.Random, lang: str) -> str:
    """The question as a copy reshapes it: other punctuation widths, a line break inside, spacing or case changed."""
    if lang == "zh":  # wrapped anywhere but inside a Latin word ("HTTP")
        cuts = [i for i in range(3, len(question) - 2) if not (question[i - 1].isascii() and question[i].isascii())]
        cut = rng.choice(cuts)
        return f"{question[:cut]}\n{question[cut:]}".translate(_TO_HALF_WIDTH)
    words = question.split(" ")
    cut = rng.randrange(2, len(words) - 1)
    return ("  ".join(words[:cut]) + "\n" + " ".join(words[cut:])).upper().translate(_TO_FULL_WIDTH)


def _insert(rng: random.Random, text: str, block: str) -> str:
    """``text`` with ``block`` as a paragraph of its own between two of its paragraphs (or at its end)."""
    paragraphs = text.split("\n\n")
    at = rng.randint(1, len(paragraphs))
    return "\n\n".join([*paragraphs[:at], block, *paragraphs[at:]])


def _within(rng: random.Random, text: str, phrase: str, lang: str) -> str:
    """``text`` with ``phrase`` as a sentence at the end of one of its paragraphs."""
    paragraphs = text.split("\n\n")
    at = rng.randrange(len(paragraphs))
    paragraphs[at] += phrase if lang == "zh" else f" {phrase}"
    return "\n\n".join(paragraphs)


def contaminated_document(rng: random.Random, text: str, lang: str) -> str:
    """``text`` with one or more sample questions copied in: verbatim, laid out with options and answer,
    reshaped, or several of them as an exam-prep block."""
    questions = _questions()[lang]
    question = rng.choice(questions)
    style = rng.randrange(4)
    if style == 0:
        block = question.question
    elif style == 1:
        block = _exam_block(question, rng.randint(1, 30), lang)
    elif style == 2:
        block = _reformatted(question.question, rng, lang)
    else:
        block = "\n\n".join(_exam_block(q, n, lang) for n, q in enumerate(rng.sample(questions, 3), start=1))
    return _insert(rng, text, block)


def hard_negative(rng: random.Random, text: str, lang: str) -> str:
    """``text`` with what a page shares with exam questions by chance, in one of its sentences: common exam phrasing,
    a question's options, or a short piece of a question (fewer tokens than a match needs)."""
    question = rng.choice(_questions()[lang])
    style = rng.randrange(3)
    if style == 0:
        block = rng.choice(PHRASING[lang])
    elif style == 1:
        block = ("、".join(question.options) + "。") if lang == "zh" else (", ".join(question.options) + ".")
    else:
        tokens = _tokens(question.question)[: MIN_TOKENS - 3]
        block = ("".join(tokens) if lang == "zh" else " ".join(tokens).capitalize()) + ("。" if lang == "zh" else ".")
    return _within(rng, text, block, lang)
