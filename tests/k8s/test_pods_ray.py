"""The data pipeline's RayJobs as KubeRay would run them, in Docker: from the rendered ingest and clean RayJobs,
the head pod (its init containers first: the demo corpus), the worker pods with the `ray start` flags KubeRay
derives from rayStartParams and each group's resources (after its wait-gcs-ready init container), and the
submitter pod sending the entrypoint with `ray job submit`, token auth on as KubeRay sets it up. The stages'
output on the volume equals a local run's (each stage's image with a private local Ray, as `make data` runs
them), byte for byte; clean's tasks ran only on the group that declares the `clean` resource."""

from __future__ import annotations

import json
import math
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from common.config import load_config
from common.manifest import require_manifest
from tests.k8s import controllers
from tests.k8s.kube import CONFIG_MOUNT, env_value, one, render
from tests.k8s.pods import PodRunner, shared_folder

JOB_TIMEOUT = 1200
# What KubeRay reads into the RayJob's .status.jobStatus: the job's status from the head's job API.
STATUS_PROBE = ("from ray.job_submission import JobSubmissionClient; "
                "print(JobSubmissionClient('http://127.0.0.1:8265').get_job_status('{}').value)")
NODES_PROBE = ("import json, ray; ray.init(logging_level='ERROR'); "
               "print(json.dumps([n['Resources'] for n in ray.nodes() if n['Alive']]))")


def _run_rayjob(docker: str, objects: list[dict], job: dict, volume: Path, scratch: Path,
                workers: dict[str, int]) -> dict:
    """Run a RayJob's cluster and submitter to the end; what they said and what the head knew."""
    ray = controllers.RayJobPods(job)
    with PodRunner(docker, scratch, objects, claims={"kiln-data": volume}, secrets=ray.secrets) as runner:
        head = runner.start(ray.head())
        pods = [runner.start(ray.worker(group, i)) for group, count in workers.items() for i in range(count)]
        # Before any task runs: what the clean workers' numba finds in its cache.
        kernels = [runner.exec(p, "ray-worker", "python", "-m", "stages.clean.compile_kernels").stdout.strip()
                   for p in pods if p.labels["ray.io/group"] == "clean"]
        submitter = runner.start(ray.submitter())
        code = runner.wait(submitter, JOB_TIMEOUT)["ray-job-submitter"]
        status = runner.exec(head, "ray-head", "python", "-c", STATUS_PROBE.format(ray.submission_id))
        nodes = runner.exec(head, "ray-head", "python", "-c", NODES_PROBE)
        return {"code": code, "status": status.stdout.strip().splitlines()[-1:] or [status.stderr], "nodes": nodes.stdout.strip().splitlines(),
                "submitter": runner.logs(submitter.containers["ray-job-submitter"]),
                "head": runner.logs(head.containers["ray-head"]), "init": head.init_logs,
                "workers": [runner.logs(p.containers["ray-worker"]) for p in pods],
                "worker_inits": [p.init_logs for p in pods], "kernels": kernels, "start": {
                    "head": env_value(head.spec["containers"][0], "KUBERAY_GEN_RAY_START_CMD"),
                    **{p.labels["ray.io/group"]: env_value(p.spec["containers"][0], "KUBERAY_GEN_RAY_START_CMD")
                       for p in pods}}}


def _local_stage(docker: str, image: str, entrypoint: str, volume: Path, configs: Path) -> None:
    """The stage's command in its own image with no cluster address: a private local Ray, as `make data`."""
    args = shlex.split(entrypoint)
    assert args[:3] == ["python", "-m", args[2]]
    result = subprocess.run([docker, "run", "--rm", "--network", "none", "--user", "1000:1000", "--shm-size", "1g",
                             "-v", f"{volume}:/data", "-v", f"{configs}:{CONFIG_MOUNT}:ro", "-e",
                             "RAY_USAGE_STATS_ENABLED=0", "--entrypoint", "python", image, *args[1:]],
                            capture_output=True, text=True, timeout=JOB_TIMEOUT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _stage_files(stage_dir: Path) -> dict[str, bytes]:
    """Every file a stage hands on: the manifest, its shards and the excluded shards."""
    manifest = require_manifest(stage_dir)
    names = ["_manifest.json", *(info.path for info in manifest.shards)]
    names += [info.path for infos in manifest.excluded.values() for info in infos]
    names += [info.path for infos in manifest.outputs.values() for info in infos]
    return {name: (stage_dir / name).read_bytes() for name in names}


@pytest.fixture(scope="module")
def pipeline(docker: str, images: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("rayjobs")
    objects = render("data")
    volume = shared_folder(root / "kiln-data")
    ingest, clean = one(objects, "RayJob", "kiln-ingest"), one(objects, "RayJob", "kiln-clean")
    fixed = {g["groupName"]: g["replicas"] for g in ingest["spec"]["rayClusterSpec"]["workerGroupSpecs"]}
    # The clean group starts at 0; this is the worker the autoscaler adds once clean's tasks wait.
    runs = {"ingest": _run_rayjob(docker, objects, ingest, volume, root / "ingest", fixed),
            "clean": _run_rayjob(docker, objects, clean, volume, root / "clean", {"clean": 1})}
    # The reference: the same demo corpus and the same stage commands, each in its image in local mode.
    reference = shared_folder(root / "local")
    configs = root / "configs"
    configs.mkdir()
    for key, text in one(objects, "ConfigMap", "kiln-configs")["data"].items():
        (configs / key).write_text(text)
    head = ingest["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    [demo] = [c for c in head["initContainers"] if c["name"] == "demo"]
    demo_env = {v["name"]: v["value"] for v in demo["env"]}
    demo_args = [a.replace("$(DEMO_DOCS)", demo_env["DEMO_DOCS"]).replace("$(DEMO_SEED)", demo_env["DEMO_SEED"])
                 for a in [*demo["command"], *demo["args"]]]
    _local_stage(docker, demo["image"], " ".join(demo_args), reference, configs)
    for job in (ingest, clean):
        image = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
        _local_stage(docker, image, job["spec"]["entrypoint"], reference, configs)
    return {"runs": runs, "volume": volume, "reference": reference}


@pytest.mark.parametrize("stage", ["ingest", "clean"])
def test_the_rayjob_succeeds_through_the_submitter(pipeline: dict, stage: str):
    run = pipeline["runs"][stage]
    assert run["code"] == 0, run["submitter"][-3000:] + run["head"][-2000:]
    assert run["status"] == ["SUCCEEDED"], (run["status"], run["submitter"][-3000:])
    assert "connecting to the Ray cluster" in (pipeline["volume"] / stage / "_logs" / f"{stage}.log").read_text()


def test_kuberay_start_commands_come_from_the_groups(pipeline: dict):
    clean = pipeline["runs"]["clean"]["start"]
    assert "--head" in clean["head"] and " --num-cpus=0 " in clean["head"] and " --no-monitor " in clean["head"]
    assert " --dashboard-host=0.0.0.0 " in clean["head"]
    assert """ --num-cpus=4 """ in clean["clean"] and """ --resources='{"clean":4}' """ in clean["clean"]
    assert "--address=kiln-clean-" in clean["clean"] and " --block " in clean["clean"]
    ingest = pipeline["runs"]["ingest"]["start"]
    assert " --num-cpus=4 " in ingest["workers"] and "--resources" not in ingest["workers"]  # from the CPU limit


def test_only_the_clean_group_offers_the_clean_resource(pipeline: dict):
    resource = load_config([]).ray.stage_resources["clean"]
    nodes = json.loads(pipeline["runs"]["clean"]["nodes"][-1])
    head = [n for n in nodes if not n.get("CPU")]
    workers = [n for n in nodes if n.get("CPU")]
    assert len(head) == 1 and resource not in head[0]
    assert len(workers) == 1 and workers[0][resource] == workers[0]["CPU"] == 4


def test_clean_workers_load_the_kernels_compiled_into_the_image(pipeline: dict):
    """The init container copies the image's numba cache into the pod's empty /tmp: no worker compiles."""
    [report] = pipeline["runs"]["clean"]["kernels"]
    assert report.startswith("clean kernels: all ") and "loaded from numba's cache (/tmp/numba)" in report, report


def test_the_demo_corpus_of_the_init_container_is_the_local_one(pipeline: dict):
    volume, reference = pipeline["volume"], pipeline["reference"]
    files = sorted(p.relative_to(reference) for p in (reference / "demo").rglob("*") if p.is_file())
    assert files and all((volume / f).read_bytes() == (reference / f).read_bytes() for f in files)


@pytest.mark.parametrize("stage", ["ingest", "clean"])
def test_the_stage_output_equals_the_local_run_byte_for_byte(pipeline: dict, stage: str):
    cluster, local = _stage_files(pipeline["volume"] / stage), _stage_files(pipeline["reference"] / stage)
    assert sorted(cluster) == sorted(local)
    for name, data in local.items():
        assert cluster[name] == data, f"{stage}/{name}"
    assert require_manifest(pipeline["volume"] / stage).accounting == require_manifest(
        pipeline["reference"] / stage).accounting


# -- the clean group under Ray's autoscaler v2 ---------------------------------------------------------------------

HEAD_ID = "f" * 51 + "00000"
AUTOSCALE_SCRIPT = """
set -u
ray start --head --port=6390 --num-cpus=0 --include-dashboard=false --autoscaling-config=/scaling/autoscale.yaml \
  >/scaling/head.log 2>&1
python /scaling/monitor.py &
monitor=$!
RAY_ADDRESS=127.0.0.1:6390 {entrypoint} >/scaling/stage.log 2>&1
echo $? >/scaling/stage.rc
wait $monitor
"""
MONITOR = """
import json, time, ray
ray.init(address="127.0.0.1:6390", logging_level="ERROR")
def workers():
    return sum(1 for n in ray.nodes() if n["Alive"] and n["Resources"].get({resource!r}))
seen, busy, began = [], False, time.time()
while time.time() - began < {limit}:
    count = workers()
    seen.append(count)
    rc = open("/scaling/stage.rc").read().strip() if __import__("os").path.exists("/scaling/stage.rc") else None
    if rc is not None and count == 0:
        break
    time.sleep(1)
json.dump({{"seen": seen, "after_job": seen[-1]}}, open("/scaling/nodes.json", "w"))
"""


def _autoscaling_config(job: dict) -> dict:
    """Ray's fake multi-node provider (one machine, ray.md) with the clean group's node type as the rendered
    RayJob declares it: its resources, its minReplicas and maxReplicas, and autoscalerOptions.idleTimeoutSeconds."""
    cluster = job["spec"]["rayClusterSpec"]
    group = cluster["workerGroupSpecs"][0]
    resources = {k: float(v) for k, v in group["resources"].items()}
    return {
        "cluster_name": job["metadata"]["name"], "max_workers": group["maxReplicas"],
        "provider": {"type": "external",
                     "module": "ray.autoscaler._private.fake_multi_node.node_provider.FakeMultiNodeProvider",
                     "use_node_id_as_ip": True, "disable_node_updaters": True, "disable_launch_config_check": True,
                     "launch_multiple": True, "head_node_id": HEAD_ID, "gcs_address": "127.0.0.1:6390"},
        "available_node_types": {
            "ray.head.default": {"resources": {"CPU": float(cluster["headGroupSpec"]["rayStartParams"]["num-cpus"])},
                                 "node_config": {}, "max_workers": 0},
            group["groupName"]: {"resources": resources, "node_config": {}, "min_workers": group["minReplicas"],
                                 "max_workers": group["maxReplicas"]}},
        "head_node_type": "ray.head.default",
        "idle_timeout_minutes": cluster["autoscalerOptions"]["idleTimeoutSeconds"] / 60, "upscaling_speed": 1.0,
        "auth": {}, "docker": {}, "initialization_commands": [], "setup_commands": [], "head_setup_commands": [],
        "worker_setup_commands": [], "head_start_ray_commands": [], "worker_start_ray_commands": [],
        "file_mounts": {}, "cluster_synced_files": [], "file_mounts_sync_continuously": False,
        "rsync_exclude": [], "rsync_filter": []}


def test_the_clean_group_grows_from_zero_with_the_stages_demand_and_returns_to_zero(docker: str, pipeline: dict,
                                                                                  tmp_path: Path):
    """KubeRay's autoscaler sidecar needs an API server; Ray's autoscaler v2 with its fake multi-node provider
    makes the same decisions from the same demand on one machine. Clean's work units wait for `clean`, the group
    that declares it grows to ceil(units / clean per node) within maxReplicas, and once idle for
    idleTimeoutSeconds it is back to 0; the output equals the local run's."""
    objects = render("data")
    job = one(objects, "RayJob", "kiln-clean")
    group = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    resource = load_config([]).ray.stage_resources["clean"]
    volume = shared_folder(tmp_path / "kiln-data")
    shutil.copytree(pipeline["reference"] / "ingest", volume / "ingest")
    subprocess.run(["chmod", "-R", "a+rwX", str(volume)], check=True)
    scaling = shared_folder(tmp_path / "scaling")
    idle = job["spec"]["rayClusterSpec"]["autoscalerOptions"]["idleTimeoutSeconds"]
    (scaling / "autoscale.yaml").write_text(yaml.safe_dump(_autoscaling_config(job)))
    (scaling / "monitor.py").write_text(MONITOR.format(resource=resource, limit=JOB_TIMEOUT + idle + 120))
    configs = tmp_path / "configs"
    configs.mkdir()
    for key, text in one(objects, "ConfigMap", "kiln-configs")["data"].items():
        (configs / key).write_text(text)
    image = group["template"]["spec"]["containers"][0]["image"]
    env = {"RAY_AUTH_MODE": "disabled",  # one container, no network: nothing to authenticate
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_FAKE_CLUSTER": "1", "AUTOSCALER_UPDATE_INTERVAL_S": "1",
           "RAY_enable_autoscaler_v2": "1", "RAY_CLOUD_INSTANCE_ID": HEAD_ID, "RAY_OVERRIDE_NODE_ID_FOR_TESTING": HEAD_ID}
    result = subprocess.run([docker, "run", "--rm", "--network", "none", "--user", "1000:1000", "--shm-size", "2g",
                             "-v", f"{volume}:/data", "-v", f"{scaling}:/scaling", "-v", f"{configs}:{CONFIG_MOUNT}:ro",
                             *[a for k, v in env.items() for a in ("-e", f"{k}={v}")], "--entrypoint", "bash", image,
                             "-c", AUTOSCALE_SCRIPT.format(entrypoint=job["spec"]["entrypoint"])],
                            capture_output=True, text=True, timeout=JOB_TIMEOUT + idle + 300)
    logs = "".join((scaling / f).read_text()[-2000:] for f in ("head.log", "stage.log") if (scaling / f).exists())
    assert result.returncode == 0 and (scaling / "stage.rc").read_text().strip() == "0", logs + result.stderr
    nodes = json.loads((scaling / "nodes.json").read_text())
    units = len(require_manifest(volume / "ingest").shards)
    wanted = min(group["maxReplicas"], math.ceil(units / float(group["resources"][resource])))
    assert nodes["seen"][0] == 0 and max(nodes["seen"]) == wanted, nodes
    assert nodes["after_job"] == 0, nodes
    assert _stage_files(volume / "clean") == _stage_files(pipeline["reference"] / "clean")
