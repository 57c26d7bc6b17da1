"""One run per DATA_DIR: a second run is refused at once, a lock left by a killed run is taken over, and a
demo run that would replace the corpus (and its truth) of an earlier run is refused before writing."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from common.lock import LOCK_NAME, data_dir_lock
from tests.conftest import REPO, child_env, cli


def _jsonl(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text("".join(json.dumps({"text": f"document number {i} " * 20}) + "\n"
                                            for i in range(50)))
    return folder


def test_a_second_run_on_the_same_data_dir_is_refused_naming_the_holder(tmp_path: Path, in_process):
    inputs, data = _jsonl(tmp_path / "raw"), tmp_path / "data"
    with data_dir_lock(data, logging.getLogger("test")):
        result = cli("-m", "stages.ingest", "--data-dir", str(data), "--set", f"ingest.input=[\"{inputs}\"]",
                     check=False)
    assert result.returncode == 2, result.stderr
    assert f"is in use by another run: pid {os.getpid()} on {socket.gethostname()}" in result.stderr
    assert "Traceback" not in result.stderr
    assert [p.name for p in (data / "ingest").iterdir()] == ["_logs"], "nothing but the refusal's log is written"
    again = in_process("-m", "stages.ingest", "--data-dir", str(data), "--set", f"ingest.input=[\"{inputs}\"]")
    assert "taking over" not in again.stderr, "a lock released cleanly leaves nothing to take over"


def test_a_lock_left_by_a_killed_run_is_taken_over_with_a_warning(tmp_path: Path, in_process):
    inputs, data = _jsonl(tmp_path / "raw"), tmp_path / "data"
    holder = ("import logging, os, signal, sys\nfrom pathlib import Path\nfrom common.lock import data_dir_lock\n"
              "with data_dir_lock(Path(sys.argv[1]), logging.getLogger('x')):\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", holder, str(data)], cwd=REPO, env=child_env())
    assert killed.returncode == -9 and json.loads((data / LOCK_NAME).read_text())["pid"] > 0
    result = in_process("-m", "stages.ingest", "--data-dir", str(data), "--set", f"ingest.input=[\"{inputs}\"]")
    assert "taking over the lock of a run that ended without releasing it: pid" in result.stderr
    assert (data / "ingest" / "_manifest.json").exists()


@pytest.mark.slow
def test_a_demo_run_with_another_size_is_refused_before_it_replaces_the_corpus(tmp_path: Path, in_process):
    data = tmp_path / "data"
    in_process("-m", "kiln", "run", "--demo", "--demo-docs", "300", "--data-dir", str(data),
               "--set", "tokenize.seq_len=256")  # 300 records: a validation split of a few hundred tokens
    truth = (data / "demo" / "truth.jsonl").read_bytes()
    refused = cli("-m", "kiln", "run", "--demo", "--demo-docs", "400", "--data-dir", str(data), check=False)
    assert refused.returncode == 2 and "holds a run of the demo corpus with 300 records" in refused.stderr
    assert json.loads((data / "demo" / "demo.json").read_text())["n_docs"] == 300
    assert (data / "demo" / "truth.jsonl").read_bytes() == truth
