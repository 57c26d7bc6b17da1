"""Device set-up: auto resolves to the CPU here and says why; ascend where it is not usable exits 2 naming what is
missing, before anything is compiled; a faked Ascend machine resolves as one; the Ascend settings reach MindSpore."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest

from common.errors import ConfigError
from stages.train.config import AscendConfig, load_trainer_config
from stages.train.device import (
    AscendProbe,
    DeviceChoice,
    DeviceUnavailable,
    davinci_devices,
    probe_ascend,
    read_cann_version,
    resolve_device,
    setup_device,
)
from stages.train.step import setup_cpu
from tests.token_files import write_token_folder

setup_cpu(1)

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CONFIG = "model: {d_model: 32, n_layers: 1, n_heads: 4, max_seq_len: 16}\ntrain: {steps: 1, global_batch: 2, threads: 1}\n"


def write_tokens(folder: Path, vocab: int = 64, seq_len: int = 16) -> Path:
    stream = np.random.default_rng(0).integers(2, vocab, 8 * seq_len + 1)
    return write_token_folder(folder, {"train": stream}, vocab, seq_len)


def fake_cann(root: Path, version: str) -> Path:
    home = root / "ascend-toolkit" / "latest"
    (home / "compiler").mkdir(parents=True)
    (home / "compiler" / "version.info").write_text(f"Version={version}\ntimestamp=20250101\n")
    return home


def fake_dev(root: Path, npus: int) -> Path:
    dev = root / "dev"
    dev.mkdir()
    for name in [f"davinci{i}" for i in range(npus)] + ["davinci_manager", "devmm_svm", "hisi_hdc"]:
        (dev / name).touch()
    return dev


def no_cann_env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin"}


def test_auto_resolves_to_cpu_here_and_says_why() -> None:
    choice = resolve_device("auto", env=no_cann_env())
    assert choice.target == "CPU" and choice.device_id is None
    line = choice.describe(threads=2)
    assert line.startswith("device: CPU, 2 operator threads (train.device_target=auto: Ascend not usable:")
    assert "no CANN environment (ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset)" in line
    assert "set_env.sh" in line and "no NPU visible" in line
    assert resolve_device("cpu").describe() == "device: CPU (train.device_target=cpu: asked for)"


def test_ascend_where_unusable_names_every_missing_piece(tmp_path: Path) -> None:
    with pytest.raises(DeviceUnavailable) as err:
        resolve_device("ascend", env=no_cann_env())
    assert "train.device_target=ascend, but the Ascend back end is not usable here" in str(err.value)
    assert "no CANN environment" in str(err.value) and "no /dev/davinci<N> device" in str(err.value)
    env = {"ASCEND_HOME_PATH": str(fake_cann(tmp_path, "7.0.RC1")), "ASCEND_OPP_PATH": "x"}
    probe = probe_ascend(env, fake_dev(tmp_path, 2), which=lambda _: None, mindspore_version="2.10.0")
    assert probe.cann_version == "7.0" and probe.devices == [0, 1] and not probe.plugin_checked
    with pytest.raises(DeviceUnavailable, match=r"CANN 7\.0 .* is not a version MindSpore 2\.10\.0 accepts "
                                                r"\(8\.2, 8\.3, 8\.5, 9\.0, 9\.1\)"):
        resolve_device("ascend", env=env, probe=probe)


def test_a_complete_ascend_machine_resolves_to_ascend(tmp_path: Path) -> None:
    home = fake_cann(tmp_path, "9.0.1")
    env = {"ASCEND_TOOLKIT_HOME": str(home), "ASCEND_OPP_PATH": f"{home}/opp", "ASCEND_VISIBLE_DEVICES": "4,5,6,7",
           "DEVICE_ID": "2"}
    dev = fake_dev(tmp_path, 4)
    broken = probe_ascend(env, dev, plugin=lambda: "libge_runner.so: cannot open shared object file",
                          mindspore_version="2.10.0")
    assert broken.plugin_checked and not broken.usable
    with pytest.raises(DeviceUnavailable, match="MindSpore cannot load its Ascend plugin: libge_runner.so"):
        resolve_device("ascend", env=env, probe=broken)
    assert resolve_device("auto", env=env, probe=broken).target == "CPU"
    probe = probe_ascend(env, dev, plugin=lambda: None, mindspore_version="2.10.0")
    choice = resolve_device("auto", env=env, probe=probe)
    assert (choice.target, choice.device_id) == ("Ascend", 2)
    assert "CANN 9.0" in choice.reason and "4 NPU(s) visible" in choice.reason
    assert "device_id 2 = physical NPU 6 from DEVICE_ID, the launcher's local rank" in choice.reason
    assert resolve_device("ascend", 0, env=env, probe=probe).device_id == 0
    with pytest.raises(DeviceUnavailable, match="device_id 4 .* only 4 NPU"):
        resolve_device("ascend", 4, env=env, probe=probe)
    scheduler = resolve_device("ascend", env={**env, "MS_ROLE": "MS_SCHED"}, probe=probe)
    assert scheduler.target == "CPU" and "scheduler" in scheduler.reason


def test_probe_pieces(tmp_path: Path) -> None:
    assert davinci_devices(fake_dev(tmp_path, 3)) == [0, 1, 2]
    home = tmp_path / "cann-8.5.0"
    home.parent.mkdir(exist_ok=True)
    (home / "x86_64-linux").mkdir(parents=True)
    (home / "x86_64-linux" / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\n"
                                                                       "version=8.5.0\n")
    assert read_cann_version(home) == "8.5"
    assert read_cann_version(tmp_path / "missing") is None
    assert not AscendProbe(None, None, False, None, (), None, [], None, None).any_ascend_sign


def test_ascend_settings_reach_mindspore(monkeypatch: pytest.MonkeyPatch) -> None:
    from stages.train import device

    calls = []
    monkeypatch.setattr(ms, "set_device", lambda *a: calls.append(("set_device", a)))
    monkeypatch.setattr(ms, "set_context", lambda **k: calls.append(("set_context", k)))
    monkeypatch.setattr(ms.runtime, "set_memory", lambda **k: calls.append(("set_memory", k)))
    monkeypatch.setattr(ms.device_context.ascend.op_precision, "precision_mode",
                        lambda mode: calls.append(("precision_mode", mode)))
    monkeypatch.setattr(device, "_setup_ascend", device._setup_ascend.__wrapped__)  # no cache across tests
    cfg = AscendConfig(max_device_memory="30GB", jit_level="O1", memory_optimize_level="O1",
                       precision_mode="must_keep_origin_dtype")
    setup_device(DeviceChoice("Ascend", 3, "test"), threads=2, ascend=cfg)
    assert calls == [("set_device", ("Ascend", 3)),
                     ("set_context", {"mode": ms.GRAPH_MODE, "jit_config": {"jit_level": "O1"}}),
                     ("set_memory", {"max_size": "30GB", "optimize_level": "O1"}),
                     ("precision_mode", "must_keep_origin_dtype")]


def test_config_keys_of_the_device() -> None:
    config = load_trainer_config(None, ["train.device_target=ascend", "train.device_id=1",
                                        "train.peak_flops_device=ascend-910b3", "ascend.max_device_memory=30GB"])
    assert (config.train.device_target, config.train.device_id, config.train.peak_flops_device) == (
        "ascend", 1, "ascend-910b3")
    assert config.ascend.max_device_memory == "30GB" and config.ascend.jit_level == "O0"
    with pytest.raises(ConfigError, match="train.device .* was renamed: the MFU peak-table row is now "
                                          "train.peak_flops_device"):
        load_trainer_config(None, ["train.device=ascend-910b2"])
    with pytest.raises(ConfigError, match="train.device_target"):
        load_trainer_config(None, ["train.device_target=gpu"])
    with pytest.raises(ConfigError, match="ascend.max_device_memory"):
        load_trainer_config(None, ["ascend.max_device_memory=58G"])


def run_trainer(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    tokens = write_tokens(tmp_path / "tokens")
    config = tmp_path / "tiny.yaml"
    config.write_text(CONFIG)
    command = [PYTHON, "-m", "stages.train", "--tokens", str(tokens), "--config", str(config), "--run-dir",
               str(tmp_path / "run"), *extra]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env)


def test_the_first_line_of_a_cpu_run_says_which_device_and_why(tmp_path: Path) -> None:
    env = {key: value for key, value in __import__("os").environ.items()
           if key not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "MS_ROLE")}
    env["PYTHONPATH"] = str(REPO)
    result = run_trainer(tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("device: CPU, 1 operator thread (train.device_target=auto: Ascend not usable: "
                            "no CANN environment"), first
    assert "done: steps 0..1 of 1" in result.stdout


def test_asking_for_ascend_here_exits_2_before_compiling(tmp_path: Path) -> None:
    env = {key: value for key, value in __import__("os").environ.items()
           if key not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "MS_ROLE")}
    env["PYTHONPATH"] = str(REPO)
    result = run_trainer(tmp_path, "--set", "train.device_target=ascend", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: train.device_target=ascend, but the Ascend back end is not usable here: "
                                    "no CANN environment (ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset)")
    assert "no NPU visible" in result.stderr and "kiln doctor" in result.stderr
    assert result.stdout == ""  # not even the device line: nothing was built, compiled or written
    assert not (tmp_path / "run").exists() and not (tmp_path / "rank_0").exists()
    home = fake_cann(tmp_path, "7.0.0")
    result = run_trainer(tmp_path, "--set", "train.device_target=ascend",
                         env={**env, "ASCEND_HOME_PATH": str(home), "ASCEND_OPP_PATH": str(home / "opp")})
    assert result.returncode == 2 and "CANN 7.0" in result.stderr and "is not a version MindSpore" in result.stderr


def test_the_evaluator_shares_the_device_setup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stages.eval.__main__ import main
    from stages.train.checkpoint import save_checkpoint
    from stages.train.config import ModelConfig, OptimConfig
    from stages.train.model import GPT
    from stages.train.optim import build_optimizer

    cfg = ModelConfig(vocab_size=64, d_model=16, n_layers=1, n_heads=2, max_seq_len=16)
    net = GPT(cfg)
    tokens = write_tokens(tmp_path / "tokens")
    save_checkpoint(tmp_path / "checkpoints", "latest", net, build_optimizer(net, OptimConfig(), 2),
                    {"step": 1, "model": cfg.model_dump(), "tokens": str(tokens)})
    argv = ["--checkpoint", str(tmp_path), "--threads", "1", "--json", "--mc", "--prompt", "--batch-size", "2"]
    assert main([*argv, "--device-target", "ascend"]) == 2
    assert "--device-target=ascend, but the Ascend back end is not usable here" in capsys.readouterr().err
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["device"] == "CPU"
    assert captured.err.startswith("device: CPU, 1 operator thread (--device-target=auto: Ascend not usable")
