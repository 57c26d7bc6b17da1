"""`kiln doctor`: on this CPU machine it exits 0 with the Ascend checks not applicable; a token file that disagrees
with its meta.json is a fail line and exit status 1; on a (faked) Ascend machine it reports CANN, the MindSpore/CANN
pair, npu-smi health and the devices. Runs in either environment: the command itself runs in the trainer's."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kiln.doctor import FAIL, NA, OK, WARN, ascend_checks, check_numpy, check_python, check_tokens
from stages.train.device import probe_ascend
from tests.token_files import write_token_folder

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "npu_smi"


def trainer_python() -> str:
    """This interpreter when it has MindSpore (the trainer's environment), else .venv-train's."""
    if importlib.util.find_spec("mindspore") is not None:
        return sys.executable
    candidate = REPO / ".venv-train" / "bin" / "python"
    if not candidate.exists():
        pytest.skip("the trainer's environment (.venv-train) is not built: make train-venv")
    return str(candidate)


def write_tokens(folder: Path, vocab: int = 96, seq_len: int = 32) -> Path:
    splits = {name: np.random.default_rng(0).integers(2, vocab, windows * seq_len + 1)
              for name, windows in (("train", 20), ("validation", 4))}
    return write_token_folder(folder, splits, vocab, seq_len)


def doctor(*args: str) -> subprocess.CompletedProcess:
    python = trainer_python()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ASCEND_", "MS_")) and key != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    return subprocess.run([python, "-m", "kiln", "doctor", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=180, env=env)


def lines_of(output: str) -> dict[str, tuple[str, str]]:
    checks = {}
    for line in output.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[0] in (OK, WARN, FAIL, NA):
            checks[parts[1]] = (parts[0], parts[2])
    return checks


def test_on_this_cpu_machine_doctor_passes_and_the_ascend_checks_do_not_apply(tmp_path: Path) -> None:
    write_tokens(tmp_path / "data" / "tokenize")
    result = doctor("--data-dir", str(tmp_path / "data"), "--config", str(REPO / "configs" / "train-cpu.yaml"),
                    "--set", "train.seq_len=32")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = lines_of(result.stdout)
    assert checks["ascend"] == (NA, "CPU-only machine: no /dev/davinci* device, no npu-smi on PATH, no CANN "
                                    "environment; the Ascend checks do not apply")
    for name in ("cann", "set_env.sh", "mindspore+cann", "npu-smi", "devices"):
        assert checks[name][0] == NA, name
    assert checks["python"][0] == OK and checks["numpy"][0] == OK and checks["msrun"][0] == OK
    assert checks["mindspore"][0] == OK and checks["mindspore"][1].startswith("2.10.")
    assert checks["tokens:train"][0] == OK and "meta.json agrees" in checks["tokens:train"][1]
    assert checks["tokens:validation"][0] == OK and checks["config"][0] == OK
    assert "0 fail" in result.stdout.splitlines()[-1]


def test_a_token_file_that_disagrees_with_its_meta_is_a_failure(tmp_path: Path) -> None:
    tokens = write_tokens(tmp_path / "data" / "tokenize")
    meta = json.loads((tokens.parent / "meta.json").read_text())
    meta["splits"]["train"]["tokens"] += 100
    (tokens.parent / "meta.json").write_text(json.dumps(meta))
    result = doctor("--data-dir", str(tmp_path / "data"), "--set", "train.seq_len=32")
    assert result.returncode == 1, result.stdout
    status, detail = lines_of(result.stdout)["tokens:train"]
    assert status == FAIL
    assert f"{tokens}: 1282 bytes, but meta.json records 741 uint16 tokens" in detail
    assert "fix: rerun `make data`" in result.stdout
    missing = doctor("--tokens", str(tmp_path / "nowhere" / "train.bin"))
    assert missing.returncode == 1 and lines_of(missing.stdout)["tokens:train"][0] == FAIL


def fake_ascend(tmp_path: Path, version: str, npus: int, *, opp: bool = True) -> tuple[dict[str, str], Path]:
    home = tmp_path / "latest"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text(f"Version={version}\n")
    dev = tmp_path / "dev"
    dev.mkdir()
    for i in range(npus):
        (dev / f"davinci{i}").touch()
    env = {"ASCEND_HOME_PATH": str(home), "ASCEND_VISIBLE_DEVICES": ",".join(map(str, range(npus)))}
    if opp:
        env["ASCEND_OPP_PATH"] = str(home / "opp")
    return env, dev


def by_name(checks: list) -> dict[str, object]:
    return {check.name: check for check in checks}


def test_an_ascend_node_with_a_degraded_card(tmp_path: Path) -> None:
    env, dev = fake_ascend(tmp_path, "9.0.1", 8)
    probe = probe_ascend(env, dev, which=lambda _: "/usr/local/bin/npu-smi", check_plugin=False,
                         mindspore_version="2.10.0")
    checks = by_name(ascend_checks(probe, lambda: (FIXTURES / "910b2c_degraded_card.txt").read_text()))
    assert checks["cann"].status == OK and "9.0" in checks["cann"].detail
    assert checks["set_env.sh"].status == OK
    assert checks["mindspore+cann"].status == OK
    npu = checks["npu-smi"]
    assert npu.status == FAIL and "driver 23.0.2.1" in npu.detail and "NPU 3 910B2C Alarm" in npu.detail
    assert "NPU 5 910B2C Warning" in npu.detail and "npu-smi info -t health" in npu.fix
    assert checks["devices"].status == OK and "davinci0,1,2,3,4,5,6,7" in checks["devices"].detail
    healthy = by_name(ascend_checks(probe, lambda: (FIXTURES / "910b3_8npu_training.txt").read_text()))
    assert healthy["npu-smi"].status == OK and "driver 24.1.rc1" in healthy["npu-smi"].detail


def test_an_ascend_node_with_the_wrong_cann(tmp_path: Path) -> None:
    env, dev = fake_ascend(tmp_path, "8.0.RC2", 0, opp=False)
    probe = probe_ascend(env, dev, which=lambda _: None, check_plugin=False, mindspore_version="2.10.0")
    checks = by_name(ascend_checks(probe, lambda: (FIXTURES / "dcmi_failure.txt").read_text()))
    assert checks["mindspore+cann"].status == FAIL
    assert "MindSpore 2.10.0 does not accept CANN 8.0 (it accepts 8.2, 8.3, 8.5, 9.0, 9.1)" in \
        checks["mindspore+cann"].detail
    assert checks["set_env.sh"].status == WARN and "set_env.sh" in checks["set_env.sh"].fix
    assert checks["npu-smi"].status == FAIL and "no NPU table" in checks["npu-smi"].detail
    assert checks["devices"].status == FAIL and "huawei.com/Ascend910" in checks["devices"].fix


def test_version_checks() -> None:
    assert check_python((3, 11, 9)).status == OK
    assert check_python((3, 12, 1)).status == FAIL
    assert check_numpy("1.26.4", True).status == OK
    assert check_numpy("2.1.0", True).status == FAIL and "numpy<2" in check_numpy("2.1.0", True).fix
    assert check_numpy("2.1.0", False).status == WARN
    missing = check_tokens([(Path("/nonexistent/train.bin"), False)], None)
    assert missing[0].status == WARN
