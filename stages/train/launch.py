"""`python -m stages.train.launch`: start data-parallel training with msrun, with PATH and the port handled.

msrun starts each worker with the bare command ``python``, so this environment's ``bin/`` goes
first on PATH; the scheduler port is a free one unless given. SIGTERM and SIGINT are forwarded
to every worker (msrun itself does not forward SIGTERM), so each rank saves and exits cleanly.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import FrameType

import psutil

DESCRIPTION = """Run `python -m stages.train` as NPROC data-parallel workers under msrun.

Arguments after `--` go to every worker unchanged, e.g.
  python -m stages.train.launch --nproc 2 -- --data-dir data --config configs/train-cpu.yaml
On several machines (Kubernetes), give each node the same --nnodes, --master-addr and
--master-port and its own --node-rank. Worker logs go to --log-dir (default RUN_DIR/msrun_logs)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def worker_env(python: str = sys.executable) -> dict[str, str]:
    """The environment for msrun: the directory of ``python`` first on PATH; MindSpore's log at errors only
    unless GLOG_v is set (its INFO lines from the collective layer would bury the training output)."""
    env = dict(os.environ)
    env.setdefault("GLOG_v", "3")
    env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
    return env


def msrun_command(nproc: int, train_args: list[str], *, nnodes: int = 1, node_rank: int = 0,
                  master_addr: str = "127.0.0.1", master_port: int, log_dir: Path,
                  cluster_timeout: int = 600) -> list[str]:
    """The msrun command line for ``nproc`` workers per node over ``nnodes`` nodes."""
    msrun = shutil.which("msrun", path=worker_env()["PATH"]) or "msrun"
    return [msrun, f"--worker_num={nproc * nnodes}", f"--local_worker_num={nproc}",
            f"--master_addr={master_addr}", f"--master_port={master_port}", f"--node_rank={node_rank}",
            f"--log_dir={log_dir}", "--join=True", f"--cluster_time_out={cluster_timeout}",
            "python", "-m", "stages.train", *train_args]


def _run_dir(train_args: list[str]) -> Path:
    """The run directory the workers will use, read from their --run-dir / --data-dir."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--run-dir", type=Path, default=None)
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    known, _ = parser.parse_known_args(train_args)
    return known.run_dir or known.data_dir / "train"


def _forward_signals(process: subprocess.Popen) -> None:
    def forward(signum: int, frame: FrameType | None) -> None:
        try:
            children = psutil.Process(process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stages.train.launch", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nproc", type=int, default=2, help="workers on this node (default 2)")
    parser.add_argument("--nnodes", type=int, default=1, help="nodes in the job (default 1)")
    parser.add_argument("--node-rank", type=int, default=0, help="this node's index (default 0)")
    parser.add_argument("--master-addr", default="127.0.0.1", help="host of the msrun scheduler (node 0)")
    parser.add_argument("--master-port", type=int, default=None, help="scheduler port (default: a free port)")
    parser.add_argument("--log-dir", type=Path, default=None, help="worker logs (default RUN_DIR/msrun_logs)")
    parser.add_argument("train_args", nargs=argparse.REMAINDER, help="-- then the arguments of python -m stages.train")
    args = parser.parse_args(argv)
    train_args = args.train_args[1:] if args.train_args[:1] == ["--"] else args.train_args
    if args.nproc < 1 or args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        parser.error("need --nproc >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes")
    if args.nnodes > 1 and args.master_port is None:
        parser.error("--master-port must be given when --nnodes > 1 (every node must use the same one)")
    log_dir = args.log_dir or _run_dir(train_args) / "msrun_logs"
    command = msrun_command(args.nproc, train_args, nnodes=args.nnodes, node_rank=args.node_rank,
                            master_addr=args.master_addr, master_port=args.master_port or free_port(),
                            log_dir=log_dir)
    print(f"launching {args.nproc * args.nnodes} workers (logs: {log_dir}): {' '.join(command)}", flush=True)
    process = subprocess.Popen(command, env=worker_env())
    _forward_signals(process)
    return process.wait()


if __name__ == "__main__":
    sys.exit(main())
