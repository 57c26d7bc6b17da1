"""The pods each controller would make of a rendered object, for tests that have no API server: the Job
controller's Indexed Job pods, KubeRay's RayJob pods (head, worker groups, submitter) and MindCluster's
AscendJob pods, each with the names, labels, annotations and environment that controller adds."""

from __future__ import annotations

import secrets

from tests.k8s import kuberay
from tests.k8s.kube import NAMESPACE, containers, deep
from tests.k8s.pods import Pod

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


def _suffix() -> str:
    return secrets.token_hex(3)[:5]


def _selects(service: dict, labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in service["spec"].get("selector", {}).items())


# -- batch/v1 Indexed Job --------------------------------------------------------------------------------------------

def indexed_job_pod(job: dict, index: int, service: dict | None) -> Pod:
    """Pod ``index`` of an Indexed Job: hostname <job>-<index>, JOB_COMPLETION_INDEX from its annotation, and
    the <hostname>.<subdomain> names when a headless Service of that name selects it."""
    name, spec = job["metadata"]["name"], job["spec"]
    assert spec.get("completionMode") == "Indexed" and 0 <= index < spec["completions"]
    template = deep(spec["template"])
    pod_spec = template["spec"]
    for container in containers(pod_spec):
        if not any(v["name"] == "JOB_COMPLETION_INDEX" for v in container.get("env", [])):
            container.setdefault("env", []).append({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}}})
    labels = {**template.get("metadata", {}).get("labels", {}), "batch.kubernetes.io/job-name": name,
              "job-name": name, INDEX_ANNOTATION: str(index)}
    hostname = f"{name}-{index}"
    aliases: tuple[str, ...] = ()
    subdomain = pod_spec.get("subdomain")
    if subdomain and service is not None and service["metadata"]["name"] == subdomain and _selects(service, labels):
        namespace = job["metadata"].get("namespace", NAMESPACE)
        aliases = (f"{hostname}.{subdomain}", f"{hostname}.{subdomain}.{namespace}.svc.cluster.local")
    return Pod(name=f"{hostname}-{_suffix()}", spec=pod_spec, labels=labels,
               annotations={**template.get("metadata", {}).get("annotations", {}), INDEX_ANNOTATION: str(index)},
               hostname=hostname, aliases=aliases)


# -- MindCluster AscendJob (ascend-operator, setMindSporeEnv) --------------------------------------------------------

SCHED_PORT_NAME = "ascendjob-port"


def _ascend_container(template: dict) -> dict:
    return next(c for c in template["spec"]["containers"] if c["name"] == "ascend")


def ascendjob_pod(job: dict, rtype: str, index: int, npus_per_pod: int, scheduler_ip: str | None) -> Pod:
    """The pod the ascend-operator makes for replica ``index`` of ``rtype`` (Scheduler or Worker). It appends
    to the `ascend` container: MS_SCHED_HOST (the Scheduler's own pod IP there, the scheduler's address
    elsewhere), MS_LOCAL_WORKER (NPUs per Worker pod), MS_WORKER_NUM (that times the Worker pods), MS_NODE_RANK,
    MS_SCHED_PORT (the Scheduler's ascendjob-port), MS_SERVER_NUM=0, MS_ROLE, and ASCEND_VISIBLE_DEVICES from
    the device plugin's annotation when the pod asks for NPUs. ``npus_per_pod`` is the per-pod NPU count the
    operator reads from the Worker's requests."""
    name, spec = job["metadata"]["name"], job["spec"]
    replicas = spec["replicaSpecs"]
    template = deep(replicas[rtype]["template"])
    container = _ascend_container(template)
    port = next(p["containerPort"] for p in _ascend_container(replicas["Scheduler"]["template"]).get("ports", [])
                if p.get("name") == SCHED_PORT_NAME)
    workers = replicas["Worker"].get("replicas", 1)
    env = container.setdefault("env", [])
    if any(key.startswith("huawei.com/") for key in container.get("resources", {}).get("requests", {})):
        resource = next(k for k in container["resources"]["requests"] if k.startswith("huawei.com/"))
        env.append({"name": "ASCEND_VISIBLE_DEVICES", "valueFrom": {"fieldRef": {
            "fieldPath": f"metadata.annotations['{resource}']"}}})
    if rtype == "Scheduler":
        env.append({"name": "MS_SCHED_HOST", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
    else:
        assert scheduler_ip, "the Worker pods need the scheduler's address"
        env.append({"name": "MS_SCHED_HOST", "value": scheduler_ip})
    env += [{"name": "MS_LOCAL_WORKER", "value": str(npus_per_pod)},
            {"name": "MS_WORKER_NUM", "value": str(npus_per_pod * workers)},
            {"name": "MS_NODE_RANK", "value": str(index)},
            {"name": "MS_SCHED_PORT", "value": str(port)},
            {"name": "MS_SERVER_NUM", "value": "0"},
            {"name": "MS_ROLE", "value": "MS_SCHED" if rtype == "Scheduler" else "MS_WORKER"}]
    labels = {**template.get("metadata", {}).get("labels", {}), "job-name": name,
              "replica-type": rtype.lower(), "replica-index": str(index)}
    pod_name = f"{name}-{rtype.lower()}-{index}"
    return Pod(name=pod_name, spec=template["spec"], labels=labels,
               annotations=dict(template.get("metadata", {}).get("annotations", {})), hostname=pod_name)


# -- KubeRay RayJob --------------------------------------------------------------------------------------------------

class RayJobPods:
    """The RayCluster a RayJob makes (named <rayjob>-<random>, with its token Secret) and its pods."""

    def __init__(self, job: dict):
        self.job = job
        self.name = job["metadata"]["name"]
        self.namespace = job["metadata"].get("namespace", NAMESPACE)
        self.cluster = job["spec"]["rayClusterSpec"]
        self.cluster_name = f"{self.name}-{_suffix()}"
        self.head_service = f"{self.cluster_name}-head-svc"
        self.head_fqdn = f"{self.head_service}.{self.namespace}.svc.cluster.local"
        self.job_service = f"{self.name}-head-svc"
        self.dashboard = f"{self.head_fqdn}:{kuberay.DASHBOARD_PORT}"
        self.submission_id = f"{self.name}-{_suffix()}"
        self.token = secrets.token_hex(32)
        self.v2 = kuberay.autoscaler_v2(self.cluster)
        self.auth = (self.cluster.get("authOptions") or {}).get("mode") == "token"

    @property
    def secrets(self) -> dict[str, dict[str, str]]:
        """The Secret KubeRay makes for token auth (named after the cluster, key auth_token)."""
        return {self.cluster_name: {"auth_token": self.token}} if self.auth else {}

    def _ray_pod(self, group: dict | None, index: int) -> Pod:
        spec = self.cluster["headGroupSpec"] if group is None else group
        node_type = "head" if group is None else "worker"
        group_name = "headgroup" if group is None else group["groupName"]
        template = deep(spec["template"])
        pod_spec = template["spec"]
        ray_container = pod_spec["containers"][0]
        wait_gcs = self._wait_gcs_ready(ray_container) if group is not None else None
        address = f"{self.head_fqdn}:{kuberay.GCS_PORT}"
        command, args = kuberay.ray_container_command(self.cluster, group, address)
        start = kuberay.ray_start(self.cluster, group, address)
        ray_container["command"], ray_container["args"] = command, args
        extra = kuberay.ray_env(node_type, self.head_fqdn, start, self.v2)
        if self.auth:
            extra += kuberay.token_env(self.cluster_name)
        given = {e["name"] for e in ray_container.get("env", [])}
        ray_container.setdefault("env", []).extend(v for v in extra if v["name"] not in given)
        for init in pod_spec.get("initContainers", []):
            init.setdefault("env", []).extend([{"name": "FQ_RAY_IP", "value": self.head_fqdn if group else ""},
                                                {"name": "RAY_IP", "value": self.head_service if group else ""}])
        if wait_gcs is not None:
            pod_spec.setdefault("initContainers", []).append(wait_gcs)
        if self.v2:
            pod_spec["restartPolicy"] = "Never"
        labels = {**template.get("metadata", {}).get("labels", {}),
                  **kuberay.pod_labels(self.cluster_name, node_type, group_name)}
        pod_name = (f"{self.cluster_name}-head" if group is None
                    else f"{self.cluster_name}-{group_name}-worker-{index}-{_suffix()}")
        aliases = (self.head_service, self.head_fqdn, self.job_service,
                   f"{self.job_service}.{self.namespace}.svc.cluster.local") if group is None else ()
        return Pod(name=pod_name, spec=pod_spec, labels=labels, hostname=pod_name[:63], aliases=aliases,
                   namespace=self.namespace)

    def _wait_gcs_ready(self, ray_container: dict) -> dict:
        """The init container KubeRay adds to every worker (from the template's Ray container, before KubeRay's
        own variables, plus the token): wait until the head's GCS answers."""
        address = f"{self.head_fqdn}:{kuberay.GCS_PORT}"
        script = f"""
					SECONDS=0
					while true; do
						if (( SECONDS <= 120 )); then
							if ray health-check --address {address} > /dev/null 2>&1; then
								echo "GCS is ready."
								break
							fi
							echo "$SECONDS seconds elapsed: Waiting for GCS to be ready."
						else
							if ray health-check --address {address}; then
								echo "GCS is ready. Any error messages above can be safely ignored."
								break
							fi
							echo "$SECONDS seconds elapsed: Still waiting for GCS to be ready."
						fi
						sleep 5
					done
				"""
        env = deep(ray_container).get("env", [])
        env += [{"name": "FQ_RAY_IP", "value": self.head_fqdn}, {"name": "RAY_IP", "value": self.head_service}]
        if self.auth:
            env += kuberay.token_env(self.cluster_name)
        return {"name": "wait-gcs-ready", "image": ray_container["image"], "command": ["/bin/bash", "-c", "--"],
                "args": [script], "securityContext": deep(ray_container.get("securityContext", {})), "env": env,
                "volumeMounts": deep(ray_container.get("volumeMounts", [])),
                "resources": {"limits": {"cpu": "200m", "memory": "256Mi"},
                              "requests": {"cpu": "200m", "memory": "256Mi"}}}

    def head(self) -> Pod:
        return self._ray_pod(None, 0)

    def worker(self, group_name: str, index: int) -> Pod:
        group = next(g for g in self.cluster["workerGroupSpecs"] if g["groupName"] == group_name)
        return self._ray_pod(group, index)

    def submitter(self) -> Pod:
        """The K8sJobMode submitter: the user's template with KubeRay's `ray job submit` command and env."""
        template = deep(self.job["spec"]["submitterPodTemplate"])
        container = template["spec"]["containers"][0]
        if not container.get("command"):
            container["command"], container["args"] = kuberay.submit_command(self.job, self.dashboard,
                                                                             self.submission_id)
        env = container.setdefault("env", [])
        env += kuberay.submitter_env(self.dashboard, self.submission_id)
        if self.auth:
            env += [v for v in kuberay.token_env(self.cluster_name) if not any(e["name"] == v["name"] for e in env)]
        labels = {**template.get("metadata", {}).get("labels", {}), "ray.io/originated-from-cr-name": self.name,
                  "ray.io/originated-from-crd": "RayJob"}
        pod_name = f"{self.name}-{_suffix()}"
        return Pod(name=pod_name, spec=template["spec"], labels=labels, hostname=pod_name, namespace=self.namespace)
