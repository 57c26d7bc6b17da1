"""Evaluation sets as users hold them, read as items a training corpus must not contain.

A set is a file or a folder of files (a CMMLU or C-Eval download is a folder with one CSV per
subject). Each file is one of:

- CSV in the CMMLU or C-Eval layout (``common.questions``): an item is the question followed by
  the text of its gold answer (the options alone are too short and too common to match on);
- JSONL (``.jsonl``): an item is each record's text field;
- plain text (any other suffix): an item is each non-blank line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError
from common.files import file_sha256
from common.questions import QuestionFileError, read_question_set

REPO_DIR = Path(__file__).resolve().parent.parent
SHIPPED_EVAL_SETS = REPO_DIR / "stages" / "eval" / "samples"
"""The sample multiple-choice sets Kiln ships for evaluation (``python -m stages.eval --mc``'s default)."""
DECONTAMINATING_STAGE = "dedup"
DECONTAMINATION_REPORT = "decontamination.json"
"""The decontaminating stage's report of the evaluation sets it removed from the corpus (read by tokenize, whose
meta.json names them, and by status and report)."""
SUFFIXES = (".csv", ".jsonl", ".txt")
"""The files a folder contributes: CSV, JSONL and text files (other files in it are not read)."""


class EvalSetError(KilnError):
    """An evaluation set is missing, empty or not readable as one of the layouts."""


@dataclass(frozen=True)
class EvalItem:
    """One item of an evaluation set: where it is (file and 1-based row, record or line) and its text."""

    set_name: str
    file: str
    row: int
    question: str
    answer: str = ""

    @property
    def where(self) -> str:
        """The item's file name and row, as reports name it."""
        return f"{Path(self.file).name}:{self.row}"


@dataclass(frozen=True)
class EvalFile:
    """One file of an evaluation set, with its content hash."""

    set_name: str
    path: str
    sha256: str
    items: int


def shown_path(file: Path) -> str:
    """A file's path as reports and meta.json record it: a shipped set's relative to the repository (the same on a
    host and in an image), any other as given."""
    resolved = file.resolve()
    return str(resolved.relative_to(REPO_DIR)) if resolved.is_relative_to(SHIPPED_EVAL_SETS) else str(file)


def set_files(path: Path) -> list[Path]:
    """The files of the set at ``path``: the file itself, or the CSV, JSONL and text files under the folder."""
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise EvalSetError(f"evaluation set {path}: the folder holds no {', '.join(SUFFIXES)} file")
        return files
    raise EvalSetError(f"evaluation set {path}: no such file or folder")


def read_items(path: Path, set_name: str, text_field: str = "text") -> list[EvalItem]:
    """The items of one file of set ``set_name`` (see the module's docstring for the layouts)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            questions = read_question_set(path).questions
        except QuestionFileError as err:
            raise EvalSetError(f"evaluation set {set_name}: {err}") from None
        return [EvalItem(set_name, str(path), q.row, q.question, q.options[q.answer]) for q in questions]
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise EvalSetError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise EvalSetError(f"{path}: cannot read ({err.strerror})") from None
    if suffix == ".jsonl":
        return [EvalItem(set_name, str(path), number, _record_text(path, number, line, text_field))
                for number, line in enumerate(lines, 1) if line.strip()]
    return [EvalItem(set_name, str(path), number, line.strip()) for number, line in enumerate(lines, 1) if line.strip()]


def _record_text(path: Path, number: int, line: str, text_field: str) -> str:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise EvalSetError(f"{path}:{number}: not a JSON record ({err.msg})") from None
    text = record.get(text_field) if isinstance(record, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise EvalSetError(f"{path}:{number}: the record has no text in its {text_field!r} field "
                           "(decontaminate.text_field)")
    return text


def read_eval_sets(paths: list[Path], text_field: str = "text") -> tuple[list[EvalItem], list[EvalFile]]:
    """Every item of the sets at ``paths`` (a set is named after its file or folder), and each file read."""
    items: list[EvalItem] = []
    files: list[EvalFile] = []
    for path in paths:
        set_name = path.stem if path.is_file() else path.name
        for file in set_files(path):
            found = read_items(file, set_name, text_field)
            if not found:
                raise EvalSetError(f"evaluation set {set_name}: {file} holds no item")
            items += found
            files.append(EvalFile(set_name, shown_path(file), file_sha256(file), len(found)))
    return items, files
