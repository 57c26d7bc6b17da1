"""`python -m stages.train.launch`: one entry point that starts the trainer's workers under every Kubernetes pattern.

The same image and command work when the pod was started

(a) by hand or by a plain Indexed Job: ``--nnodes``, ``--master-addr``, ``--master-port`` and
    ``--node-rank`` (default: ``JOB_COMPLETION_INDEX``, the pod's index in an Indexed Job);
(b) by a Volcano Job with the ``env`` and ``svc`` plugins: node rank ``VC_TASK_INDEX``, the nodes and
    node 0's host from ``VC_<TASK>_HOSTS`` (``--volcano-task`` picks the task when there are several);
(c) by MindCluster's AscendJob, which injects ``MS_ROLE``, ``MS_SCHED_HOST``, ``MS_SCHED_PORT``,
    ``MS_NODE_RANK``, ``MS_LOCAL_WORKER`` and ``MS_WORKER_NUM``: the Scheduler pod runs the scheduler
    process, and each Worker pod starts its ``MS_LOCAL_WORKER`` workers itself (``MS_NODE_ID`` = node
    rank × local workers + i, ``DEVICE_ID`` = i), as msrun would.

(a) and (b) run msrun (``--join=True``; node 0 also runs the scheduler). The environment is read once
(:func:`resolve_world`), the resolved world is printed before anything starts, and settings that
contradict each other (a flag against an injected variable, a node rank outside the nodes, a worker
count that does not divide) are refused with exit status 2. SIGTERM and SIGINT are forwarded to every
local worker in all three patterns (msrun itself does not forward SIGTERM), so each rank saves and
exits cleanly. Workers start with the bare command ``python``, so this environment's ``bin/`` goes
first on PATH.

Single-node port: when ``--master-port`` is not given, a free port is taken by binding port 0 and
releasing it, which leaves a window before msrun's scheduler binds it. Rather than hold the socket
(msrun's scheduler is a separate process that must bind the port itself), the launcher watches the
scheduler's log and, if the bind failed ("Failed to create the TCP server"), stops that attempt and
retries with a fresh port (up to :data:`PORT_ATTEMPTS` times). A port given explicitly, as every
multi-node job must, is never changed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import psutil

DESCRIPTION = """Start `python -m stages.train` on this node: NPROC workers under msrun, or, under MindCluster's
AscendJob (MS_ROLE set), the scheduler or this pod's MS_LOCAL_WORKER workers.

Arguments after `--` go to every worker unchanged, e.g.
  python -m stages.train.launch --nproc 2 -- --data-dir data --config configs/train-cpu.yaml
On several nodes give every node the same --nnodes, --master-addr and --master-port; the node rank
comes from --node-rank, JOB_COMPLETION_INDEX (Indexed Job) or VC_TASK_INDEX (Volcano). Worker logs
go to --log-dir (default RUN_DIR/msrun_logs)."""

PORT_ATTEMPTS = 3
BIND_FAILED = "Failed to create the TCP server"
"""What MindSpore's scheduler logs when it cannot bind its port (checked with mindspore 2.10)."""
STOP_GRACE_S = 300
"""How long the workers get to save a checkpoint after SIGTERM before they are killed."""


class LaunchError(Exception):
    """The environment and the flags do not describe one world."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker_env(python: str = sys.executable, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for the workers: the directory of ``python`` first on PATH; MindSpore's log at errors only
    unless GLOG_v is set (its INFO lines from the collective layer would bury the training output)."""
    env = dict(os.environ if base is None else base)
    env.setdefault("GLOG_v", "3")
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    return env


def msrun_command(nproc: int, train_args: list[str], *, nnodes: int = 1, node_rank: int = 0,
                  master_addr: str = "127.0.0.1", master_port: int, log_dir: Path,
                  cluster_timeout: int = 600, entry: list[str] | None = None) -> list[str]:
    """The msrun command line for ``nproc`` workers per node over ``nnodes`` nodes."""
    msrun = shutil.which("msrun", path=worker_env()["PATH"]) or "msrun"
    return [msrun, f"--worker_num={nproc * nnodes}", f"--local_worker_num={nproc}",
            f"--master_addr={master_addr}", f"--master_port={master_port}", f"--node_rank={node_rank}",
            f"--log_dir={log_dir}", "--join=True", f"--cluster_time_out={cluster_timeout}",
            *(entry or ["python", "-m", "stages.train"]), *train_args]


# -- the world -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaunchWorld:
    """The job as this node sees it, and where each value came from."""

    pattern: str
    nnodes: int
    nproc_per_node: int
    node_rank: int
    master_addr: str
    master_port: int | None
    role: str = "msrun"  # "msrun", "scheduler" (AscendJob's Scheduler pod) or "workers" (an AscendJob Worker pod)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def world_size(self) -> int:
        return self.nnodes * self.nproc_per_node

    @property
    def first_rank(self) -> int:
        return self.node_rank * self.nproc_per_node

    def describe(self) -> str:
        """The world in one line, the same whichever pattern supplied it."""
        port = self.master_port if self.master_port is not None else "(a free port)"
        ranks = (f"ranks {self.first_rank}-{self.first_rank + self.nproc_per_node - 1}" if self.nproc_per_node > 1
                 else f"rank {self.first_rank}")
        here = ("this pod: the scheduler (it starts no worker)" if self.role == "scheduler"
                else f"this node: node rank {self.node_rank} ({ranks})")
        return (f"world: {self.nnodes} node(s) x {self.nproc_per_node} rank(s) per node = {self.world_size} ranks; "
                f"{here}; scheduler {self.master_addr}:{port}")

    def origin(self) -> str:
        where = ", ".join(f"{key} from {source}" for key, source in sorted(self.sources.items()))
        return f"pattern: {self.pattern}" + (f" ({where})" if where else "")


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise LaunchError(f"{name}={value!r} is not an integer") from None


class _Fields:
    """Values for each field of the world from several sources; two different values for one field is an error."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[object, str]] = {}

    def put(self, key: str, value: object, source: str) -> None:
        if value is None:
            return
        if key in self.values and self.values[key][0] != value:
            old, where = self.values[key]
            raise LaunchError(f"contradictory settings: {key.replace('_', ' ')} is {old!r} from {where} but "
                              f"{value!r} from {source}; remove one of them or make them agree")
        self.values.setdefault(key, (value, source))

    def get(self, key: str, default: object = None) -> object:
        return self.values[key][0] if key in self.values else default

    def source(self, key: str) -> str | None:
        return self.values[key][1] if key in self.values else None


def _volcano_hosts(env: Mapping[str, str], task: str | None) -> tuple[str, list[str]] | None:
    hosts = {key[3:-6]: value for key, value in env.items() if key.startswith("VC_") and key.endswith("_HOSTS")}
    if not hosts:
        return None
    if task is not None:
        key = task.upper().replace("-", "_")
        if key not in hosts:
            raise LaunchError(f"--volcano-task {task}: no VC_{key}_HOSTS in the environment (found "
                              f"{', '.join(f'VC_{k}_HOSTS' for k in sorted(hosts))})")
    elif len(hosts) == 1:
        key = next(iter(hosts))
    else:
        raise LaunchError(f"several Volcano tasks ({', '.join(f'VC_{k}_HOSTS' for k in sorted(hosts))}): "
                          f"name the training task with --volcano-task")
    names = [host.strip() for host in hosts[key].split(",") if host.strip()]
    if not names:
        raise LaunchError(f"VC_{key}_HOSTS is empty")
    return key, names


def resolve_world(args: argparse.Namespace, env: Mapping[str, str]) -> LaunchWorld:
    """The world from the flags in ``args`` (None when not given) and the pod's environment ``env``, read once."""
    fields = _Fields()
    patterns = []
    fields.put("nnodes", args.nnodes, "--nnodes")
    fields.put("node_rank", args.node_rank, "--node-rank")
    fields.put("master_addr", args.master_addr, "--master-addr")
    fields.put("master_port", args.master_port, "--master-port")
    fields.put("nproc_per_node", args.nproc, "--nproc")
    role = "msrun"
    if env.get("MS_ROLE") in ("MS_SCHED", "MS_WORKER") and env.get("MS_SCHED_HOST"):
        patterns.append("MindCluster AscendJob")
        role = "scheduler" if env["MS_ROLE"] == "MS_SCHED" else "workers"
        if not env.get("MS_SCHED_PORT"):
            raise LaunchError("MS_ROLE and MS_SCHED_HOST are set but MS_SCHED_PORT is not: the AscendJob operator "
                              "sets all three")
        fields.put("master_addr", env["MS_SCHED_HOST"], "MS_SCHED_HOST")
        fields.put("master_port", _int(env["MS_SCHED_PORT"], "MS_SCHED_PORT"), "MS_SCHED_PORT")
        if "MS_WORKER_NUM" not in env:
            raise LaunchError("MS_ROLE is set but MS_WORKER_NUM is not: the scheduler and the workers need the total "
                              "number of workers")
        total = _int(env["MS_WORKER_NUM"], "MS_WORKER_NUM")
        if role == "workers" and "MS_LOCAL_WORKER" not in env:
            raise LaunchError("MS_ROLE=MS_WORKER but MS_LOCAL_WORKER is not set: this pod does not know how many "
                              "workers to start")
        if "MS_LOCAL_WORKER" in env:
            local = _int(env["MS_LOCAL_WORKER"], "MS_LOCAL_WORKER")
            fields.put("nproc_per_node", local, "MS_LOCAL_WORKER")
        local = int(fields.get("nproc_per_node") or total)
        if local < 1 or total % local:
            raise LaunchError(f"MS_WORKER_NUM={total} is not a multiple of {local} workers per pod "
                              f"({fields.source('nproc_per_node') or 'MS_WORKER_NUM'}): every worker pod must start "
                              f"the same number of workers")
        fields.put("nproc_per_node", local, "MS_WORKER_NUM")
        fields.put("nnodes", total // local, "MS_WORKER_NUM / MS_LOCAL_WORKER")
        if role == "workers":
            fields.put("node_rank", _int(env.get("MS_NODE_RANK", "0"), "MS_NODE_RANK"), "MS_NODE_RANK")
    if env.get("JOB_COMPLETION_INDEX", "").strip():
        patterns.append("Indexed Job")
        fields.put("node_rank", _int(env["JOB_COMPLETION_INDEX"], "JOB_COMPLETION_INDEX"), "JOB_COMPLETION_INDEX")
    volcano = _volcano_hosts(env, args.volcano_task)
    index = env.get("VC_TASK_INDEX", env.get("VK_TASK_INDEX", "")).strip()
    if volcano or index:
        patterns.append("Volcano Job")
        if index:
            fields.put("node_rank", _int(index, "VC_TASK_INDEX"), "VC_TASK_INDEX")
        if volcano:
            task, hosts = volcano
            fields.put("nnodes", len(hosts), f"VC_{task}_HOSTS")
            fields.put("master_addr", hosts[0], f"VC_{task}_HOSTS")
            if env.get(f"VC_{task}_NUM", "").strip():
                fields.put("nnodes", _int(env[f"VC_{task}_NUM"], f"VC_{task}_NUM"), f"VC_{task}_NUM")
    nnodes = int(fields.get("nnodes", 1))
    node_rank = int(fields.get("node_rank", 0))
    nproc = int(fields.get("nproc_per_node", _default_nproc(env)))
    master_addr = str(fields.get("master_addr", "127.0.0.1"))
    master_port = fields.get("master_port")
    if nnodes < 1 or nproc < 1:
        raise LaunchError(f"need at least one node and one worker per node, got {nnodes} node(s) x {nproc}")
    if not 0 <= node_rank < nnodes:
        where = fields.source("node_rank") or "the default"
        raise LaunchError(f"node rank {node_rank} (from {where}) is outside the {nnodes} node(s) of the job "
                          f"(from {fields.source('nnodes') or 'the default'}): pass --nnodes")
    if nnodes > 1 and master_port is None:
        raise LaunchError("--master-port must be given when --nnodes > 1 (every node must use the same one)")
    if nnodes > 1 and fields.source("master_addr") is None:
        raise LaunchError("a job of several nodes needs node 0's address: pass --master-addr (e.g. the Indexed Job's "
                          "<job>-0.<service>)")
    sources = {key: source for key in ("nnodes", "node_rank", "master_addr", "master_port", "nproc_per_node")
               if (source := fields.source(key)) is not None}
    pattern = " + ".join(patterns) if patterns else ("launcher flags" if nnodes > 1 else "single node")
    return LaunchWorld(pattern=pattern, nnodes=nnodes, nproc_per_node=nproc, node_rank=node_rank,
                       master_addr=master_addr, master_port=int(master_port) if master_port is not None else None,
                       role=role, sources=sources)


def _default_nproc(env: Mapping[str, str]) -> int:
    """One worker per NPU this pod was given (ASCEND_VISIBLE_DEVICES), else 2 (a CPU data-parallel run)."""
    visible = [part for part in env.get("ASCEND_VISIBLE_DEVICES", "").split(",") if part.strip()]
    return len(visible) or 2


# -- processes -----------------------------------------------------------------------------------------------------

class _Signals:
    """Forward SIGTERM/SIGINT to every process below the given roots; remember that one arrived."""

    def __init__(self) -> None:
        self.roots: list[subprocess.Popen] = []
        self.include_roots = True  # False for msrun: its workers get the signal, msrun sees them exit
        self.received: int | None = None

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self._forward)
        signal.signal(signal.SIGINT, self._forward)

    def _forward(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        for root in self.roots:
            terminate_tree(root.pid, include_root=self.include_roots)


def terminate_tree(pid: int, *, include_root: bool = True, sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to ``pid``'s descendants (and ``pid`` itself with ``include_root``)."""
    try:
        root = psutil.Process(pid)
        tree = root.children(recursive=True) + ([root] if include_root else [])
    except psutil.NoSuchProcess:
        return
    for process in tree:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.send_signal(sig)


def _kill_tree(pid: int) -> None:
    terminate_tree(pid, sig=signal.SIGKILL)
    with contextlib.suppress(psutil.NoSuchProcess, psutil.TimeoutExpired):
        psutil.Process(pid).wait(timeout=30)


def _scheduler_bind_failed(log: Path) -> bool:
    try:
        return BIND_FAILED in log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def run_msrun(world: LaunchWorld, train_args: list[str], log_dir: Path, entry: list[str], signals: _Signals,
              pick_port: Callable[[], int] = free_port, env: Mapping[str, str] | None = None) -> int:
    """Run msrun for this node; retry a single-node job whose automatically chosen port was taken first."""
    auto_port = world.master_port is None
    attempts = PORT_ATTEMPTS if auto_port else 1
    scheduler_log = log_dir / "scheduler.log"
    for attempt in range(1, attempts + 1):
        port = pick_port() if auto_port else world.master_port
        command = msrun_command(world.nproc_per_node, train_args, nnodes=world.nnodes, node_rank=world.node_rank,
                                master_addr=world.master_addr, master_port=port, log_dir=log_dir, entry=entry)
        log_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            scheduler_log.unlink()
        print(f"launching {world.world_size} workers (logs: {log_dir}): {' '.join(command)}", flush=True)
        process = subprocess.Popen(command, env=worker_env(base=env))
        signals.roots, signals.include_roots = [process], False
        while process.poll() is None:
            if auto_port and attempt < attempts and _scheduler_bind_failed(scheduler_log):
                print(f"port {port} was taken before the scheduler could bind it; retrying with another port "
                      f"(attempt {attempt + 1} of {attempts})", flush=True)
                _kill_tree(process.pid)
                break
            time.sleep(0.2)
        else:
            if auto_port and attempt < attempts and process.returncode != 0 and _scheduler_bind_failed(scheduler_log):
                print(f"port {port} was taken before the scheduler could bind it; retrying with another port",
                      flush=True)
                continue
            return _exit_status(process.returncode, signals)
    return 1


def _exit_status(code: int, signals: _Signals) -> int:
    """143 after a forwarded SIGTERM (the workers saved and stopped), else the child's status."""
    if signals.received == signal.SIGTERM and code != 0:
        return 143
    return code


def ascendjob_env(world: LaunchWorld, env: Mapping[str, str], local_rank: int | None) -> dict[str, str]:
    """A process's environment under AscendJob: the scheduler's, or worker ``local_rank``'s (its global node id,
    device id and rank id, as msrun exports them)."""
    out = worker_env(base=env)
    out["MS_SCHED_HOST"], out["MS_SCHED_PORT"] = world.master_addr, str(world.master_port)
    out["MS_WORKER_NUM"] = str(world.world_size)
    if local_rank is None:
        out["MS_ROLE"] = "MS_SCHED"
        out["RANK_ID"] = "0"
        return out
    rank = world.first_rank + local_rank
    out.update({"MS_ROLE": "MS_WORKER", "MS_NODE_ID": str(rank), "RANK_ID": str(rank), "RANK_SIZE":
                str(world.world_size), "DEVICE_ID": str(local_rank), "LOCAL_RANK": str(local_rank)})
    return out


def run_ascendjob(world: LaunchWorld, train_args: list[str], log_dir: Path, entry: list[str], signals: _Signals,
                  env: Mapping[str, str]) -> int:
    """The Scheduler pod: run the scheduler. A Worker pod: start its workers, each logging to
    ``worker_<rank>.log``; when one fails, stop the others; return the first failure's status (0 when all end
    well)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    command = [*entry, *train_args]
    if world.role == "scheduler":
        specs = [(None, log_dir / "scheduler.log")]
    else:
        specs = [(i, log_dir / f"worker_{world.first_rank + i}.log") for i in range(world.nproc_per_node)]
    processes = []
    for local_rank, log in specs:
        what = "scheduler" if local_rank is None else f"worker rank {world.first_rank + local_rank}"
        print(f"starting {what} (log: {log}): {' '.join(command)}", flush=True)
        with log.open("w") as sink:
            processes.append(subprocess.Popen(command, env=ascendjob_env(world, env, local_rank), stdout=sink,
                                              stderr=subprocess.STDOUT))
    signals.roots = processes
    failed: int | None = None
    deadline = None
    while True:
        codes = [p.poll() for p in processes]
        if all(code is not None for code in codes):
            break
        bad = next((code for code in codes if code not in (None, 0)), None)
        if bad is not None and failed is None and signals.received is None:
            failed = bad
            print(f"a worker exited with status {bad}; stopping the others", flush=True)
            for p in processes:
                if p.poll() is None:
                    terminate_tree(p.pid)
            deadline = time.monotonic() + 60
        if signals.received is not None and deadline is None:
            deadline = time.monotonic() + STOP_GRACE_S
        if deadline is not None and time.monotonic() > deadline:
            for p in processes:
                if p.poll() is None:
                    _kill_tree(p.pid)
        time.sleep(0.2)
    codes = [p.returncode for p in processes]
    first_bad = failed if failed is not None else next((code for code in codes if code != 0), 0)
    return _exit_status(first_bad, signals)


def _run_dir(train_args: list[str]) -> Path:
    """The run directory the workers will use, read from their --run-dir / --data-dir."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--run-dir", type=Path, default=None)
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    known, _ = parser.parse_known_args(train_args)
    return known.run_dir or known.data_dir / "train"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stages.train.launch", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nproc", type=int, default=None,
                        help="workers on this node (default: one per NPU in ASCEND_VISIBLE_DEVICES, else 2)")
    parser.add_argument("--nnodes", type=int, default=None, help="nodes in the job (default 1)")
    parser.add_argument("--node-rank", type=int, default=None,
                        help="this node's index (default: JOB_COMPLETION_INDEX or VC_TASK_INDEX, else 0)")
    parser.add_argument("--master-addr", default=None, help="host of the scheduler, node 0 (default 127.0.0.1)")
    parser.add_argument("--master-port", type=int, default=None,
                        help="scheduler port (default: a free port; required with several nodes)")
    parser.add_argument("--volcano-task", default=None,
                        help="the Volcano task whose VC_<TASK>_HOSTS lists the nodes (when there are several)")
    parser.add_argument("--log-dir", type=Path, default=None, help="worker logs (default RUN_DIR/msrun_logs)")
    parser.add_argument("--entry", default="python -m stages.train", help=argparse.SUPPRESS)
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="-- then the arguments of python -m stages.train")
    return parser


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None,
         pick_port: Callable[[], int] = free_port) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    train_args = args.train_args[1:] if args.train_args[:1] == ["--"] else args.train_args
    env = dict(os.environ if env is None else env)
    try:
        world = resolve_world(args, env)
    except LaunchError as err:
        parser.error(str(err))
    print(world.describe(), flush=True)
    print(world.origin(), flush=True)
    log_dir = args.log_dir or _run_dir(train_args) / "msrun_logs"
    signals = _Signals()
    signals.install()
    entry = shlex.split(args.entry)
    if world.role == "msrun":
        return run_msrun(world, train_args, log_dir, entry, signals, pick_port, env)
    return run_ascendjob(world, train_args, log_dir, entry, signals, env)


if __name__ == "__main__":
    sys.exit(main())
