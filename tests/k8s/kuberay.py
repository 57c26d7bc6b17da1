"""What the KubeRay 1.7 operator does with a RayJob, for tests that have no operator: its admission rules
(ray-operator/controllers/ray/utils/validation.go, which the CRD's schema does not express) and the commands
and environment it gives the pods it builds (controllers/ray/common/pod.go and job.go)."""

from __future__ import annotations

import json
import re

from tests.k8s.kube import quantity, quantity_value

MAX_RAYJOB_NAME = 47  # MaxRayClusterNameLength (53) - 6
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
RAY_START_RESOURCE_PARAMS = ("num-cpus", "num-gpus", "memory", "resources")
DELETION_ORDER = ("DeleteWorkers", "DeleteCluster", "DeleteSelf")
GCS_PORT = 6379
DASHBOARD_PORT = 8265
METRICS_PORT = 8080
DASHBOARD_AGENT_LISTEN_PORT = 52365
GPU_KEYS = re.compile(r".*/gpu$")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def autoscaling(cluster: dict) -> bool:
    return bool(cluster.get("enableInTreeAutoscaling"))


def autoscaler_v2(cluster: dict) -> bool:
    if not autoscaling(cluster):
        return False
    options = cluster.get("autoscalerOptions") or {}
    if options.get("version"):
        return options["version"] == "v2"
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    return any(v["name"] == "RAY_enable_autoscaler_v2" and v.get("value") in ("1", "true") for v in head.get("env", []))


# -- the admission rules -------------------------------------------------------------------------------------------

def _group_rules(name: str, group: dict, cluster: dict) -> list[str]:
    errors = []
    params = group.get("rayStartParams") or {}
    if any(params.get(key) for key in RAY_START_RESOURCE_PARAMS) and group.get("resources"):
        errors.append(f"resource fields should not be set in both rayStartParams and Resources for {name} group")
    if "labels" in params:
        errors.append(f"rayStartParams['labels'] is not supported for {name} group")
    if not group["template"]["spec"].get("containers"):
        errors.append(f"{name} group should have at least one container")
    return errors


def cluster_violations(cluster: dict) -> list[str]:
    """ValidateRayClusterSpec's rules that apply to a RayJob's cluster."""
    errors = _group_rules("Head", cluster["headGroupSpec"], cluster)
    v2 = autoscaler_v2(cluster)
    for group in cluster.get("workerGroupSpecs", []):
        name = group["groupName"]
        errors += _group_rules(name, group, cluster)
        low, high = group.get("minReplicas"), group.get("maxReplicas")
        if not autoscaling(cluster) and (low is None or high is None):
            errors.append(f"worker group {name} must set both minReplicas and maxReplicas when autoscaling is disabled")
        if (low is not None and low < 0) or (high is not None and high < 0):
            errors.append(f"worker group {name} has negative minReplicas or maxReplicas")
        if low is not None and high is not None and low > high:
            errors.append(f"worker group {name} has minReplicas {low} greater than maxReplicas {high}")
        if group.get("idleTimeoutSeconds") is not None and not v2:
            errors.append(f"worker group {name}: idleTimeoutSeconds is set, but autoscaler v2 is not enabled")
        if autoscaling(cluster) and group.get("suspend"):
            errors.append(f"worker group {name} cannot be suspended with Autoscaler enabled")
    head_env = {v["name"] for v in cluster["headGroupSpec"]["template"]["spec"]["containers"][0].get("env", [])}
    if autoscaling(cluster) and (cluster.get("autoscalerOptions") or {}).get("version") and \
            "RAY_enable_autoscaler_v2" in head_env:
        errors.append("both .spec.autoscalerOptions.version and head Pod env var RAY_enable_autoscaler_v2 are set")
    if v2:
        templates = [("head Pod", cluster["headGroupSpec"]["template"])]
        templates += [(f"worker group {g['groupName']}", g["template"]) for g in cluster.get("workerGroupSpecs", [])]
        for where, template in templates:
            if template["spec"].get("restartPolicy") not in (None, "", "Never"):
                errors.append(f"restartPolicy for {where} should be Never or unset when using autoscaler V2")
    idle = (cluster.get("autoscalerOptions") or {}).get("idleTimeoutSeconds")
    if idle is not None and idle < 0:
        errors.append("autoscalerOptions.idleTimeoutSeconds must be non-negative")
    if (cluster.get("authOptions") or {}).get("mode") == "token":
        version = cluster.get("rayVersion")
        if not version:
            errors.append("authOptions.mode is 'token' but RayVersion was not specified")
        elif _version(version) < (2, 52, 0):
            errors.append(f"authOptions.mode is 'token' but minimum Ray version is 2.52.0, got {version}")
    return errors


def _deletion_rule_violations(job: dict) -> list[str]:
    spec = job["spec"]
    errors = []
    by_status: dict[tuple[str, str], dict[str, int]] = {}
    for i, rule in enumerate(spec["deletionStrategy"]["deletionRules"]):
        condition = rule.get("condition", {})
        keys = [k for k in ("jobStatus", "jobDeploymentStatus") if condition.get(k) is not None]
        if len(keys) != 1:
            errors.append(f"deletionRules[{i}]: exactly one of JobStatus and JobDeploymentStatus must be set")
            continue
        if condition.get("ttlSeconds", 0) < 0:
            errors.append(f"deletionRules[{i}]: TTLSeconds must be non-negative")
            continue
        if spec.get("rayClusterSpec") and autoscaling(spec["rayClusterSpec"]) and rule["policy"] == "DeleteWorkers":
            errors.append(f"deletionRules[{i}]: DeletionPolicyType 'DeleteWorkers' not supported with autoscaling "
                          f"enabled")
            continue
        policies = by_status.setdefault((keys[0], condition[keys[0]]), {})
        if rule["policy"] in policies:
            errors.append(f"deletionRules[{i}]: duplicate rule for {rule['policy']} and {condition[keys[0]]}")
            continue
        policies[rule["policy"]] = condition.get("ttlSeconds", 0)
    for (_, status), policies in by_status.items():
        ttls = [(p, policies[p]) for p in DELETION_ORDER if p in policies]
        for (first, low), (second, high) in zip(ttls, ttls[1:], strict=False):
            if high < low:
                errors.append(f"for {status}: {second} TTL ({high}) must be >= {first} TTL ({low})")
    return errors


def rayjob_violations(job: dict) -> list[str]:
    """Every reason KubeRay 1.7 would refuse this RayJob (ValidateRayJobMetadata and ValidateRayJobSpec)."""
    name, spec = job["metadata"]["name"], job["spec"]
    errors = []
    if len(name) > MAX_RAYJOB_NAME:
        errors.append(f"RayJob name should be no more than {MAX_RAYJOB_NAME} characters")
    if not DNS1035.match(name):
        errors.append("RayJob name should be a valid DNS1035 label")
    shutdown = bool(spec.get("shutdownAfterJobFinishes"))
    if spec.get("suspend") and not shutdown:
        errors.append("a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended")
    if spec.get("ttlSecondsAfterFinished", 0) < 0:
        errors.append("TTLSecondsAfterFinished must be a non-negative integer")
    if not shutdown and spec.get("ttlSecondsAfterFinished", 0) > 0:
        errors.append("a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished")
    strategy = spec.get("deletionStrategy")
    if strategy is not None:
        rules, legacy = strategy.get("deletionRules") or [], "onSuccess" in strategy or "onFailure" in strategy
        if rules and shutdown:
            errors.append("spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive")
        elif rules and legacy:
            errors.append("Cannot use both legacy onSuccess/onFailure fields and deletionRules simultaneously")
        elif rules:
            errors += _deletion_rule_violations(job)
        elif not legacy:
            errors.append("DeletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field")
    if spec.get("rayClusterSpec") is None and not spec.get("clusterSelector"):
        errors.append("one of RayClusterSpec or ClusterSelector must be set")
    if spec.get("submissionMode") == "InteractiveMode" and spec.get("backoffLimit", 0) > 0:
        errors.append("BackoffLimit is incompatible with InteractiveMode")
    if spec.get("activeDeadlineSeconds") is not None and spec["activeDeadlineSeconds"] <= 0:
        errors.append("activeDeadlineSeconds must be a positive integer")
    if spec.get("backoffLimit") is not None and spec["backoffLimit"] < 0:
        errors.append("backoffLimit must be a positive integer")
    if spec.get("rayClusterSpec") is not None:
        errors += cluster_violations(spec["rayClusterSpec"])
    return errors


# -- the pods it builds --------------------------------------------------------------------------------------------

def _group_params(group: dict, container: dict, node_type: str, head_address: str, autoscaler: bool) -> dict[str, str]:
    """rayStartParams after updateRayStartParamsResources, setMissingRayStartParams and generateRayStartCommand."""
    params = {k: str(v) for k, v in (group.get("rayStartParams") or {}).items()}
    custom = {}
    for name, value in (group.get("resources") or {}).items():
        lower = name.lower()
        if lower == "cpu":
            params["num-cpus"] = str(quantity_value(value))
        elif lower == "memory":
            params["memory"] = str(quantity_value(value))
        elif GPU_KEYS.match(lower):
            params["num-gpus"] = str(quantity_value(value))
        else:
            custom[name] = float(quantity(value))
    if custom:  # Go's json.Marshal of a map[string]float64: sorted keys, 4 not 4.0
        as_go = {k: int(v) if v == int(v) else v for k, v in sorted(custom.items())}
        params["resources"] = "'" + json.dumps(as_go, separators=(",", ":")) + "'"
    if node_type == "worker":
        params.setdefault("address", head_address)
    else:
        params.setdefault("dashboard-host", "0.0.0.0")
        if autoscaler:
            params["no-monitor"] = "true"
    params.setdefault("metrics-export-port", str(METRICS_PORT))
    params["block"] = "true"
    params.setdefault("dashboard-agent-listen-port", str(DASHBOARD_AGENT_LISTEN_PORT))
    limits, requests = container.get("resources", {}).get("limits", {}), container.get("resources", {}).get("requests", {})
    if "num-cpus" not in params and (cpu := limits.get("cpu") or requests.get("cpu")):
        params["num-cpus"] = str(quantity_value(cpu))
    if "memory" not in params and limits.get("memory"):
        params["memory"] = str(quantity_value(limits["memory"]))
    accelerators = [k for k in limits if GPU_KEYS.match(k) or k.startswith(("aws.amazon.com/", "google.com/tpu"))]
    assert not accelerators, f"accelerator resources {accelerators} would need addWellKnownAcceleratorResources"
    return params


def _flags(params: dict[str, str]) -> str:
    """convertParamMap: sorted --key=value, a true boolean as a bare --key, a false one left out."""
    out = []
    for key in sorted(params):
        value = params[key]
        if value.lower() in ("true", "false") and key not in ("log-color", "include-dashboard", "include-log-monitor"):
            if value.lower() == "true":
                out.append(f" --{key} ")
        else:
            out.append(f" --{key}={value} ")
    return "".join(out)


def ray_start(cluster: dict, group: dict | None, head_address: str) -> str:
    """The `ray start ...` command KubeRay generates for the head (``group`` None) or a worker group."""
    spec = cluster["headGroupSpec"] if group is None else group
    container = spec["template"]["spec"]["containers"][0]
    node_type = "head" if group is None else "worker"
    params = _group_params(spec, container, node_type, head_address, autoscaling(cluster))
    return ("ray start --head" if group is None else "ray start") + _flags(params)


def ray_container_command(cluster: dict, group: dict | None, head_address: str) -> tuple[list[str], list[str]]:
    """(command, args) of the Ray container: the user's command (if any) before KubeRay's `ulimit; ray start`."""
    container = (cluster["headGroupSpec"] if group is None else group)["template"]["spec"]["containers"][0]
    user = "".join(f" {part} " for part in [*container.get("command", []), *container.get("args", [])])
    generated = f"ulimit -n ${{RAY_START_ULIMIT_OPEN_FILES:-65536}}; {ray_start(cluster, group, head_address)}"
    assert "ray start" not in user, "a container command holding `ray start` is used as is; not modelled here"
    return ["/bin/bash", "-c", "--"], [f"{user} && {generated}" if user else generated]


def pod_labels(cluster_name: str, node_type: str, group_name: str) -> dict[str, str]:
    """The labels labelPod puts on a Ray pod (the ones its environment's fieldRefs read)."""
    return {"ray.io/cluster": cluster_name, "ray.io/node-type": node_type, "ray.io/group": group_name,
            "ray.io/is-ray-node": "yes", "app.kubernetes.io/created-by": "kuberay-operator"}


def ray_env(node_type: str, head_fqdn: str, start_command: str, v2: bool) -> list[dict]:
    """The variables setContainerEnvVars (and, for v2, setAutoscalerV2EnvVars) append to a Ray container."""
    ip = "127.0.0.1" if node_type == "head" else head_fqdn
    env = []
    if v2 and node_type == "head":
        env.append({"name": "RAY_enable_autoscaler_v2", "value": "true"})
    if node_type == "worker":
        env += [{"name": "FQ_RAY_IP", "value": head_fqdn}, {"name": "RAY_IP", "value": head_fqdn.split(".")[0]}]
    env += [
        {"name": "RAY_CLUSTER_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/cluster']"}}},
        {"name": "RAY_CLUSTER_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "RAY_CLOUD_INSTANCE_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "RAY_NODE_TYPE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['ray.io/group']"}}},
        {"name": "KUBERAY_GEN_RAY_START_CMD", "value": start_command},
        {"name": "RAY_PORT", "value": str(GCS_PORT)},
        {"name": "RAY_ADDRESS", "value": f"{ip}:{GCS_PORT}"},
        {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "1"},
        {"name": "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE", "value": "1"},
    ]
    return env


def token_env(secret: str) -> list[dict]:
    """SetContainerTokenAuthEnvVars with authOptions.mode token: the mode and the cluster Secret's token."""
    return [{"name": "RAY_AUTH_MODE", "value": "token"},
            {"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": "auth_token"}}}]


def submit_command(job: dict, dashboard: str, submission_id: str) -> tuple[list[str], list[str]]:
    """BuildJobSubmitCommand for K8sJobMode: wait for the dashboard, submit once (--no-wait), follow the logs."""
    address = dashboard if dashboard.startswith("http://") else "http://" + dashboard
    health = (f"python -c \"import urllib.request; r=urllib.request.urlopen('{address}/api/gcs_healthz', timeout=10); "
              f"exit(0 if b'success' in r.read() else 1)\"")
    parts = ["until", health, ">/dev/null", "2>&1", ";", "do", "echo",
             json.dumps(f"Waiting for Ray Dashboard GCS to become healthy at {address} ..."), ";", "sleep", "2", ";",
             "done", ";", "if", "!", "ray", "job", "status", "--address", address, submission_id, ">/dev/null", "2>&1",
             ";", "then", "ray", "job", "submit", "--address", address, "--no-wait", "--submission-id", submission_id,
             "--", job["spec"]["entrypoint"].strip(), ";", "fi", ";", "ray", "job", "logs", "--address", address,
             "--follow", submission_id]
    return ["/bin/bash", "-ce", "--"], [" ".join(parts)]


def submitter_env(dashboard: str, submission_id: str) -> list[dict]:
    return [{"name": "PYTHONUNBUFFERED", "value": "1"}, {"name": "RAY_DASHBOARD_ADDRESS", "value": dashboard},
            {"name": "RAY_JOB_SUBMISSION_ID", "value": submission_id}]
