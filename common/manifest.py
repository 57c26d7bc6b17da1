"""Stage manifests: the record of a finished stage, written last and atomically."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from common.errors import AccountingError, StageInputError
from common.files import atomic_write_bytes
from common.shards import ShardInfo

MANIFEST_NAME = "_manifest.json"
STATS_NAME = "_stats.json"
STAGE_ORDER = ("ingest", "clean", "dedup", "mix", "tokenize")


@dataclass
class Accounting:
    """Documents in = documents out + Σ dropped by reason."""

    docs_in: int = 0
    docs_out: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def add(self, other: Accounting) -> None:
        self.docs_in += other.docs_in
        self.docs_out += other.docs_out
        for reason, count in other.dropped.items():
            self.dropped[reason] = self.dropped.get(reason, 0) + count

    @property
    def balanced(self) -> bool:
        return self.docs_in == self.docs_out + sum(self.dropped.values())

    def to_dict(self) -> dict:
        return {"in": self.docs_in, "out": self.docs_out, "dropped": dict(sorted(self.dropped.items()))}

    @classmethod
    def from_dict(cls, data: dict) -> Accounting:
        return cls(data["in"], data["out"], dict(data["dropped"]))


@dataclass
class Manifest:
    """Everything a downstream reader, `kiln status` or an auditor needs about a finished stage.

    Only deterministic facts live here, so a resumed run writes a byte-identical manifest;
    timings and host facts go to ``_stats.json``.
    """

    stage: str
    code_version: str
    fingerprint: str
    config: dict
    input: dict
    shards: list[ShardInfo]
    excluded: dict[str, list[ShardInfo]]
    accounting: Accounting
    outputs: dict[str, list[ShardInfo]] = field(default_factory=dict)  # named outputs besides the main shards
    complete: bool = True

    def to_json(self) -> bytes:
        data = {
            "stage": self.stage,
            "complete": self.complete,
            "code_version": self.code_version,
            "fingerprint": self.fingerprint,
            "config": self.config,
            "input": self.input,
            "accounting": self.accounting.to_dict(),
            "shards": [s.to_dict() for s in self.shards],
            "excluded": {r: [s.to_dict() for s in infos] for r, infos in sorted(self.excluded.items())},
            "outputs": {n: [s.to_dict() for s in infos] for n, infos in sorted(self.outputs.items())},
        }
        return (json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, blob: bytes) -> Manifest:
        data = json.loads(blob)
        return cls(
            stage=data["stage"],
            code_version=data["code_version"],
            fingerprint=data["fingerprint"],
            config=data["config"],
            input=data["input"],
            shards=[ShardInfo(**s) for s in data["shards"]],
            excluded={r: [ShardInfo(**s) for s in infos] for r, infos in data["excluded"].items()},
            accounting=Accounting.from_dict(data["accounting"]),
            outputs={n: [ShardInfo(**s) for s in infos] for n, infos in data.get("outputs", {}).items()},
            complete=data["complete"],
        )


def write_manifest(stage_dir: Path, manifest: Manifest) -> None:
    """Write the manifest atomically; refuses one whose accounting does not balance."""
    if not manifest.accounting.balanced:
        acc = manifest.accounting
        raise AccountingError(
            f"{manifest.stage}: accounting does not balance: in={acc.docs_in}, out={acc.docs_out}, "
            f"dropped={acc.dropped}"
        )
    atomic_write_bytes(stage_dir / MANIFEST_NAME, manifest.to_json())


def read_manifest(stage_dir: Path) -> Manifest | None:
    """The stage's manifest, or None when the stage has not finished."""
    path = stage_dir / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        manifest = Manifest.from_json(path.read_bytes())
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
    return hashlib.sha256((stage_dir / MANIFEST_NAME).read_bytes()).hexdigest()


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
