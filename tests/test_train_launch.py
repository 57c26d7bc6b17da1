"""One launch entry for every Kubernetes pattern: launcher flags / Indexed Job, Volcano and MindCluster's AscendJob
resolve to the same world, contradictions are refused, SIGTERM reaches every local worker, a port taken before the
scheduler binds it is retried, and a real 2-process CPU run under the AscendJob environment trains with both ranks
ending equal.

Run as a script, this file is the probe that replaces the workers: ``probe DIR`` writes the worker's environment to
DIR, ``wait DIR`` also waits for SIGTERM, ``init`` joins the MindSpore cluster."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

PROBE_KEYS = ("MS_ROLE", "MS_NODE_ID", "DEVICE_ID", "RANK_ID", "MS_WORKER_NUM", "MS_SCHED_HOST", "MS_SCHED_PORT")


def _probe(argv: list[str]) -> int:
    mode = argv[0]
    if mode == "init":
        import mindspore as ms
        from mindspore.communication import get_rank, init

        ms.set_device("CPU")
        init()
        print(f"probe rank {get_rank()} joined", flush=True)
        return 0
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    env = {key: os.environ.get(key) for key in PROBE_KEYS}
    name = "scheduler" if env["MS_ROLE"] == "MS_SCHED" else f"worker-{env['MS_NODE_ID']}"
    if mode == "wait":
        def stop(signum: int, frame: object) -> None:
            (out / f"{name}.sigterm").write_text(str(os.getpid()))
            sys.exit(143)

        signal.signal(signal.SIGTERM, stop)
    (out / f"{name}.json").write_text(json.dumps(env))
    if mode == "wait":
        for _ in range(600):
            time.sleep(0.1)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_probe(sys.argv[1:]))

import contextlib  # noqa: E402
import re  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402

import psutil  # noqa: E402
import pytest  # noqa: E402

from stages.train import launch  # noqa: E402
from stages.train.launch import LaunchError, ascendjob_env, resolve_world  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PROBE = f"python {Path(__file__).resolve()}"  # msrun runs its task with the bare `python` (first on PATH)
BASE_ENV = {key: value for key, value in os.environ.items()
            if not key.startswith(("MS_", "VC_", "VK_")) and key not in ("JOB_COMPLETION_INDEX", "RANK_ID",
                                                                        "DEVICE_ID", "ASCEND_VISIBLE_DEVICES")}


def world_of(argv: list[str], env: dict[str, str]) -> launch.LaunchWorld:
    return resolve_world(launch._parser().parse_args([*argv, "--"]), env)


# -- the world -----------------------------------------------------------------------------------------------------

PATTERNS = {
    "indexed job": (["--nproc", "8", "--nnodes", "4", "--master-addr", "kiln-0.kiln", "--master-port", "8118"],
                    {"JOB_COMPLETION_INDEX": "2"}),
    "volcano": (["--nproc", "8", "--master-port", "8118"],
                {"VC_TASK_INDEX": "2", "VK_TASK_INDEX": "2", "VC_TRAINER_NUM": "4",
                 "VC_TRAINER_HOSTS": "kiln-0.kiln,kiln-trainer-1.kiln,kiln-trainer-2.kiln,kiln-trainer-3.kiln"}),
    "ascendjob": ([], {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "kiln-0.kiln", "MS_SCHED_PORT": "8118",
                       "MS_NODE_RANK": "2", "MS_LOCAL_WORKER": "8", "MS_WORKER_NUM": "32", "MS_SERVER_NUM": "0"}),
}


def test_the_three_patterns_resolve_to_the_same_world() -> None:
    worlds = {name: world_of(argv, env) for name, (argv, env) in PATTERNS.items()}
    described = {world.describe() for world in worlds.values()}
    assert described == {"world: 4 node(s) x 8 rank(s) per node = 32 ranks; this node: node rank 2 (ranks 16-23); "
                         "scheduler kiln-0.kiln:8118"}
    assert worlds["indexed job"].pattern == "Indexed Job" and worlds["volcano"].pattern == "Volcano Job"
    assert worlds["ascendjob"].pattern == "MindCluster AscendJob" and worlds["ascendjob"].role == "workers"
    assert worlds["volcano"].sources["master_addr"] == "VC_TRAINER_HOSTS"
    assert worlds["indexed job"].sources["node_rank"] == "JOB_COMPLETION_INDEX"
    assert "MS_NODE_RANK" in worlds["ascendjob"].origin()
    env = ascendjob_env(worlds["ascendjob"], {}, 3)
    assert (env["MS_NODE_ID"], env["DEVICE_ID"], env["RANK_ID"], env["MS_WORKER_NUM"]) == ("19", "3", "19", "32")
    scheduler = world_of([], {**PATTERNS["ascendjob"][1], "MS_ROLE": "MS_SCHED", "MS_NODE_RANK": "0"})
    assert scheduler.role == "scheduler" and "this pod: the scheduler" in scheduler.describe()
    assert world_of([], {}).describe() == ("world: 1 node(s) x 2 rank(s) per node = 2 ranks; this node: node rank 0 "
                                           "(ranks 0-1); scheduler 127.0.0.1:(a free port)")
    assert world_of([], {"ASCEND_VISIBLE_DEVICES": "0,1,2,3"}).nproc_per_node == 4


@pytest.mark.parametrize(("argv", "env", "message"), [
    (["--node-rank", "0", "--nnodes", "2", "--master-addr", "h", "--master-port", "1"], {"JOB_COMPLETION_INDEX": "1"},
     "node rank is 0 from --node-rank but 1 from JOB_COMPLETION_INDEX"),
    (["--nnodes", "3", "--master-port", "1"], {"VC_WORKER_HOSTS": "a,b", "VC_TASK_INDEX": "0"},
     "nnodes is 3 from --nnodes but 2 from VC_WORKER_HOSTS"),
    ([], {"VC_WORKER_HOSTS": "a,b", "VC_PS_HOSTS": "c", "VC_TASK_INDEX": "0"}, "name the training task with --volcano-task"),
    ([], {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "h", "MS_SCHED_PORT": "1", "MS_WORKER_NUM": "6",
          "MS_LOCAL_WORKER": "4"}, "MS_WORKER_NUM=6 is not a multiple of 4 workers per pod"),
    ([], {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "h", "MS_SCHED_PORT": "1", "MS_WORKER_NUM": "8"},
     "MS_LOCAL_WORKER is not set"),
    (["--master-addr", "other"], {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "h", "MS_SCHED_PORT": "1",
                                  "MS_WORKER_NUM": "8", "MS_LOCAL_WORKER": "8"},
     "master addr is 'other' from --master-addr but 'h' from MS_SCHED_HOST"),
    (["--nproc", "4"], {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "h", "MS_SCHED_PORT": "1", "MS_WORKER_NUM": "8",
                        "MS_LOCAL_WORKER": "8"}, "nproc per node is 4 from --nproc but 8 from MS_LOCAL_WORKER"),
    (["--nnodes", "2", "--master-addr", "h", "--master-port", "1", "--node-rank", "2"], {},
     "node rank 2 (from --node-rank) is outside the 2 node(s)"),
    ([], {"JOB_COMPLETION_INDEX": "1"}, "node rank 1 (from JOB_COMPLETION_INDEX) is outside the 1 node(s)"),
    (["--nnodes", "2", "--master-port", "1"], {}, "needs node 0's address: pass --master-addr"),
    (["--nnodes", "2"], {}, "--master-port must be given when --nnodes > 1"),
])
def test_contradictions_are_refused(argv: list[str], env: dict[str, str], message: str) -> None:
    with pytest.raises(LaunchError, match=re.escape(message)):
        world_of(argv, env)


def test_a_refusal_is_exit_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        launch.main(["--node-rank", "1", "--", "--data-dir", "x"], env={"JOB_COMPLETION_INDEX": "0"})
    assert exit_info.value.code == 2
    assert "contradictory settings: node rank is 1 from --node-rank but 0 from JOB_COMPLETION_INDEX" in \
        capsys.readouterr().err


# -- workers replaced by the probe ---------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_launch(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("w") as sink:
        return subprocess.Popen([PYTHON, "-m", "stages.train.launch", *argv], cwd=REPO, env={**BASE_ENV, **env},
                                stdout=sink, stderr=subprocess.STDOUT, text=True)


def single_node_patterns(port: int, out: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    logs = ["--log-dir", str(out / "logs")]
    return {
        "indexed job": (["--nproc", "2", "--nnodes", "1", "--master-port", str(port), *logs],
                        {"JOB_COMPLETION_INDEX": "0"}),
        "volcano": (["--nproc", "2", "--master-port", str(port), *logs],
                    {"VC_TASK_INDEX": "0", "VC_TRAINER_HOSTS": "127.0.0.1", "VC_TRAINER_NUM": "1"}),
        "ascendjob": (logs, {"MS_ROLE": "MS_WORKER", "MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": str(port),
                             "MS_NODE_RANK": "0", "MS_LOCAL_WORKER": "2", "MS_WORKER_NUM": "2"}),
    }


def test_probed_workers_get_the_same_placement_in_every_pattern(tmp_path: Path) -> None:
    port = free_port()
    seen = {}
    for name, (argv, env) in single_node_patterns(port, tmp_path / "x").items():
        out = tmp_path / name.replace(" ", "-")
        argv = [a if a != str(tmp_path / "x" / "logs") else str(out / "logs") for a in argv]
        process = start_launch([*argv, "--entry", f"{PROBE} probe {out}", "--"], env, tmp_path / f"{name}.log")
        assert process.wait(timeout=120) == 0, (tmp_path / f"{name}.log").read_text()
        output = (tmp_path / f"{name}.log").read_text()
        world_line = next(line for line in output.splitlines() if line.startswith("world: "))
        workers = {json.loads(p.read_text())["MS_NODE_ID"]: json.loads(p.read_text())
                   for p in out.glob("worker-*.json")}
        seen[name] = (world_line, {node: (w["DEVICE_ID"], w["MS_WORKER_NUM"], w["MS_SCHED_HOST"], w["MS_SCHED_PORT"],
                                          w["MS_ROLE"]) for node, w in workers.items()})
    assert len({line for line, _ in seen.values()}) == 1, seen
    placements = {json.dumps(placement, sort_keys=True) for _, placement in seen.values()}
    assert placements == {json.dumps({"0": ["0", "2", "127.0.0.1", str(port), "MS_WORKER"],
                                      "1": ["1", "2", "127.0.0.1", str(port), "MS_WORKER"]}, sort_keys=True)}


def wait_for(paths: list[Path], process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)


@pytest.mark.parametrize("pattern", ["indexed job", "volcano", "ascendjob"])
def test_sigterm_reaches_every_local_worker(tmp_path: Path, pattern: str) -> None:
    out = tmp_path / "probe"
    argv, env = single_node_patterns(free_port(), tmp_path)[pattern]
    log = tmp_path / "launch.log"
    process = start_launch([*argv, "--entry", f"{PROBE} wait {out}", "--"], env, log)
    wait_for([out / "worker-0.json", out / "worker-1.json"], process, log)
    process.send_signal(signal.SIGTERM)  # the launcher only: it must pass it on
    assert process.wait(timeout=120) == 143, log.read_text()
    assert (out / "worker-0.sigterm").exists() and (out / "worker-1.sigterm").exists()


def test_sigterm_reaches_the_scheduler_of_an_ascendjob(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    env = {"MS_ROLE": "MS_SCHED", "MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": str(free_port()),
           "MS_WORKER_NUM": "2", "MS_LOCAL_WORKER": "2", "MS_NODE_RANK": "0"}
    log = tmp_path / "launch.log"
    process = start_launch(["--log-dir", str(tmp_path / "logs"), "--entry", f"{PROBE} wait {out}", "--"], env, log)
    wait_for([out / "scheduler.json"], process, log)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 143 and (out / "scheduler.sigterm").exists()
    assert "this pod: the scheduler" in log.read_text()


def test_a_port_taken_before_the_scheduler_binds_it_is_retried(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    taken = busy.getsockname()[1]
    ports = iter([taken, free_port()])
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = launch.main(["--nproc", "1", "--log-dir", str(tmp_path / "logs"), "--entry", f"{PROBE} init", "--"],
                           env=BASE_ENV, pick_port=lambda: next(ports))
    finally:
        busy.close()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    output = capsys.readouterr().out
    assert code == 0, output
    assert f"port {taken} was taken before the scheduler could bind it; retrying with another port" in output
    assert "probe rank 0 joined" in (tmp_path / "logs" / "worker_0.log").read_text()


# -- a real run under the AscendJob environment --------------------------------------------------------------------

def write_splits(folder: Path, vocab: int = 96, seq_len: int = 32) -> Path:
    import numpy as np

    from tests.token_files import learnable_stream, write_token_folder

    rng = np.random.default_rng(0)
    splits = {name: learnable_stream(windows * seq_len + 1, vocab, rng) for name, windows in (("train", 40), ("validation", 8))}
    return write_token_folder(folder, splits, vocab, seq_len)


def test_a_two_process_cpu_run_under_the_ascendjob_environment(tmp_path: Path) -> None:
    tokens = write_splits(tmp_path / "tokens")
    config = tmp_path / "train.yaml"
    config.write_text("model: {d_model: 32, n_layers: 2, n_heads: 4, max_seq_len: 32}\n"
                      "optim: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_ratio: 0.1}\n"
                      "train: {steps: 6, global_batch: 4, eval_every: 3, eval_batches: 2, checkpoint_every: 3, "
                      "log_every: 2, threads: 1}\n")
    run_dir = tmp_path / "run"
    train_args = ["--", "--tokens", str(tokens), "--config", str(config), "--run-dir", str(run_dir)]
    common = {"MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": str(free_port()), "MS_WORKER_NUM": "2",
              "MS_LOCAL_WORKER": "2", "MS_SERVER_NUM": "0"}
    scheduler = start_launch(["--log-dir", str(tmp_path / "scheduler-pod"), *train_args],
                             {**common, "MS_ROLE": "MS_SCHED", "MS_NODE_RANK": "0"}, tmp_path / "scheduler-pod.log")
    worker_pod = start_launch(train_args, {**common, "MS_ROLE": "MS_WORKER", "MS_NODE_RANK": "0"},
                              tmp_path / "worker-pod.log")
    try:
        assert worker_pod.wait(timeout=400) == 0, (tmp_path / "worker-pod.log").read_text()
        assert scheduler.wait(timeout=120) == 0, (tmp_path / "scheduler-pod.log").read_text()
    finally:
        for process in (scheduler, worker_pod):
            if process.poll() is None:
                with contextlib.suppress(psutil.NoSuchProcess):
                    launch.terminate_tree(process.pid, sig=signal.SIGKILL)
    pod_log = (tmp_path / "worker-pod.log").read_text()
    assert "pattern: MindCluster AscendJob" in pod_log and "starting worker rank 1" in pod_log
    digests = {}
    for log in (run_dir / "msrun_logs").glob("worker_*.log"):
        text = log.read_text()
        assert text.splitlines()[0].startswith("device: CPU"), text[:500]
        digests.update(re.findall(r"rank (\d+): parameters sha256 ([0-9a-f]{64})", text))
    assert sorted(digests) == ["0", "1"] and digests["0"] == digests["1"]
    steps = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5, 6] and steps[-1]["loss"] < steps[0]["loss"]
    assert steps[1]["hardware"]["kind"] == "cpu"
    assert json.loads((run_dir / "checkpoints" / "latest" / "trainer_state.json").read_text())["step"] == 6
