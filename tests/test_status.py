"""kiln status: missing, partial and done stages in one table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common.manifest import Accounting, Manifest, write_manifest
from common.shards import ShardInfo
from kiln.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_missing_partial_and_done(tmp_path: Path, capsys):
    info = ShardInfo(path="part-00000.arrow", rows=7, bytes=2048, sha256="0" * 64)
    write_manifest(tmp_path / "ingest", Manifest(
        stage="ingest", code_version="v", fingerprint="f", config={}, input={}, shards=[info], excluded={},
        accounting=Accounting(10, 7, {"bad_json": 3})))
    (tmp_path / "ingest" / "_stats.json").write_text(json.dumps({"wall_seconds": 2.0}))
    work = tmp_path / "clean" / "_work"
    work.mkdir(parents=True)
    (work / "_state.json").write_text(json.dumps({"fingerprint": "x", "units": 4}))
    (work / "unit-00000.json").write_text(json.dumps(
        {"accounting": {"in": 5, "out": 4, "dropped": {"lang": 1}}, "shard": {"bytes": 512}}))

    assert main(["status", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[2:7]}
    assert rows["ingest"][:7] == ["ingest", "done", "1/1", "10", "7", "3", "2.0"]
    assert rows["clean"][:6] == ["clean", "partial", "1/4", "5", "4", "1"]
    assert rows["dedup"] == ["dedup", "missing"]
    assert "ingest dropped: bad_json=3" in lines
    assert "clean dropped: lang=1" in lines


def test_a_missing_run_is_a_clear_error(tmp_path: Path, capsys):
    assert main(["status", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_file_in_place_of_the_data_folder_is_a_clear_error(tmp_path: Path, capsys):
    (tmp_path / "data").write_text("not a folder")
    assert main(["status", str(tmp_path / "data")]) == 2
    assert "is a file, not a data folder" in capsys.readouterr().err


def test_status_piped_into_a_reader_that_stops_early_ends_quietly(tmp_path: Path):
    for stage in ("ingest", "clean"):
        write_manifest(tmp_path / stage, Manifest(
            stage=stage, code_version="v", fingerprint="f", config={}, input={}, excluded={},
            shards=[ShardInfo(path="part-00000.arrow", rows=7, bytes=2048, sha256="0" * 64)],
            accounting=Accounting(10, 7, {"bad_json": 3})))
    shell = f"{sys.executable} -m kiln status {tmp_path} | head -n 1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, cwd=REPO)
    assert result.stdout.count("\n") == 1
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr


def _mix_status(tmp_path: Path, capsys, accuracy: float, held_out: int, origin: str = "corpus") -> str:
    write_manifest(tmp_path / "mix", Manifest(
        stage="mix", code_version="v", fingerprint="f", config={}, input={}, excluded={},
        shards=[ShardInfo(path="part-00000.arrow", rows=7, bytes=2048, sha256="0" * 64)],
        accounting=Accounting(10, 7, {"unknown_category": 3})))
    (tmp_path / "mix" / "mix_summary.json").write_text(json.dumps({"classifier": {
        "held_out_accuracy": accuracy, "held_out": held_out, "threshold": 0.5, "origin": origin,
        "labelled": {"news": 1200, "unknown": 3, "academic": 4000}}}))
    assert main(["status", str(tmp_path)]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_mix_with_the_classifier_shows_its_accuracy_and_labels(tmp_path: Path, capsys):
    assert ("mix classifier: held-out accuracy 0.963 on 82 documents; labelled academic=4,000, news=1,200, "
            "unknown=3 (unknown: below the threshold 0.5)") in _mix_status(tmp_path, capsys, 0.9634, 82)


def test_kilns_default_model_is_named_as_such(tmp_path: Path, capsys):
    assert ("mix classifier (Kiln's default model, held out: other packages): held-out accuracy 0.520 on 713 "
            "documents") in _mix_status(tmp_path, capsys, 0.52, 713, origin="default")


def test_a_classifier_with_nothing_held_out_says_so_instead_of_an_accuracy(tmp_path: Path, capsys):
    out = _mix_status(tmp_path, capsys, 0.0, 0)
    assert "mix classifier: held-out accuracy n/a (no labelled documents held out); labelled" in out
    assert "0.000" not in out


def test_the_lines_and_personal_data_clean_removed_are_shown_per_kind(tmp_path: Path, capsys):
    write_manifest(tmp_path / "clean", Manifest(
        stage="clean", code_version="v", fingerprint="f", config={}, input={}, excluded={},
        shards=[ShardInfo(path="part-00000.arrow", rows=7, bytes=2048, sha256="0" * 64)],
        accounting=Accounting(7, 7, {})))
    (tmp_path / "clean" / "_stats.json").write_text(json.dumps({"wall_seconds": 1.0, "details": {
        "lines_removed": {"ad": {"documents": 3, "lines": 12, "chars": 480}},
        "pii": {"documents": 4, "kinds": {"email": {"spans": 3, "documents": 3}, "phone": {"spans": 0, "documents": 0},
                                          "ip_address": {"spans": 2, "documents": 1}}}}}))
    assert main(["status", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "clean removed lines: ad=12 (480 characters, 3 documents) (each in clean/_removed_lines/)" in out
    assert ("clean personal data (replace): email=3 in 3 documents, ip_address=2 in 1 documents; 4 documents touched "
            "(where each was: clean/_pii/)") in out
