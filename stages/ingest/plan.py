"""Turn the user's input paths (files, folders, globs) into deterministic work units."""

from __future__ import annotations

import glob
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from common.config import KilnConfig
from common.errors import KilnError, UnreadableFileError
from common.files import file_sha256, sampled_sha256
from common.runner import Plan, WorkUnit
from stages.ingest.config import IngestConfig

log = logging.getLogger("kiln.ingest")

FORMATS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
    ".jsonl.gz": "jsonl_gz", ".ndjson.gz": "jsonl_gz", ".json.gz": "jsonl_gz",
    ".jsonl.zst": "jsonl_zst", ".ndjson.zst": "jsonl_zst", ".json.zst": "jsonl_zst", ".jsonl.zstd": "jsonl_zst",
    ".parquet": "parquet",
    ".txt": "txt",
}
SCAN_BLOCK = 16 << 20


@dataclass(frozen=True)
class InputFile:
    path: Path
    name: str  # stable display name: relative to the folder it was found in
    format: str


def detect_format(path: Path) -> str | None:
    """The input format implied by a file name, or None when Kiln cannot read it."""
    name = path.name.lower()
    for suffix in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(suffix):
            return FORMATS[suffix]
    return None


def default_source(file: InputFile) -> str:
    """Source name for records that carry none: the file name without format suffixes, or the txt folder."""
    if file.format == "txt":
        return file.path.parent.name
    name = file.path.name
    for suffix in sorted(FORMATS, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def folder_files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (hidden file names left out), sorted, following symlinked folders once each:
    a link back to a folder already walked is not walked again."""
    found: list[Path] = []
    seen: set[Path] = set()
    for root, dirs, names in os.walk(folder, followlinks=True):
        real = Path(root).resolve()
        if real in seen:
            dirs.clear()
            continue
        seen.add(real)
        dirs.sort()
        found += [Path(root) / n for n in names if not n.startswith(".") and (Path(root) / n).is_file()]
    return sorted(found)


def resolve_inputs(specs: list[str]) -> tuple[list[InputFile], list[str]]:
    """Expand files, folders and globs into readable input files (sorted) and ignored file names."""
    if not specs:
        raise KilnError("ingest has no input: pass --input (a file, folder or glob) or set ingest.input")
    files: dict[Path, InputFile] = {}
    ignored: list[str] = []
    for spec in specs:
        matches = sorted(glob.glob(spec, recursive=True)) if glob.has_magic(spec) else [spec]
        if not matches or not Path(matches[0]).exists():
            raise KilnError(f"input {spec!r} matches no file or folder")
        for match in map(Path, matches):
            if match.is_dir():
                for path in folder_files(match):
                    fmt = detect_format(path)
                    rel = path.relative_to(match).as_posix()
                    if fmt is None:
                        ignored.append(f"{match.name}/{rel}")
                    else:
                        files.setdefault(path.resolve(), InputFile(path.resolve(), f"{match.name}/{rel}", fmt))
            else:
                fmt = detect_format(match)
                if fmt is None:
                    raise KilnError(f"{match}: unknown input format (expected one of {sorted(FORMATS)})")
                files.setdefault(match.resolve(), InputFile(match.resolve(), match.name, fmt))
    if not files:
        unknown = f" ({len(ignored)} file(s) of unknown formats, e.g. {ignored[0]})" if ignored else ""
        raise KilnError(f"ingest: {', '.join(specs)} holds no input file of a known format "
                        f"({', '.join(sorted(FORMATS))}){unknown}")
    return sorted(files.values(), key=lambda f: f.name), ignored


def _jsonl_ranges(path: Path, size: int, target: int) -> list[tuple[int, int, int]]:
    """Split a plain JSONL file into (start, end, first_line) ranges of about ``target`` bytes at newlines."""
    ranges: list[tuple[int, int, int]] = []
    start, line = 0, 1
    with open(path, "rb") as handle:
        while start < size or not ranges:
            handle.seek(start + target)
            handle.readline()
            end = min(handle.tell(), size)
            ranges.append((start, end, line))
            handle.seek(start)
            remaining = end - start
            while remaining:
                block = handle.read(min(SCAN_BLOCK, remaining))
                line += block.count(b"\n")
                remaining -= len(block)
            start = end
    return ranges


def _parquet_groups(file: InputFile, target: int) -> list[tuple[list[int], int]]:
    try:
        metadata = pq.ParquetFile(file.path).metadata
    except (OSError, pa.ArrowException) as err:
        raise UnreadableFileError(f"{file.name}: unreadable Parquet file ({err})") from None
    groups: list[tuple[list[int], int]] = []
    current: list[int] = []
    current_bytes, first_row, row = 0, 0, 0
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        if current and current_bytes + group.total_byte_size > target:
            groups.append((current, first_row))
            current, current_bytes, first_row = [], 0, row
        current.append(i)
        current_bytes += group.total_byte_size
        row += group.num_rows
    if current or not groups:
        groups.append((current, first_row))
    return groups


def _txt_groups(files: list[InputFile], target: int) -> list[dict]:
    by_folder: dict[Path, list[InputFile]] = {}
    for file in files:
        by_folder.setdefault(file.path.parent, []).append(file)
    specs = []
    for folder, members in sorted(by_folder.items(), key=lambda kv: kv[1][0].name):
        source = default_source(members[0])
        batch: list[str] = []
        size = 0
        for file in members:
            file_size = file.path.stat().st_size
            if batch and size + file_size > target:
                specs.append({"format": "txt", "path": str(folder), "name": source, "source": source, "files": batch})
                batch, size = [], 0
            batch.append(file.path.name)
            size += file_size
        specs.append({"format": "txt", "path": str(folder), "name": source, "source": source, "files": batch})
    return specs


def plan_units(files: list[InputFile], cfg: IngestConfig) -> list[dict]:
    """Unit specs for the input files; an unreadable file becomes an error, or a skip unit."""
    specs: list[dict] = []
    for file in files:
        base = {"format": file.format, "path": str(file.path), "name": file.name, "source": default_source(file)}
        if file.format == "txt":
            continue
        if file.format == "jsonl":
            size = file.path.stat().st_size
            for start, end, first_line in _jsonl_ranges(file.path, size, cfg.shard_max_bytes):
                specs.append(base | {"start": start, "end": end, "first_line": first_line})
        elif file.format == "parquet":
            try:
                groups = _parquet_groups(file, cfg.shard_max_bytes)
            except UnreadableFileError as err:
                if not cfg.skip_bad_files:
                    raise
                specs.append(base | {"format": "unreadable", "error": str(err)})
                continue
            for row_groups, first_row in groups:
                specs.append(base | {"row_groups": row_groups, "first_row": first_row})
        else:
            specs.append(base)
    specs.extend(_txt_groups([f for f in files if f.format == "txt"], cfg.shard_max_bytes))
    return specs


def describe_input(path: Path, name: str, file_format: str, fingerprint: str) -> dict:
    """What the plan (and so the run's fingerprint) records of one input file: name, format, size and
    a content hash (sampled blocks, or the whole file's sha256). Never the modification time: a copied
    corpus is the same input."""
    digest = file_sha256(path) if fingerprint == "sha256" else sampled_sha256(path)
    return {"name": name, "format": file_format, "bytes": path.stat().st_size, fingerprint: digest}


def describe_inputs(files: list[InputFile], fingerprint: str) -> list[dict]:
    """``describe_input`` of each JSONL, Parquet or compressed file; the text files of a folder as one entry (the
    folder, how many files, their bytes, and one sha256 over each file's name, size and hash), so that a folder
    of millions of documents adds one line to the plan, not millions."""
    described: list[dict] = []
    folders: dict[Path, tuple[dict, hashlib._Hash]] = {}
    for file in files:
        one = describe_input(file.path, file.name, file.format, fingerprint)
        if file.format != "txt":
            described.append(one)
            continue
        if file.path.parent not in folders:
            folders[file.path.parent] = ({"name": str(Path(file.name).parent), "format": "txt", "files": 0,
                                          "bytes": 0}, hashlib.sha256())
        folder, digest = folders[file.path.parent]
        folder["files"] += 1
        folder["bytes"] += one["bytes"]
        digest.update(f"{file.path.name}\t{one['bytes']}\t{one[fingerprint]}\n".encode())
    return described + [folder | {fingerprint: digest.hexdigest()} for folder, digest in folders.values()]


def plan(cfg: KilnConfig, input_dir: Path | None) -> Plan:
    """The ingest plan: one unit per byte range / row-group range / compressed file / txt batch."""
    files, ignored = resolve_inputs(cfg.ingest.input)
    if ignored:
        shown = ", ".join(ignored[:5]) + (" …" if len(ignored) > 5 else "")
        log.warning("ignoring %d file(s) of unknown format in the input folders: %s", len(ignored), shown)
    specs = plan_units(files, cfg.ingest)
    units = [WorkUnit(index=i, spec=spec) for i, spec in enumerate(specs)]
    return Plan(units=units, input={"files": describe_inputs(files, cfg.ingest.input_fingerprint), "ignored": ignored})
