"""Multiple-choice accuracy by log-likelihood: each option's text is scored as the answer to a zero-shot prompt.

The prompt is Chinese when the question holds a CJK character, English otherwise, and does not
list the options (cloze style: the model is scored on the answer it would write, which suits small
models better than picking a letter):

    以下是单项选择题，请直接给出正确答案。\\n\\n{question}\\n答案：{option}
    The following is a multiple choice question. Give the correct answer directly.\\n\\n{question}\\nAnswer: {option}

The prompt starts with EOS and is encoded apart from the option (which, in English, keeps its
leading space). An option's score is the sum of its tokens' log-probabilities; a row longer than
the context keeps its last max_seq_len + 1 tokens. ``correct`` counts questions whose right option
has the highest score, ``correct_norm`` those where it has the highest score per character (so that
long options are not penalised for their length). Ties go to the earlier option.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.questions import Question, QuestionSet
from stages.eval.codec import Codec
from stages.eval.forward import CompiledForward

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
TEMPLATE_ZH = "以下是单项选择题，请直接给出正确答案。\n\n{question}\n答案："
TEMPLATE_EN = "The following is a multiple choice question. Give the correct answer directly.\n\n{question}\nAnswer:"


def prompt_and_answers(question: Question) -> tuple[str, list[str]]:
    """The prompt text and the continuation text of each option."""
    if CJK.search(question.question):
        return TEMPLATE_ZH.format(question=question.question), list(question.options)
    return TEMPLATE_EN.format(question=question.question), [f" {option}" for option in question.options]


def continuation_logliks(forward: CompiledForward, context: list[int],
                         continuations: Sequence[list[int]]) -> list[float]:
    """Sum of log p(token | everything before it) over each continuation's tokens, given ``context``."""
    rows, scored = [], []
    for continuation in continuations:
        row = (context + continuation)[-(forward.max_seq_len + 1):]
        rows.append(row)
        scored.append(min(len(continuation), len(row) - 1))
    logprobs = forward.target_logprobs(rows)
    return [float(values[len(values) - n:].sum()) for values, n in zip(logprobs, scored, strict=True)]


def option_logliks(forward: CompiledForward, codec: Codec, question: Question) -> list[float]:
    """The log-likelihood of each option's text as the answer to the question's prompt."""
    prompt, answers = prompt_and_answers(question)
    return continuation_logliks(forward, codec.encode_prompt(prompt), [codec.encode(text) for text in answers])


def predictions(logliks: Sequence[float], answers: Sequence[str]) -> tuple[int, int]:
    """(option with the highest log-likelihood, option with the highest log-likelihood per character)."""
    scores = np.asarray(logliks, dtype=np.float64)
    lengths = np.array([len(text.strip()) for text in answers], dtype=np.float64)
    return int(np.argmax(scores)), int(np.argmax(scores / lengths))


class Accuracies:
    """Accuracy and length-normalised accuracy from ``questions``, ``correct`` and ``correct_norm``."""

    questions: int
    correct: int
    correct_norm: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.questions

    @property
    def accuracy_norm(self) -> float:
        return self.correct_norm / self.questions


@dataclass(frozen=True)
class FileResult(Accuracies):
    """Counts for one benchmark file."""

    path: Path
    questions: int
    correct: int
    correct_norm: int


@dataclass(frozen=True)
class MultipleChoiceResult(Accuracies):
    """Per-file counts; the overall accuracies are over all questions together."""

    files: tuple[FileResult, ...]

    @property
    def questions(self) -> int:
        return sum(f.questions for f in self.files)

    @property
    def correct(self) -> int:
        return sum(f.correct for f in self.files)

    @property
    def correct_norm(self) -> int:
        return sum(f.correct_norm for f in self.files)


def score_set(forward: CompiledForward, codec: Codec, question_set: QuestionSet) -> FileResult:
    """Score every question of one file."""
    correct = correct_norm = 0
    for question in question_set.questions:
        _, answers = prompt_and_answers(question)
        best, best_norm = predictions(option_logliks(forward, codec, question), answers)
        correct += best == question.answer
        correct_norm += best_norm == question.answer
    return FileResult(path=question_set.path, questions=len(question_set.questions), correct=correct,
                      correct_norm=correct_norm)


def evaluate_multiple_choice(forward: CompiledForward, codec: Codec,
                             question_sets: Sequence[QuestionSet]) -> MultipleChoiceResult:
    """Accuracy per file and overall."""
    return MultipleChoiceResult(files=tuple(score_set(forward, codec, s) for s in question_sets))
