"""Arrow IPC shards: atomic, checksummed writing and verified reading."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from common.errors import StageInputError
from common.files import file_sha256, fsync_dir

COMPRESSION = "zstd"


class ShardChecksumError(StageInputError):
    """A shard on disk does not match the checksum its manifest or done marker recorded."""


@dataclass(frozen=True)
class ShardInfo:
    """What a manifest records about one written file."""

    path: str  # relative to the stage folder
    rows: int
    bytes: int
    sha256: str

    def to_dict(self) -> dict:
        return asdict(self)


class ShardWriter:
    """Stream record batches into ``path`` atomically.

    Batches go to a hidden temporary file; ``commit()`` fsyncs it, renames it into place and
    returns its ShardInfo. If the writer is closed without a commit (an exception, a kill),
    no file appears under the final name.
    """

    def __init__(self, path: Path, schema: pa.Schema, root: Path):
        self.path = path
        self.root = root
        self.schema = schema
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        self._sink = pa.OSFile(str(self._tmp), "wb")
        options = pa.ipc.IpcWriteOptions(compression=COMPRESSION)
        self._writer = pa.ipc.new_file(self._sink, schema, options=options)

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        if batch.num_rows:
            self._writer.write(batch)
            self.rows += batch.num_rows

    def commit(self) -> ShardInfo:
        self._writer.close()
        self._sink.close()
        with open(self._tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(self._tmp, self.path)
        fsync_dir(self.path.parent)
        return ShardInfo(
            path=self.path.relative_to(self.root).as_posix(),
            rows=self.rows,
            bytes=self.path.stat().st_size,
            sha256=file_sha256(self.path),
        )

    def abort(self) -> None:
        if not self._sink.closed:
            self._writer.close()
            self._sink.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()


def write_shard(path: Path, table: pa.Table, root: Path) -> ShardInfo:
    """Write one table as a shard atomically and return what the manifest needs."""
    with ShardWriter(path, table.schema, root) as writer:
        writer.write(table)
        return writer.commit()


def verify_shard(root: Path, info: ShardInfo) -> Path:
    """Return the shard's path after checking that its size and sha256 match ``info``."""
    path = root / info.path
    if not path.exists():
        raise ShardChecksumError(f"{path}: listed in the manifest but missing on disk")
    actual = file_sha256(path)
    if actual != info.sha256:
        raise ShardChecksumError(
            f"{path}: sha256 {actual[:12]}… does not match the manifest's {info.sha256[:12]}…; "
            "the file changed after it was written (rerun the stage that wrote it with --force)"
        )
    return path


def read_shard(root: Path, info: ShardInfo) -> pa.Table:
    """Read a whole shard after verifying its checksum."""
    path = verify_shard(root, info)
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def iter_batches(root: Path, info: ShardInfo) -> Iterator[pa.RecordBatch]:
    """Stream a shard's record batches after verifying its checksum (memory stays flat)."""
    path = verify_shard(root, info)
    with pa.memory_map(str(path)) as source:
        reader = pa.ipc.open_file(source)
        for i in range(reader.num_record_batches):
            yield reader.get_batch(i)
