"""The training run through its real CLI: outputs, resume after SIGKILL and SIGTERM, fallback, data parallel."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
from safetensors.numpy import load_file

from common.errors import ConfigError
from common.faults import FAULT_ENV
from stages.train.checkpoint import checkpoint_dir
from stages.train.config import load_trainer_config
from tests.token_files import learnable_stream, write_token_folder

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
VOCAB = 96
SEQ_LEN = 32
CONFIG = """
model: {d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32}
optim: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_ratio: 0.1}
train: {steps: STEPS, global_batch: 4, eval_every: 4, eval_batches: 2, checkpoint_every: 2, log_every: 4,
        threads: 1}
"""


def write_splits(folder: Path, seed: int = 0) -> Path:
    """train.bin and validation.bin (random tokens with a learnable bigram pattern) and their meta.json."""
    rng = np.random.default_rng(seed)
    splits = {name: learnable_stream(windows * SEQ_LEN + 1, VOCAB, rng) for name, windows in (("train", 40), ("validation", 8))}
    return write_token_folder(folder, splits, VOCAB, SEQ_LEN)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_splits(tmp_path_factory.mktemp("tokens"))


def write_config(folder: Path, steps: int) -> Path:
    path = folder / "train.yaml"
    path.write_text(CONFIG.replace("STEPS", str(steps)))
    return path


def train_command(tokens: Path, run_dir: Path, config: Path, *extra: str) -> list[str]:
    return [PYTHON, "-m", "stages.train", "--tokens", str(tokens), "--config", str(config), "--run-dir", str(run_dir),
            *extra]


def run(command: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def weights(run_dir: Path, name: str = "latest") -> dict[str, np.ndarray]:
    return load_file(str(run_dir / "checkpoints" / name / "model.safetensors"))


def state(run_dir: Path, name: str = "latest") -> dict:
    """The trainer state of checkpoint ``name`` as a resume reads it: ``name/``, or ``name.old/`` when a kill
    landed between the two renames that swap a new checkpoint in."""
    directory = checkpoint_dir(run_dir / "checkpoints", name)
    assert directory is not None, f"no checkpoint {name} under {run_dir / 'checkpoints'}"
    return json.loads((directory / "trainer_state.json").read_text())


def metric_lines(run_dir: Path, name: str = "metrics.jsonl") -> list[dict]:
    """The complete lines of a metrics file (a running trainer may be halfway through writing the last one)."""
    path = run_dir / name
    return [json.loads(line) for line in path.read_text().split("\n")[:-1]] if path.exists() else []


def assert_bit_equal(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        assert actual[key].tobytes() == value.tobytes(), key


def kill_after(command: list[str], run_dir: Path, min_steps: int, sig: int) -> tuple[int, str]:
    """Start ``command``, send ``sig`` to it and every process it started once ``min_steps`` are logged;
    return its exit status and output."""
    output = run_dir.parent / "interrupted-output.txt"
    with output.open("w") as sink:
        process = subprocess.Popen(command, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 180
    while len(metric_lines(run_dir)) < min_steps:
        assert process.poll() is None, output.read_text()
        assert time.monotonic() < deadline, "the run did not reach the step to interrupt"
        time.sleep(0.005)
    tree = [process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))]
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    process.wait(timeout=120)
    psutil.wait_procs([p for p in psutil.process_iter() if p.pid in tree[1:]], timeout=60)
    return process.returncode, output.read_text()


@pytest.fixture(scope="module")
def uninterrupted(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("uninterrupted")
    result = run(train_command(data, folder / "run", write_config(folder, 40)))
    assert result.returncode == 0, result.stderr
    (folder / "stdout.txt").write_text(result.stdout)
    return folder / "run"


def test_a_run_writes_checkpoints_metrics_and_a_summary(uninterrupted: Path) -> None:
    stdout = (uninterrupted.parent / "stdout.txt").read_text()
    assert "done: steps 0..40 of 40" in stdout and "best val loss" in stdout
    steps = metric_lines(uninterrupted)
    assert [m["step"] for m in steps] == list(range(1, 41))
    assert steps[-1]["loss"] < steps[0]["loss"] - 0.5
    assert all(0 <= m["data_wait_fraction"] < 1 and m["tokens_per_s"] > 0 and m["mfu"] > 0 for m in steps)
    evals = metric_lines(uninterrupted, "eval.jsonl")
    assert [e["step"] for e in evals] == list(range(4, 41, 4))
    assert all(abs(e["val_perplexity"] - np.exp(e["val_loss"])) < 1e-6 * e["val_perplexity"] for e in evals)
    assert state(uninterrupted)["step"] == 40
    best = state(uninterrupted, "best")
    assert best["best_val_loss"] == min(e["val_loss"] for e in evals)
    assert best["step"] == min(evals, key=lambda e: e["val_loss"])["step"]
    assert any((uninterrupted / "tensorboard").iterdir())
    run_info = json.loads((uninterrupted / "run.json").read_text())
    assert run_info["seq_len"] == SEQ_LEN and run_info["global_batch"] == 4 and run_info["parameters"] > 0


def _corrupt(run_dir: Path, name: str) -> None:
    model = run_dir / "checkpoints" / name / "model.safetensors"
    blob = bytearray(model.read_bytes())
    blob[-5] ^= 0xFF
    model.write_bytes(bytes(blob))


def _checkpoint_files(run_dir: Path) -> dict[str, dict[str, bytes]]:
    return {name: {p.name: p.read_bytes() for p in (run_dir / "checkpoints" / name).iterdir()}
            for name in ("latest", "best")}


def test_sigterm_saves_latest_and_a_damaged_checkpoint_falls_back_to_best_or_is_a_clear_error(
        data: Path, uninterrupted: Path, tmp_path: Path) -> None:
    """One run stopped by SIGTERM, resumed three ways: as saved, with `latest` damaged (falls back to `best`),
    and with both damaged (refused, nothing overwritten)."""
    run_dir, fallback, refused = tmp_path / "run", tmp_path / "latest-damaged", tmp_path / "both-damaged"
    config = write_config(tmp_path, 40)
    command = train_command(data, run_dir, config)
    status, output = kill_after(command, run_dir, 6, signal.SIGTERM)
    assert status == 143, output
    stopped_at = state(run_dir)["step"]
    assert f"saved {run_dir / 'checkpoints' / 'latest'} at step {stopped_at}" in output
    assert stopped_at == len(metric_lines(run_dir)) < 40
    best_step = state(run_dir, "best")["step"]
    assert best_step < stopped_at
    for copy in (fallback, refused):
        shutil.copytree(run_dir, copy, symlinks=True)

    result = run(command)
    assert result.returncode == 0, result.stderr
    assert f"resuming from step {stopped_at} of 40" in result.stdout
    assert_bit_equal(weights(run_dir), weights(uninterrupted))

    _corrupt(fallback, "latest")
    result = run(train_command(data, fallback, config))
    assert result.returncode == 0, result.stderr
    assert "WARNING: checkpoint 'latest' is unusable" in result.stdout and "sha256 does not match" in result.stdout
    assert f"resuming from step {best_step} of 40" in result.stdout
    assert_bit_equal(weights(fallback), weights(uninterrupted))

    _corrupt(refused, "latest")
    _corrupt(refused, "best")
    before = _checkpoint_files(refused)
    result = run(train_command(data, refused, config))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "latest" in result.stderr and "best" in result.stderr and "sha256 does not match" in result.stderr
    assert _checkpoint_files(refused) == before


def test_a_checkpoint_from_another_configuration_is_refused(data: Path, uninterrupted: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    os.symlink(uninterrupted / "checkpoints" / "latest", run_dir / "checkpoints" / "latest")
    config = write_config(tmp_path, 40)
    result = run(train_command(data, run_dir, config, "--set", "optim.lr=0.01"))
    assert result.returncode == 2
    assert "different model, optimizer" in result.stderr and "--restart" in result.stderr
    result = run(train_command(data, run_dir, config, "--set", "model.n_layers=1"))
    assert result.returncode == 2 and "keys do not match the target" in result.stderr


def test_bad_configuration_names_the_key(data: Path, tmp_path: Path) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text("model: {d_model: 30, n_heads: 4}\n")
    result = run(train_command(data, tmp_path / "run", config))
    assert result.returncode == 2
    assert f"{config}: model.n_heads: must divide model.d_model=30, got 4" in result.stderr
    result = run(train_command(data, tmp_path / "run", write_config(tmp_path, 4), "--set", "train.stepz=3"))
    assert result.returncode == 2 and "--set train.stepz=3: train.stepz: unknown key" in result.stderr
    result = run(train_command(data, tmp_path / "run", write_config(tmp_path, 4), "--set", "model.compute_dtype=bfloat16"))
    assert result.returncode == 2 and "runs on Ascend only" in result.stderr


def _copy_tokens(data: Path, folder: Path) -> Path:
    folder.mkdir()
    for path in data.parent.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    return folder / "train.bin"


def test_token_ids_beyond_the_vocabulary_are_refused_before_training(data: Path, tmp_path: Path) -> None:
    tokens = _copy_tokens(data, tmp_path / "tokens")
    meta = json.loads((tokens.parent / "meta.json").read_text())
    (tokens.parent / "meta.json").write_text(json.dumps(meta | {"vocab_size": 50}))
    result = run(train_command(tokens, tmp_path / "run", write_config(tmp_path, 4)))
    assert result.returncode == 2, result.stderr
    assert f"{tokens}: token " in result.stderr and "not below the vocab_size 50" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run" / "checkpoints").exists()


def test_flipped_bytes_in_the_tokens_are_refused_and_sampled_mode_is_cheaper(data: Path, tmp_path: Path) -> None:
    tokens = _copy_tokens(data, tmp_path / "tokens")
    healthy = run(train_command(tokens, tmp_path / "ok", write_config(tmp_path, 1)))
    assert healthy.returncode == 0 and f"{tokens}: " in healthy.stdout and "every byte hashed" in healthy.stdout
    blob = bytearray(tokens.read_bytes())
    blob[2 * (len(blob) // 4)] ^= 0x01  # the low byte of one id: it changes by one, still below the vocabulary
    tokens.write_bytes(bytes(blob))
    result = run(train_command(tokens, tmp_path / "run", write_config(tmp_path, 4)))
    assert result.returncode == 2 and f"{tokens}: its sha256 is not the one meta.json records" in result.stderr
    assert "Traceback" not in result.stderr
    # the whole file is smaller than the 16 sampled blocks, so the sampled check sees the flip too
    sampled = run(train_command(tokens, tmp_path / "run", write_config(tmp_path, 4), "--set", "train.verify_tokens=sampled"))
    assert sampled.returncode == 2 and "its sampled_sha256 is not the one meta.json records" in sampled.stderr


def test_config_layers_and_fingerprint(tmp_path: Path) -> None:
    config = write_config(tmp_path, 40)
    loaded = load_trainer_config(config, ["train.eval_every=10", "model.mlp=gelu"])
    assert loaded.train.steps == 40 and loaded.train.eval_every == 10 and loaded.model.mlp == "gelu"
    base = load_trainer_config(config)
    assert load_trainer_config(config, ["train.eval_every=1"]).fingerprint() == base.fingerprint()
    for override in ("train.seed=1", "optim.lr=0.1", "model.n_layers=3", "train.global_batch=8", "train.steps=41",
                     "train.seq_len=16"):
        assert load_trainer_config(config, [override]).fingerprint() != base.fingerprint(), override
    with pytest.raises(ConfigError, match="--set modle.d_model=3: modle: unknown key"):
        load_trainer_config(config, ["modle.d_model=3"])
    with pytest.raises(ConfigError, match="expected KEY=VALUE, e.g. --set train.steps=100"):
        load_trainer_config(config, ["steps"])


# -- data parallel under msrun -------------------------------------------------------------------------------------

def launch_command(tokens: Path, run_dir: Path, config: Path, *extra: str) -> list[str]:
    return [PYTHON, "-m", "stages.train.launch", "--nproc", "2", "--",
            *train_command(tokens, run_dir, config, *extra)[3:]]


def rank_digests(run_dir: Path) -> dict[str, str]:
    digests = {}
    for log in (run_dir / "msrun_logs").glob("worker_*.log"):
        digests.update(re.findall(r"rank (\d+): parameters sha256 ([0-9a-f]{64})", log.read_text()))
    return digests


@pytest.fixture(scope="module")
def data_parallel(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dp")
    result = run(launch_command(data, folder / "run", write_config(folder, 6)), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder / "run"


def test_two_process_gradient_norm_equals_the_full_batch_run(data: Path, data_parallel: Path, tmp_path: Path) -> None:
    single = tmp_path / "single"
    result = run(train_command(data, single, write_config(tmp_path, 6)))
    assert result.returncode == 0, result.stderr
    dp_steps, single_steps = metric_lines(data_parallel), metric_lines(single)
    assert len(dp_steps) == len(single_steps) == 6
    for dp, one in zip(dp_steps, single_steps, strict=True):
        assert abs(dp["grad_norm"] - one["grad_norm"]) <= 1e-5 * max(1.0, one["grad_norm"]), (dp, one)
        assert abs(dp["loss"] - one["loss"]) <= 1e-5 * one["loss"]
    for key, value in weights(single).items():
        np.testing.assert_allclose(weights(data_parallel)[key], value, rtol=0, atol=1e-5)


def test_two_process_ranks_hold_identical_parameters(data_parallel: Path) -> None:
    digests = rank_digests(data_parallel)
    assert sorted(digests) == ["0", "1"] and digests["0"] == digests["1"]


def test_two_process_resume_after_sigkill_is_bit_exact(data: Path, data_parallel: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = launch_command(data, run_dir, write_config(tmp_path, 6), "--set", "train.checkpoint_every=1")
    kill_after(command, run_dir, 3, signal.SIGKILL)
    interrupted_at = state(run_dir)["step"]
    assert 2 <= interrupted_at < 6
    result = run(command, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_bit_equal(weights(run_dir), weights(data_parallel))


def test_launcher_builds_the_msrun_command_for_several_nodes(tmp_path: Path) -> None:
    from stages.train.launch import msrun_command, worker_env

    command = msrun_command(8, ["--data-dir", "/data"], nnodes=4, node_rank=2, master_addr="kiln-train-0.kiln",
                            master_port=8118, log_dir=tmp_path)
    assert {"--worker_num=32", "--local_worker_num=8", "--node_rank=2", "--master_addr=kiln-train-0.kiln",
            "--master_port=8118", "--join=True"} <= set(command)
    assert command[-5:] == ["python", "-m", "stages.train", "--data-dir", "/data"]
    assert worker_env()["PATH"].split(os.pathsep)[0] == str(Path(PYTHON).parent)
    result = run([PYTHON, "-m", "stages.train.launch", "--nnodes", "2", "--", "--data-dir", str(tmp_path)])
    assert result.returncode == 2 and "--master-port must be given" in result.stderr


# -- faults: SIGKILL at seeded steps and inside a checkpoint write ends bit-exact, and a rerun of the finished run
# says so; SIGTERM during a checkpoint write lets it finish and exits 143.
# KILN_FAULT_SEED=<n> replays another draw of kill steps.

FAULT_SEED = int(os.environ.get("KILN_FAULT_SEED", "20261202"))
FAULT_STEPS = 40  # the uninterrupted run, which checkpoints every 2 steps


def _run_with_fault(command: list[str], fault: str) -> subprocess.CompletedProcess:
    env = os.environ | {FAULT_ENV: fault}
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=240, env=env,
                          start_new_session=True)


def test_sigkill_at_seeded_steps_and_inside_a_checkpoint_write_ends_bit_exact(data: Path, uninterrupted: Path,
                                                                            tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = train_command(data, run_dir, write_config(tmp_path, FAULT_STEPS))
    inside = _run_with_fault(command, "train.checkpoint:2")  # after the 2nd checkpoint's files, before its rename
    assert inside.returncode == -signal.SIGKILL, inside.stderr[-2000:]
    kills = sorted(random.Random(FAULT_SEED).sample(range(len(metric_lines(run_dir)) + 2, FAULT_STEPS - 2), 4))
    for at in kills:
        status, output = kill_after(command, run_dir, at, signal.SIGKILL)
        assert status == -signal.SIGKILL, output[-2000:]
    interrupted_at = state(run_dir)["step"]
    assert 0 < interrupted_at < FAULT_STEPS
    finished = run(command)
    assert finished.returncode == 0, finished.stderr
    assert f"resuming from step {interrupted_at} of {FAULT_STEPS}" in finished.stdout
    assert "not loaded" not in finished.stdout + finished.stderr  # MindSpore's note on the optimizer's own load
    assert_bit_equal(weights(run_dir), weights(uninterrupted))
    assert_bit_equal(weights(run_dir, "best"), weights(uninterrupted, "best"))
    assert not list((run_dir / "checkpoints").glob(".*.tmp-*"))
    again = run(command)  # every step done: says so, no loss or throughput of zero steps
    assert again.returncode == 0, again.stderr
    assert "done: nothing to train" in again.stdout and f"already at step {FAULT_STEPS} of {FAULT_STEPS}" in again.stdout
    assert "nan" not in again.stdout and "tokens/s" not in again.stdout
    assert_bit_equal(weights(run_dir), weights(uninterrupted))


def test_sigterm_during_a_checkpoint_write_completes_it_and_exits_143(data: Path, uninterrupted: Path,
                                                                    tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = train_command(data, run_dir, write_config(tmp_path, FAULT_STEPS))
    stopped = _run_with_fault(command, "train.checkpoint:2:term")  # SIGTERM to itself inside the 2nd write
    assert stopped.returncode == 143, stopped.stderr[-2000:]
    assert state(run_dir)["step"] <= 4 and "SIGTERM: saved" in stopped.stdout
    assert not list((run_dir / "checkpoints").glob(".*.tmp-*"))
    finished = run(command)
    assert finished.returncode == 0, finished.stderr
    assert_bit_equal(weights(run_dir), weights(uninterrupted))
