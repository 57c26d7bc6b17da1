"""Multiple-choice questions from CSV files in the CMMLU or C-Eval column layout (read by the evaluator and by
decontamination).

CMMLU: ``,Question,A,B,C,D,Answer`` (the first column is an unnamed index). C-Eval:
``id,question,A,B,C,D,answer`` with an optional ``explanation``. Column names are matched
case-insensitively; other columns are ignored. Errors name the file and the row (the first
question is row 1; the line counts the header).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError

LETTERS = ("A", "B", "C", "D")


class QuestionFileError(KilnError):
    """A multiple-choice CSV file is missing, unreadable or not in the CMMLU or C-Eval layout."""


REQUIRED = ("question", *(letter.lower() for letter in LETTERS), "answer")


@dataclass(frozen=True)
class Question:
    """One row: the question, its four options and the index of the right one."""

    row: int
    question: str
    options: tuple[str, ...]
    answer: int


@dataclass(frozen=True)
class QuestionSet:
    """The questions of one CSV file."""

    path: Path
    questions: tuple[Question, ...]


def _read_rows(path: Path) -> list[tuple[int, list[str]]]:
    """Non-blank rows with the line each ends on."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            return [(reader.line_num, row) for row in reader if any(cell.strip() for cell in row)]
    except FileNotFoundError:
        raise QuestionFileError(f"{path}: benchmark file not found") from None
    except UnicodeDecodeError as err:
        raise QuestionFileError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except csv.Error as err:
        raise QuestionFileError(f"{path}: not a readable CSV ({err})") from None
    except OSError as err:
        raise QuestionFileError(f"{path}: cannot read ({err.strerror})") from None


def _columns(path: Path, header: list[str]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for i, name in enumerate(header):
        positions.setdefault(name.strip().lower(), i)
    missing = [name for name in REQUIRED if name not in positions]
    if missing:
        raise QuestionFileError(f"{path}: missing column(s) {missing} in the header {header} (expected CMMLU "
                        "',Question,A,B,C,D,Answer' or C-Eval 'id,question,A,B,C,D,answer')")
    return positions


def _question(where: str, cells: list[str], width: int, columns: dict[str, int]) -> tuple[str, tuple[str, ...], int]:
    if len(cells) != width:
        raise QuestionFileError(f"{where}: {len(cells)} fields, the header has {width}")
    text = cells[columns["question"]].strip()
    if not text:
        raise QuestionFileError(f"{where}: the question is empty")
    options = tuple(cells[columns[letter.lower()]].strip() for letter in LETTERS)
    for letter, option in zip(LETTERS, options, strict=True):
        if not option:
            raise QuestionFileError(f"{where}: option {letter} is empty")
    answer = cells[columns["answer"]].strip().upper()
    if answer not in LETTERS:
        raise QuestionFileError(f"{where}: answer {cells[columns['answer']]!r} is not one of {', '.join(LETTERS)}")
    return text, options, LETTERS.index(answer)


def read_question_set(path: Path) -> QuestionSet:
    """Read and check every row of ``path``; raise QuestionFileError naming the file and row of the first problem."""
    path = Path(path)
    rows = _read_rows(path)
    if not rows:
        raise QuestionFileError(f"{path}: empty file (expected a header and questions)")
    header = rows[0][1]
    columns = _columns(path, header)
    questions = []
    for number, (line, cells) in enumerate(rows[1:], start=1):
        text, options, answer = _question(f"{path}: row {number} (line {line})", cells, len(header), columns)
        questions.append(Question(row=number, question=text, options=options, answer=answer))
    if not questions:
        raise QuestionFileError(f"{path}: no questions below the header")
    return QuestionSet(path=path, questions=tuple(questions))
