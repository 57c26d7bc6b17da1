"""Atomic writes: the new content appears whole under the final name, or nothing changes and no temporary is
left."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.files import atomic_write_bytes, atomic_write_json, atomic_writer


def test_a_streamed_write_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "out.bin"
    atomic_write_bytes(path, b"old")
    with atomic_writer(path) as handle:
        handle.write(b"new ")
        handle.write(b"content")
    assert path.read_bytes() == b"new content"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.bin"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    atomic_write_json(path, {"a": 1})
    with pytest.raises(RuntimeError), atomic_writer(path) as handle:
        handle.write(b"half")
        raise RuntimeError("killed mid-write")
    assert path.read_text(encoding="utf-8") == '{\n  "a": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
