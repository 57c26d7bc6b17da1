"""What docs/training.md promises of a training run, each through the real CLI on a tiny model: the health stop, --restart,
the fingerprint and shape refusals of a resume, and SIGTERM forwarded by the data-parallel launcher."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from stages.train.checkpoint import verify_checksums
from stages.train.config import load_trainer_config
from tests.test_train_run import (
    REPO,
    VOCAB,
    launch_command,
    metric_lines,
    run,
    state,
    train_command,
    weights,
    write_config,
    write_splits,
)

STEPS = 6  # the finished run: latest at step 6, best at step 4 (CONFIG evaluates every 4 steps and at the end)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_splits(tmp_path_factory.mktemp("tokens"))


@pytest.fixture(scope="module")
def finished(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of test_train_run's tiny CONFIG; tests copy its checkpoints into their own run directory."""
    folder = tmp_path_factory.mktemp("finished")
    result = run(train_command(data, folder / "run", write_config(folder, STEPS)))
    assert result.returncode == 0, result.stderr
    return folder / "run"


def copy_checkpoints(finished: Path, run_dir: Path) -> Path:
    shutil.copytree(finished / "checkpoints", run_dir / "checkpoints")
    return run_dir


def error_line(stderr: str) -> str:
    """The one `error: ...` line the CLI prints, checked to be the only one and to come without a traceback."""
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def assert_refused_untouched(result: subprocess.CompletedProcess, run_dir: Path, finished: Path) -> str:
    """Exit 2 with one error line, and the run directory's checkpoints as they were."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert state(run_dir) == state(finished)
    assert all(weights(run_dir)[k].tobytes() == v.tobytes() for k, v in weights(finished).items())
    return error_line(result.stderr)


# -- --restart and the fingerprint --------------------------------------------------------------------------------

def test_a_checkpoint_of_another_config_is_refused_naming_restart_and_restart_starts_from_step_0(
        data: Path, finished: Path, tmp_path: Path) -> None:
    run_dir = copy_checkpoints(finished, tmp_path / "run")
    config = write_config(tmp_path, STEPS)
    command = train_command(data, run_dir, config, "--set", "optim.lr=0.01")

    refused = assert_refused_untouched(run(command), run_dir, finished)
    assert "different model, optimizer" in refused and "--restart" in refused

    result = run([*command, "--restart"])
    assert result.returncode == 0, result.stderr
    assert "resuming" not in result.stdout and f"done: steps 0..{STEPS} of {STEPS}" in result.stdout
    steps = metric_lines(run_dir)
    assert [m["step"] for m in steps] == list(range(1, STEPS + 1))
    # The initial weights and the first batch follow from the seed alone, so a run from step 0 has the first loss of
    # the finished run (a run from its checkpoint would start from its trained weights) but the new learning rate.
    assert steps[0]["loss"] == metric_lines(finished)[0]["loss"]
    assert steps[0]["lr"] == 0.01 != metric_lines(finished)[0]["lr"]
    latest = state(run_dir)
    new_fingerprint = load_trainer_config(config, ["optim.lr=0.01", "train.seq_len=32"]).with_vocab_size(VOCAB).fingerprint()
    assert latest["step"] == STEPS and latest["config_fingerprint"] == new_fingerprint
    assert latest["config_fingerprint"] != state(finished)["config_fingerprint"]
    assert weights(run_dir)["wte.embedding_table"].tobytes() != weights(finished)["wte.embedding_table"].tobytes()


@pytest.mark.parametrize("override", ["train.steps=8", "train.seq_len=16"])
def test_train_steps_and_seq_len_are_in_the_fingerprint_so_changing_either_refuses_the_resume(
        data: Path, finished: Path, tmp_path: Path, override: str) -> None:
    config = write_config(tmp_path, STEPS)
    packed = "train.seq_len=32"  # the trainer records the packed split's seq_len (meta.json) in its config
    base = load_trainer_config(config, [packed]).with_vocab_size(VOCAB)
    changed = [packed, override] if override.startswith("train.steps") else [override]
    assert load_trainer_config(config, changed).with_vocab_size(VOCAB).fingerprint() != base.fingerprint()
    assert state(finished)["config_fingerprint"] == base.fingerprint()

    run_dir = copy_checkpoints(finished, tmp_path / "run")
    refused = assert_refused_untouched(run(train_command(data, run_dir, config, "--set", override)), run_dir, finished)
    assert "different model, optimizer, step count, batch, seq_len or seed" in refused and "--restart" in refused


def test_a_resume_on_tokens_packed_with_another_seq_len_is_refused(data: Path, finished: Path, tmp_path: Path) -> None:
    repacked = tmp_path / "tokens"
    shutil.copytree(data.parent, repacked)
    meta = json.loads((repacked / "meta.json").read_text())
    assert meta["seq_len"] == 32
    (repacked / "meta.json").write_text(json.dumps({**meta, "seq_len": 16}))
    run_dir = copy_checkpoints(finished, tmp_path / "run")
    result = run(train_command(repacked / "train.bin", run_dir, write_config(tmp_path, STEPS)))
    assert result.returncode == 2 and "--restart" in result.stderr, result.stdout + result.stderr


def test_a_checkpoint_whose_shapes_differ_is_refused_naming_the_parameter_and_both_shapes(
        data: Path, finished: Path, tmp_path: Path) -> None:
    from stages.train.model import GPT

    run_dir = copy_checkpoints(finished, tmp_path / "run")
    config = write_config(tmp_path, STEPS)
    result = run(train_command(data, run_dir, config, "--set", "model.d_model=64"))
    refused = assert_refused_untouched(result, run_dir, finished)
    found = re.search(r"(latest/model\.safetensors): (\S+) has shape \(([\d, ]+)\), the target has \(([\d, ]+)\)",
                      refused)
    assert found, refused
    _, key, saved, target = found.groups()
    model = GPT(load_trainer_config(config, ["model.d_model=64"]).with_vocab_size(VOCAB).model)
    assert tuple(map(int, saved.split(","))) == weights(finished)[key].shape
    assert tuple(map(int, target.split(","))) == tuple(model.parameters_dict()[key].shape)
    assert saved != target


def test_flash_attention_requested_on_cpu_is_refused_with_a_clear_error(data: Path, tmp_path: Path) -> None:
    command = train_command(data, tmp_path / "run", write_config(tmp_path, STEPS), "--set", "model.attention=flash")
    result = subprocess.run(command, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                            text=True, timeout=240)  # cwd: a failed graph leaves rank_0/ in the working directory
    assert result.returncode == 2, result.stderr[-3000:]
    assert "model.attention" in error_line(result.stderr)


# -- the health stop ------------------------------------------------------------------------------------------------

HEALTH_STEPS = 20
DIVERGING = ["--set", "optim.lr=1.0e+30", "--set", "optim.min_lr=1.0e+30", "--set", "optim.warmup_ratio=0.0",
             "--set", "train.checkpoint_every=4", "--set", "train.eval_every=0"]


@pytest.fixture(scope="module")
def health_stop(data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    """A run whose first update (lr 1e30) blows the weights up to ~1e29: every later step's gradient norm is NaN, so
    every later update is skipped until the health checks stop the run."""
    folder = tmp_path_factory.mktemp("health")
    run_dir = folder / "run"
    result = run(train_command(data, run_dir, write_config(folder, HEALTH_STEPS), *DIVERGING))
    return result, run_dir


def test_ten_consecutive_non_finite_steps_stop_the_run_with_exit_3_and_leave_an_inspectable_run(
        data: Path, health_stop: tuple[subprocess.CompletedProcess, Path]) -> None:
    result, run_dir = health_stop
    assert result.returncode == 3, result.stdout + result.stderr
    message = error_line(result.stderr)
    assert re.fullmatch(r"error: training stopped at step \d+: 10 consecutive steps were skipped because the loss or "
                        r"gradient norm was not finite \(.*10 skipped in total\)\. .*rerun with --restart "
                        r"\(a resume keeps the optimizer settings of its checkpoint\)\.", message), message
    assert "done:" not in result.stdout
    warnings = re.findall(r"WARNING: step \d+: update skipped, .*\((\d+)/10 consecutive", result.stdout)
    assert warnings == [str(k) for k in range(1, 10)], result.stdout

    steps = metric_lines(run_dir)  # every step, the skipped ones with their non-finite grad norm as null
    assert [m["step"] for m in steps] == list(range(1, 12))
    assert [m["skipped"] for m in steps] == [False] + [True] * 10
    assert math.isfinite(steps[0]["grad_norm"]) and all(m["grad_norm"] is None for m in steps[1:])

    latest = run_dir / "checkpoints" / "latest"  # the last one due (every 4 steps) before the stop, complete
    verify_checksums(latest)
    saved = state(run_dir)
    assert saved["step"] == 8 and saved["tokens_seen"] == 8 * 4 * 32
    assert (saved["health"]["consecutive_skips"], saved["health"]["skipped_total"]) == (7, 7)

    # Rerunning resumes from it with the health state it holds: three more skips complete the ten.
    again = run(train_command(data, run_dir, write_config(run_dir.parent, HEALTH_STEPS), *DIVERGING))
    assert again.returncode == 3, again.stdout + again.stderr
    assert f"resuming from step 8 of {HEALTH_STEPS}" in again.stdout
    assert "10 consecutive steps were skipped" in error_line(again.stderr)
    assert [m["step"] for m in metric_lines(run_dir)[11:]] == [9, 10, 11]


def test_health_messages_number_steps_as_metrics_jsonl_does(
        health_stop: tuple[subprocess.CompletedProcess, Path]) -> None:
    result, run_dir = health_stop
    named = [int(n) for n in re.findall(r"WARNING: step (\d+): update skipped", result.stdout)]
    named += [int(n) for n in re.findall(r"training stopped at step (\d+):", result.stderr)]
    assert named == [m["step"] for m in metric_lines(run_dir)[:11] if m["skipped"]]


def test_the_health_stops_advice_can_be_followed(data: Path, health_stop: tuple[subprocess.CompletedProcess, Path],
                                                 tmp_path: Path) -> None:
    result, run_dir = health_stop
    assert "lower optim.lr and rerun with --restart" in error_line(result.stderr)
    resumed = tmp_path / "run"
    shutil.copytree(run_dir / "checkpoints", resumed / "checkpoints")
    lower = ["--set", "optim.lr=1.0e-3", "--set", "optim.min_lr=1.0e-4", *DIVERGING[4:]]
    again = run(train_command(data, resumed, write_config(tmp_path, HEALTH_STEPS), *lower, "--restart"))
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"done: steps 0..{HEALTH_STEPS} of {HEALTH_STEPS}" in again.stdout


# -- SIGTERM to the data-parallel launcher --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def launcher_sigterm(data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Start `python -m stages.train.launch --nproc 2`, and once 3 steps are logged send SIGTERM to the launcher
    alone; record its exit status, output and which of the processes it started are still alive soon after."""
    folder = tmp_path_factory.mktemp("launcher-sigterm")
    run_dir = folder / "run"
    output = folder / "launcher-output.txt"
    with output.open("w") as sink:
        process = subprocess.Popen(launch_command(data, run_dir, write_config(folder, 40)), cwd=REPO, stdout=sink,
                                   stderr=subprocess.STDOUT, text=True)
    tree: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240
        while len(metric_lines(run_dir)) < 3:
            assert process.poll() is None, output.read_text()
            assert time.monotonic() < deadline, "the data-parallel run did not reach step 3"
            time.sleep(0.01)
        tree = psutil.Process(process.pid).children(recursive=True)
        workers = [p for p in tree if p.cmdline()[:3] == ["python", "-m", "stages.train"]]
        os.kill(process.pid, signal.SIGTERM)
        status = process.wait(timeout=120)
        _, alive = psutil.wait_procs(tree, timeout=10)
        return {"status": status, "output": output.read_text(), "run_dir": run_dir, "workers": workers,
                "alive": alive}
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        for child in tree:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()


def test_sigterm_to_the_launcher_is_forwarded_to_every_worker_which_save_latest_and_the_run_exits_143(
        launcher_sigterm: dict) -> None:
    run_dir = launcher_sigterm["run_dir"]
    assert launcher_sigterm["status"] == 143, launcher_sigterm["output"][-3000:]
    assert len(launcher_sigterm["workers"]) == 3, launcher_sigterm["workers"]  # msrun's scheduler and two workers
    assert launcher_sigterm["alive"] == [], launcher_sigterm["alive"]
    stopped_at = state(run_dir)["step"]
    assert 3 <= stopped_at == len(metric_lines(run_dir)) < 40
    verify_checksums(run_dir / "checkpoints" / "latest")
    logs = {log.name: log.read_text() for log in (run_dir / "msrun_logs").glob("worker_*.log")}
    assert sorted(logs) == ["worker_0.log", "worker_1.log"]
    for text in logs.values():  # each rank got the signal and stopped after the same step
        assert f"stopped: stopped by SIGTERM at step {stopped_at}" in text, text[-2000:]
    assert f"SIGTERM: saved {run_dir / 'checkpoints' / 'latest'} at step {stopped_at}" in logs["worker_0.log"]

