"""Logging to the console and to the stage folder, and progress bars for long work."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from tqdm import tqdm

LOG_DIR = "_logs"
LOG_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(stage_dir: Path | None = None, name: str = "kiln", verbose: bool = False) -> logging.Logger:
    """Log to stderr and, when ``stage_dir`` is given, to ``<stage_dir>/_logs/<name>.log`` (appended across runs)."""
    root = logging.getLogger("kiln")
    root.setLevel(logging.DEBUG)
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(logging.DEBUG if verbose else logging.INFO)
    console.setFormatter(logging.Formatter("%(levelname)s %(message)s" if not verbose else LOG_FORMAT))
    root.addHandler(console)
    if stage_dir is not None:
        log_dir = stage_dir / LOG_DIR
        log_dir.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(log_dir / f"{name}.log", encoding="utf-8")
        file_handler.setLevel(logging.DEBUG)
        file_handler.setFormatter(logging.Formatter(LOG_FORMAT))
        root.addHandler(file_handler)
    root.propagate = False
    return logging.getLogger(f"kiln.{name}")


def progress(total: int, desc: str, unit: str = "unit") -> tqdm:
    """A progress bar on stderr; on a non-terminal it prints a line every 30 s instead of redrawing."""
    interactive = sys.stderr.isatty()
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5 if interactive else 30.0,
        leave=True,
    )
