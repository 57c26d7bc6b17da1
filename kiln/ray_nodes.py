"""Ray nodes on this machine, started with `ray start ... --block`, each in a session of its own, so
that stopping them stops exactly these nodes and what they started (`ray stop` would stop every
Ray on the machine, and `ray stop --force` kills them without a word)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

RAY = str(Path(sys.executable).parent / "ray")
CURRENT_CLUSTER = Path("/tmp/ray/ray_current_cluster")


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def session_members(session: int) -> list[int]:
    """Pids of the live processes of one session (from /proc)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session:  # after "pid (comm)": state ppid pgrp session ...
                pids.append(int(stat.parent.name))
    return pids


class RayNodes:
    """A head and workers on 127.0.0.1; use as a context manager."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._procs: list[subprocess.Popen] = []
        self._outputs: list[IO[str]] = []  # each node's `ray start` output
        self._files = contextlib.ExitStack()
        self._previous = CURRENT_CLUSTER.read_text() if CURRENT_CLUSTER.exists() else None

    def _start(self, *args: str, env: dict[str, str] | None = None) -> None:
        output = self._files.enter_context(tempfile.TemporaryFile(mode="w+"))  # noqa: SIM115 (closed on exit)
        self._outputs.append(output)
        self._procs.append(subprocess.Popen([RAY, "start", *args, "--block"], env={**self.env, **(env or {})},
                                            stdout=output, stderr=subprocess.STDOUT, start_new_session=True))

    def _node_report(self) -> str:
        """Each node's exit status and the end of its `ray start` output, for an error message."""
        lines = []
        for index, (proc, output) in enumerate(zip(self._procs, self._outputs, strict=True)):
            output.seek(0)
            status = "running" if proc.poll() is None else f"exited {proc.returncode}"
            lines.append(f"--- node {index} ({'head' if index == 0 else 'worker'}, {status}):\n{output.read()[-1500:]}")
        return "\n".join(lines)

    def start_head(self, num_cpus: int = 0, seconds: float = 90, *extra: str,
                   env: dict[str, str] | None = None) -> None:
        """Start the head (``extra`` flags and ``env`` for it alone) and wait until it has registered itself
        as this machine's cluster."""
        self._start("--head", f"--port={self.port}", f"--num-cpus={num_cpus}", "--include-dashboard=false", *extra,
                    env=env)
        deadline = time.monotonic() + seconds
        while not (CURRENT_CLUSTER.exists() and str(self.port) in CURRENT_CLUSTER.read_text()):
            if self._procs[0].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Ray head on port {self.port} did not come up\n{self._node_report()}")
            time.sleep(0.5)

    def add_worker(self, num_cpus: int = 1, resources: str = "{}") -> None:
        """Start one more worker node joining the head."""
        self._start(f"--address={self.address}", f"--num-cpus={num_cpus}", f"--resources={resources}")

    def wait_for_nodes(self, count: int, seconds: float = 300) -> None:
        """Wait until ``count`` nodes (the head included) are alive."""
        probe = f"import ray; ray.init(address='{self.address}'); print(sum(n['Alive'] for n in ray.nodes()))"
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(proc.poll() is not None for proc in self._procs):
                raise RuntimeError(f"a Ray node at {self.address} exited\n{self._node_report()}")
            done = subprocess.run([sys.executable, "-c", probe], env=self.env, capture_output=True, text=True)
            if done.returncode == 0 and done.stdout.strip().splitlines()[-1] == str(count):
                return
            time.sleep(1)
        raise RuntimeError(f"fewer than {count} Ray nodes came up at {self.address} in {seconds:.0f} s; the "
                           f"last probe printed: {done.stdout[-300:]} {done.stderr[-800:]}\n{self._node_report()}")

    def __enter__(self) -> RayNodes:
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self._procs):
            for _ in range(10):  # the node and every process it started, until none is left
                members = session_members(proc.pid)
                if not members:
                    break
                for pid in members:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.2)
            proc.wait()
        self._files.close()
        if CURRENT_CLUSTER.exists() and str(self.port) in CURRENT_CLUSTER.read_text():
            if self._previous is None:
                CURRENT_CLUSTER.unlink()
            else:
                CURRENT_CLUSTER.write_text(self._previous)
