"""Stage manifests: the record of a finished stage, written last and atomically."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import Field, TypeAdapter, WrapSerializer

from common.errors import AccountingError, StageInputError
from common.files import atomic_write_json, file_sha256
from common.pipeline import MANIFEST_NAME, STAGE_ORDER, input_stage_of
from common.shards import ShardInfo

STATS_NAME = "_stats.json"


T = TypeVar("T")


def _sorted_keys(value: dict, handler) -> dict:
    return dict(sorted(handler(value).items()))


# A dict field whose JSON lists its keys in sorted order (so equal records give equal bytes).
SortedKeys = WrapSerializer(_sorted_keys)


@functools.cache
def _adapter(cls: type) -> TypeAdapter:
    return TypeAdapter(cls)


def to_data(record: object) -> dict:
    """A record dataclass as JSON-ready data: fields in their declared order, named by their aliases,
    nested records as dicts, ``SortedKeys`` dicts sorted."""
    return _adapter(type(record)).dump_python(record, by_alias=True)


def from_data(cls: type[T], data: object) -> T:
    """The ``cls`` record that :func:`to_data` made ``data`` of, checked field by field (a
    ``pydantic.ValidationError``, a ValueError, when it does not fit)."""
    return _adapter(cls).validate_python(data)


@dataclass
class Accounting:
    """Documents in = documents out + Σ dropped by reason; as JSON ``{"in", "out", "dropped"}``."""

    docs_in: Annotated[int, Field(alias="in")] = 0
    docs_out: Annotated[int, Field(alias="out")] = 0
    dropped: Annotated[dict[str, int], SortedKeys] = field(default_factory=dict)

    def add(self, other: Accounting) -> None:
        self.docs_in += other.docs_in
        self.docs_out += other.docs_out
        for reason, count in other.dropped.items():
            self.dropped[reason] = self.dropped.get(reason, 0) + count

    @property
    def balanced(self) -> bool:
        return self.docs_in == self.docs_out + sum(self.dropped.values())

    def to_dict(self) -> dict:
        return to_data(self)

    @classmethod
    def from_dict(cls, data: dict) -> Accounting:
        return from_data(cls, data)


@dataclass(kw_only=True)
class Manifest:
    """Everything a downstream reader, `kiln status` or an auditor needs about a finished stage.

    Only deterministic facts live here, so a resumed run writes a byte-identical manifest;
    timings and host facts go to ``_stats.json``. The fields are in the order of the JSON file.
    """

    stage: str
    complete: bool = True
    code_version: str
    fingerprint: str
    config: dict
    input: dict
    accounting: Accounting
    shards: list[ShardInfo]
    excluded: Annotated[dict[str, list[ShardInfo]], SortedKeys]
    # named outputs besides the main shards; a name starting with "_" holds records that are not documents
    # (e.g. the lines clean removed from kept documents), which count toward no document total
    outputs: Annotated[dict[str, list[ShardInfo]], SortedKeys] = field(default_factory=dict)

    def document_files(self) -> list[ShardInfo]:
        """The Arrow files of documents out: the shards, and the named outputs of documents (a split)."""
        return [*self.shards, *(info for name, infos in self.outputs.items() if not name.startswith("_")
                                for info in infos if info.path.endswith(".arrow"))]


def write_manifest(stage_dir: Path, manifest: Manifest) -> None:
    """Write the manifest atomically; refuses one whose accounting does not balance."""
    if not manifest.accounting.balanced:
        acc = manifest.accounting
        raise AccountingError(
            f"{manifest.stage}: accounting does not balance: in={acc.docs_in}, out={acc.docs_out}, "
            f"dropped={acc.dropped}"
        )
    atomic_write_json(stage_dir / MANIFEST_NAME, to_data(manifest))


def read_manifest(stage_dir: Path) -> Manifest | None:
    """The stage's manifest, or None when the stage has not finished."""
    path = stage_dir / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        manifest = from_data(Manifest, json.loads(path.read_bytes()))
    except (ValueError, KeyError, TypeError) as err:
        raise StageInputError(f"{path}: unreadable manifest ({err}); rerun that stage with --force") from None
    return manifest if manifest.complete else None


def require_manifest(stage_dir: Path) -> Manifest:
    """The manifest of an input stage, or a clear error telling the user which stage to run."""
    manifest = read_manifest(stage_dir)
    if manifest is None:
        state = "is unfinished" if stage_dir.exists() else "does not exist"
        raise StageInputError(
            f"{stage_dir} {state}: it has no complete {MANIFEST_NAME}. "
            f"Run `python -m stages.{stage_dir.name}` first."
        )
    return manifest


def manifest_sha256(stage_dir: Path) -> str:
    """The sha256 of a stage's manifest file: the fingerprint of that stage's output."""
    return file_sha256(stage_dir / MANIFEST_NAME)


def code_version(*packages: str) -> str:
    """Kiln's version plus a short hash of the named packages' source files."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    try:
        version = metadata.version("kiln")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    return f"{version}+{digest.hexdigest()[:12]}"


def check_input_manifest(stage_dir: Path, every_checksum: bool = False) -> Manifest:
    """The manifest of an input stage after checking that it is whole and agrees with the stage before it.

    Its accounting balances; its document files (``Manifest.document_files``: the shards and the ``.arrow``
    files of named outputs not starting with "_") hold exactly ``accounting.out`` rows and are all on disk at their recorded sizes; every
    other named output (side files: summaries, token streams, the tokenizer) is on disk with its
    recorded size, and those under 64 MiB with their recorded sha256 (shards and token streams are
    checked by their readers; ``every_checksum`` checks every file's sha256 here, before any work);
    and its ``in`` equals the ``out`` of the stage it read, when that stage's folder is still there.
    A stage that reads an edited or incomplete manifest would silently lose or invent documents: this
    refuses.
    """

    manifest = require_manifest(stage_dir)
    path = stage_dir / MANIFEST_NAME

    def refuse(problem: str) -> StageInputError:
        return StageInputError(f"{path}: {problem}; the manifest or its files changed after the stage wrote them "
                               f"(rerun `python -m stages.{manifest.stage} --force`)")

    acc = manifest.accounting
    if acc.docs_in != acc.docs_out + sum(acc.dropped.values()):
        raise refuse(f"accounting does not balance: in {acc.docs_in:,} != out {acc.docs_out:,} + dropped "
                     f"{sum(acc.dropped.values()):,}")
    files = [*manifest.shards, *(info for infos in manifest.outputs.values() for info in infos)]
    documents = sum(info.rows for info in manifest.document_files())
    if documents != acc.docs_out:
        raise refuse(f"its document files hold {documents:,} rows but accounting.out is {acc.docs_out:,}")
    for info in files:
        file = stage_dir / info.path
        if not file.is_file() or file.stat().st_size != info.bytes:
            raise refuse(f"{info.path} is missing or not {info.bytes:,} bytes")
        cheap = not info.path.endswith((".arrow", ".bin")) and info.bytes < 64 << 20
        if (every_checksum or cheap) and file_sha256(file) != info.sha256:
            raise refuse(f"{info.path} does not match its recorded sha256")
    upstream = input_stage_of(manifest.stage) if manifest.stage in STAGE_ORDER else None
    before_manifest = read_manifest(stage_dir.parent / upstream) if upstream is not None else None
    if before_manifest is not None:  # a run may have deleted a finished stage's folder to save space
        before = before_manifest.accounting
        if before.docs_out != acc.docs_in:
            raise refuse(f"it read {acc.docs_in:,} documents but {upstream} wrote {before.docs_out:,}")
    return manifest
