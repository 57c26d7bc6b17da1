"""The training pods as the nodes would run them, in Docker: the rendered train-cpu Indexed Job's pod template
twice on one network with the Job's hostnames (preempted part-way, replaced, resumed from `latest`), and the
rendered AscendJob's Scheduler and two Worker pods with the environment the ascend-operator injects, on the
CPU image. Both end with the same parameter sha256 on every rank, and the same as each other."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from stages.train.config import load_trainer_config
from tests.conftest import REPO
from tests.k8s import controllers
from tests.k8s.kube import containers, deep, env_value, one, render
from tests.k8s.pods import Pod, PodRunner, shared_folder
from tests.token_files import learnable_stream, write_token_folder

VOCAB, SEQ_LEN = 512, 256
DIGEST = re.compile(r"rank (\d+): parameters sha256 ([0-9a-f]{64})")
RUN_TIMEOUT = 1500
# train-cpu.yaml's steps as the ConfigMap carries them, cut to a smoke run's length the way a user would: by
# editing the ConfigMap's file (the pods read it at start). Preemption comes after 30 steps.
STEPS = 60
assert load_trainer_config(REPO / "configs" / "train-cpu.yaml").train.steps > STEPS


def _render_short(overlay: str) -> list[dict]:
    """The overlay's objects, with train-cpu.yaml in the kiln-configs ConfigMap set to STEPS steps."""
    objects = render(overlay)
    files = one(objects, "ConfigMap", "kiln-configs")["data"]
    config = yaml.safe_load(files["train-cpu.yaml"])
    config["train"]["steps"] = STEPS
    files["train-cpu.yaml"] = yaml.safe_dump(config, sort_keys=False)
    return objects


def write_tokens(folder: Path, vocab: int = VOCAB, seq_len: int = SEQ_LEN) -> None:
    """A tiny packed token set in the tokenize stage's format (train and validation splits, meta.json)."""
    rng = np.random.default_rng(0)
    splits = {name: learnable_stream(windows * seq_len + 1, vocab, rng) for name, windows in (("train", 64), ("validation", 16))}
    write_token_folder(folder, splits, vocab, seq_len)


def _volume(root: Path) -> Path:
    """The kiln-data claim: a shared folder with the tokens the pipeline would have left in tokenize/."""
    data = shared_folder(root / "kiln-data")
    write_tokens(data / "tokenize")
    for path in [data / "tokenize", *(data / "tokenize").iterdir()]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    return data


def _digests(volume: Path) -> dict[str, str]:
    """rank -> the parameter sha256 each rank printed at the end, from the worker logs on the volume."""
    found: dict[str, str] = {}
    for log in sorted((volume / "train" / "msrun_logs").rglob("worker_*.log")):
        found.update(DIGEST.findall(log.read_text(errors="replace")))
    return found


def _latest_step(volume: Path) -> int:
    """The step of checkpoints/latest (0 before the first save)."""
    state = volume / "train" / "checkpoints" / "latest" / "trainer_state.json"
    return json.loads(state.read_text())["step"] if state.exists() else 0


def _metric_steps(volume: Path) -> list[int]:
    """The steps rank 0 has logged so far (a line still being written is left out)."""
    path = volume / "train" / "metrics.jsonl"
    steps = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            steps.append(json.loads(line)["step"])
        except (ValueError, KeyError):
            continue
    return steps


def _logs(runner: PodRunner, pods: list[Pod]) -> str:
    return "\n".join(f"--- {p.name}/{n}\n{runner.logs(c)[-3000:]}" for p in pods for n, c in p.containers.items())


@pytest.fixture(scope="module")
def indexed_job(docker: str, images: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The train-cpu Indexed Job: both pods start, are preempted (SIGTERM to every container, then the grace
    period) once 30 steps are done, and are replaced by the Job with the same indexes; the new pods run the same
    command and finish. What the run left: exit codes, the step saved at preemption, logs and the volume."""
    root = tmp_path_factory.mktemp("indexed-job")
    volume = _volume(root)
    objects = _render_short("train-cpu")
    job, service = one(objects, "Job", "kiln-train"), one(objects, "Service", "kiln-train")
    count = job["spec"]["completions"]
    with PodRunner(docker, root / "scratch", objects, claims={"kiln-data": volume}) as runner:
        first = [runner.start(controllers.indexed_job_pod(job, i, service)) for i in range(count)]
        deadline = time.monotonic() + RUN_TIMEOUT
        while not [s for s in _metric_steps(volume) if s >= 30]:
            assert time.monotonic() < deadline and all(runner.running(p) for p in first), _logs(runner, first)
            time.sleep(2)
        runner.stop(first)
        preempted = [runner.wait(p, 120)["trainer"] for p in first]
        saved = _latest_step(volume)
        stopped = _logs(runner, first)
        for pod in first:
            runner.remove(pod)
        second = [runner.start(controllers.indexed_job_pod(job, i, service)) for i in range(count)]
        finished = [runner.wait(p, RUN_TIMEOUT)["trainer"] for p in second]
        return {"volume": volume, "preempted": preempted, "saved": saved, "finished": finished,
                "doctor": first[0].init_logs["doctor"], "steps": STEPS,
                "launch": [runner.logs(p.containers["trainer"]) for p in second],
                "all": stopped + "\n" + _logs(runner, second)}


def test_the_indexed_job_pods_find_each_other_by_the_jobs_hostnames(indexed_job: dict):
    assert indexed_job["finished"] == [0, 0], indexed_job["all"]
    for rank, log in enumerate(indexed_job["launch"]):
        assert "pattern: Indexed Job" in log and f"node rank {rank}" in log, log[-2000:]
        assert "scheduler kiln-train-0.kiln-train:8118" in log


def test_kiln_doctor_ran_first_and_passed(indexed_job: dict):
    assert "do not apply" in indexed_job["doctor"] and ", 0 fail," in indexed_job["doctor"], indexed_job["doctor"]


def test_preemption_saves_latest_and_the_replacements_resume_from_it(indexed_job: dict):
    assert indexed_job["preempted"] == [143, 143], indexed_job["all"]
    saved, steps, volume = indexed_job["saved"], indexed_job["steps"], indexed_job["volume"]
    assert 30 <= saved < steps
    worker0 = (volume / "train" / "msrun_logs" / "node-0" / "worker_0.log").read_text()
    assert f"steps {saved}..{steps}" in worker0, worker0[-2000:]
    assert _latest_step(volume) == steps


def test_both_ranks_of_the_indexed_job_end_with_the_same_parameters(indexed_job: dict):
    digests = _digests(indexed_job["volume"])
    assert sorted(digests) == ["0", "1"] and digests["0"] == digests["1"]


def _on_cpu(template: dict, cpu_pod: dict) -> dict:
    """An AscendJob pod template as a CPU-only machine can run it: the CPU image, command and resources of the
    rendered train-cpu pod (there is no CANN to source and no NPU), no host driver mounts, no Ascend node
    selector or HwHiAiUser group, and the train-cpu config. Arguments and every other variable stay."""
    template = deep(template)
    spec = template["spec"]
    cpu = {c["name"]: c for c in containers(cpu_pod)}
    host = {v["name"] for v in spec.get("volumes", []) if "hostPath" in v}
    spec["volumes"] = [v for v in spec.get("volumes", []) if v["name"] not in host]
    spec.pop("nodeSelector", None)
    spec["securityContext"].pop("supplementalGroups", None)
    for container in containers(spec):
        source = cpu["doctor"] if container["name"] == "doctor" else cpu["trainer"]
        container["image"], container["command"] = source["image"], source["command"]
        container["resources"] = deep(source["resources"])
        container["volumeMounts"] = [m for m in container["volumeMounts"] if m["name"] not in host]
        for var in container.get("env", []):
            if var["name"] == "KILN_TRAIN_CONFIG":
                var["value"] = env_value(source, "KILN_TRAIN_CONFIG")
    return template


@pytest.fixture(scope="module")
def ascendjob(docker: str, images: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The AscendJob's Scheduler pod, then its Worker pods with the scheduler's address, on the CPU image."""
    root = tmp_path_factory.mktemp("ascendjob")
    volume = _volume(root)
    objects = _render_short("train-ascendjob")
    job = deep(one(objects, "AscendJob", "kiln-train"))
    cpu_pod = one(render("train-cpu"), "Job", "kiln-train")["spec"]["template"]["spec"]
    for replica in job["spec"]["replicaSpecs"].values():
        replica["template"] = _on_cpu(replica["template"], cpu_pod)
    # One CPU worker per pod stands for the NPUs the operator counts into MS_LOCAL_WORKER.
    per_pod = int(env_value(cpu_pod["containers"][0], "KILN_NPROC_PER_NODE"))
    workers = job["spec"]["replicaSpecs"]["Worker"]["replicas"]
    with PodRunner(docker, root / "scratch", objects, claims={"kiln-data": volume}) as runner:
        scheduler = runner.start(controllers.ascendjob_pod(job, "Scheduler", 0, per_pod, None))
        pods = [runner.start(controllers.ascendjob_pod(job, "Worker", i, per_pod, scheduler.ip))
                for i in range(workers)]
        codes = [runner.wait(p, RUN_TIMEOUT)["ascend"] for p in pods]
        scheduler_code = runner.wait(scheduler, 300)["ascend"]
        return {"volume": volume, "codes": codes, "scheduler_code": scheduler_code, "ranks": workers * per_pod,
                "scheduler": runner.logs(scheduler.containers["ascend"]),
                "workers": [runner.logs(p.containers["ascend"]) for p in pods],
                "all": _logs(runner, [scheduler, *pods])}


def test_the_ascendjob_scheduler_and_workers_take_their_roles_from_the_operators_environment(ascendjob: dict):
    assert ascendjob["codes"] == [0, 0] and ascendjob["scheduler_code"] == 0, ascendjob["all"]
    assert "this pod: the scheduler" in ascendjob["scheduler"]
    for rank, log in enumerate(ascendjob["workers"]):
        assert "pattern: MindCluster AscendJob" in log and f"node rank {rank}" in log, log[-2000:]


def test_every_ascendjob_rank_ends_with_the_same_parameters(ascendjob: dict):
    digests = _digests(ascendjob["volume"])
    assert sorted(digests) == [str(r) for r in range(ascendjob["ranks"])] and len(set(digests.values())) == 1
    assert _latest_step(ascendjob["volume"]) == STEPS


def test_the_preempted_indexed_job_and_the_ascendjob_end_with_the_same_parameters(indexed_job: dict, ascendjob: dict):
    assert _digests(indexed_job["volume"])["0"] == _digests(ascendjob["volume"])["0"]
