"""Rendered pod templates run as Docker containers, as the kubelet would run them on a node.

A pod is a "pause" container holding the pod's network identity (its IP on one Docker network standing
in for the cluster network, its hostname, and the DNS names a headless Service or KubeRay's head Service
would give it) plus one container per init container (run to completion, in order) and per container,
all in the pause container's network namespace. From the pod spec: the command and args over the image's
entrypoint, with Kubernetes' $(VAR) expansion; env with values, downward-API fieldRefs and resourceFieldRefs
resolved, Secret and ConfigMap keys; the security context (user, groups, fsGroup, read-only root,
no-new-privileges, capabilities); CPU and memory limits; volumes (a claim is a shared host folder, an
emptyDir a host folder of the pod, its sizeLimit not enforced, a ConfigMap its files, read-only). Not modelled: probes, service
links' variables, hostPath and device plugins (a pod asking for them is refused), image pulls, an emptyDir
of medium Memory shared between containers (each container gets its own tmpfs, sized by sizeLimit); the
open-files limit is the Docker engine's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.k8s.kube import NAMESPACE, quantity, quantity_value

_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' variable expansion: $(VAR) becomes its value when VAR is defined, $$ becomes $, and a
    reference to an undefined variable is left as it is."""
    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))

    return _REF.sub(one, text)


def _field_path(path: str, pod: Pod) -> str:
    quoted = re.match(r"metadata\.(labels|annotations)\['([^']+)'\]$", path)
    if quoted:
        table = pod.labels if quoted.group(1) == "labels" else pod.annotations
        return table.get(quoted.group(2), "")
    values = {"metadata.name": pod.name, "metadata.namespace": pod.namespace, "metadata.uid": pod.uid,
              "spec.nodeName": "node-" + pod.name, "spec.serviceAccountName": pod.spec.get("serviceAccountName",
                                                                                             "default"),
              "status.podIP": pod.ip, "status.podIPs": pod.ip, "status.hostIP": pod.host_ip}
    if path not in values:
        raise AssertionError(f"fieldRef {path} is not a downward-API field this runner knows")
    return values[path]


def _resource_field(ref: dict, container: dict) -> str:
    part, _, resource = ref["resource"].partition(".")
    value = container.get("resources", {}).get(part, {}).get(resource)
    if value is None:
        raise AssertionError(f"resourceFieldRef {ref['resource']}: the container sets no {part} for {resource}")
    divisor = quantity(ref.get("divisor", "1"))
    return str(quantity_value(quantity(value) / divisor))


@dataclass
class Pod:
    """One pod: its metadata, its spec after the controller's changes, and its containers once started."""

    name: str
    spec: dict
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    hostname: str | None = None
    aliases: tuple[str, ...] = ()
    namespace: str = NAMESPACE
    uid: str = field(default_factory=lambda: str(uuid.uuid4()))
    ip: str = ""
    host_ip: str = ""
    pause: str = ""
    containers: dict[str, str] = field(default_factory=dict)
    init_logs: dict[str, str] = field(default_factory=dict)


class PodRunner:
    """Start pods on one Docker network; ``claims`` maps a PersistentVolumeClaim's name to the host folder that
    stands for it, ``objects`` holds the rendered ConfigMaps, ``secrets`` name -> key -> value."""

    def __init__(self, docker: str, scratch: Path, objects: Sequence[dict] = (),
                 claims: Mapping[str, Path] | None = None, secrets: Mapping[str, Mapping[str, str]] | None = None):
        self.docker = docker
        self.scratch = scratch
        self.run_id = uuid.uuid4().hex[:8]
        self.network = f"kiln-k8s-{self.run_id}"
        self.claims = dict(claims or {})
        self.secrets = {name: dict(data) for name, data in (secrets or {}).items()}
        self.configmaps = {o["metadata"]["name"]: o.get("data", {}) for o in objects if o["kind"] == "ConfigMap"}
        self._volumes: list[str] = []
        self._containers: list[str] = []
        self._docker("network", "create", "--label", f"kiln.k8s-test={self.run_id}", self.network)

    # -- plumbing ------------------------------------------------------------------------------------------------

    def _docker(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        result = subprocess.run([self.docker, *args], capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"docker {' '.join(args[:3])} ... exited {result.returncode}: {result.stderr[-2000:]}")
        return result

    def __enter__(self) -> PodRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove every container, volume and the network this runner made."""
        if self._containers:
            self._docker("rm", "-f", "-v", *self._containers, check=False, timeout=300)
        if self._volumes:
            self._docker("volume", "rm", "-f", *self._volumes, check=False)
        self._docker("network", "rm", self.network, check=False)
        self._containers, self._volumes = [], []

    # -- environment ---------------------------------------------------------------------------------------------

    def environment(self, pod: Pod, container: dict) -> dict[str, str]:
        """The container's environment as the kubelet builds it: envFrom, then env in order, each value
        expanded against the variables defined before it."""
        env: dict[str, str] = {}
        for source in container.get("envFrom", []):
            prefix = source.get("prefix", "")
            if "configMapRef" in source:
                env.update({prefix + k: v for k, v in self.configmaps[source["configMapRef"]["name"]].items()})
            elif "secretRef" in source:
                env.update({prefix + k: v for k, v in self.secrets[source["secretRef"]["name"]].items()})
        for var in container.get("env", []):
            if "value" in var:
                value = expand(str(var["value"]), env)
            elif "valueFrom" in var:
                source = var["valueFrom"]
                if "fieldRef" in source:
                    value = _field_path(source["fieldRef"]["fieldPath"], pod)
                elif "resourceFieldRef" in source:
                    value = _resource_field(source["resourceFieldRef"], container)
                elif "secretKeyRef" in source:
                    ref = source["secretKeyRef"]
                    value = self.secrets[ref["name"]][ref["key"]]
                elif "configMapKeyRef" in source:
                    ref = source["configMapKeyRef"]
                    value = self.configmaps[ref["name"]][ref["key"]]
                else:
                    raise AssertionError(f"env {var['name']}: valueFrom {sorted(source)} is not modelled")
            else:
                value = ""
            env[var["name"]] = value
        return env

    # -- volumes -------------------------------------------------------------------------------------------------

    def _pod_volumes(self, pod: Pod) -> dict[str, tuple[str, bool]]:
        """volume name -> (docker -v source, read-only)."""
        out = {}
        for volume in pod.spec.get("volumes", []):
            name = volume["name"]
            if "persistentVolumeClaim" in volume:
                claim = volume["persistentVolumeClaim"]["claimName"]
                out[name] = (str(self.claims[claim]), bool(volume["persistentVolumeClaim"].get("readOnly")))
            elif "emptyDir" in volume and volume["emptyDir"].get("medium") != "Memory":
                # The kubelet's emptyDir: a folder on the node's disk that every container of the pod
                # sees, init containers included (a tmpfs Docker volume would be a new one per container).
                folder = self.scratch / f"{pod.name}-{name}"
                folder.mkdir(parents=True)
                os.chmod(folder, 0o1777)
                out[name] = (str(folder), False)
            elif "emptyDir" in volume:
                size = volume["emptyDir"].get("sizeLimit")
                size_bytes = quantity_value(size) if size else 8 * 2**30  # a cap, not a reservation
                docker_volume = f"{pod.name}-{name}-{self.run_id}"
                self._docker("volume", "create", "--label", f"kiln.k8s-test={self.run_id}", "--driver", "local",
                             "--opt", "type=tmpfs", "--opt", "device=tmpfs", "--opt", f"o=size={size_bytes},mode=1777",
                             docker_volume)
                self._volumes.append(docker_volume)
                out[name] = (docker_volume, False)
            elif "configMap" in volume:
                folder = self.scratch / f"{pod.name}-{name}"
                folder.mkdir(parents=True)
                data = self.configmaps[volume["configMap"]["name"]]
                items = volume["configMap"].get("items") or [{"key": k, "path": k} for k in data]
                for item in items:
                    (folder / item["path"]).write_text(data[item["key"]], encoding="utf-8")
                os.chmod(folder, 0o755)
                for path in folder.iterdir():
                    os.chmod(path, 0o644)
                out[name] = (str(folder), True)
            else:
                raise AssertionError(f"volume {name}: {sorted(set(volume) - {'name'})} has no stand-in on this machine")
        return out

    # -- containers ----------------------------------------------------------------------------------------------

    def _run_args(self, pod: Pod, container: dict, volumes: dict[str, tuple[str, bool]], network: str) -> list[str]:
        pod_sc, sc = pod.spec.get("securityContext", {}), container.get("securityContext", {})
        if sc.get("privileged"):
            raise AssertionError(f"{container['name']}: privileged containers are not run here")
        args = ["run", "-d", "--name", f"{pod.name}-{container['name']}-{self.run_id}", "--network", network,
                "--label", f"kiln.k8s-test={self.run_id}"]
        uid, gid = sc.get("runAsUser", pod_sc.get("runAsUser")), sc.get("runAsGroup", pod_sc.get("runAsGroup"))
        if uid is not None:
            args += ["--user", f"{uid}:{gid}" if gid is not None else str(uid)]
        non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if non_root:
            effective = uid if uid is not None else self._image_user(container["image"])
            if effective in (None, 0, "0", "root", ""):
                raise AssertionError(f"{container['name']}: runAsNonRoot, but it would run as root")
        for group in [*pod_sc.get("supplementalGroups", []), *([pod_sc["fsGroup"]] if "fsGroup" in pod_sc else [])]:
            args += ["--group-add", str(group)]
        if sc.get("readOnlyRootFilesystem"):
            args.append("--read-only")
        if sc.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        for cap in sc.get("capabilities", {}).get("drop", []):
            args += ["--cap-drop", cap]
        for cap in sc.get("capabilities", {}).get("add", []):
            args += ["--cap-add", cap]
        limits = container.get("resources", {}).get("limits", {})
        extended = [k for k in [*limits, *container.get("resources", {}).get("requests", {})] if "/" in k]
        if extended:
            raise AssertionError(f"{container['name']}: asks for {extended}, which no device plugin offers here")
        if "memory" in limits:
            args += ["--memory", str(quantity_value(limits["memory"]))]
        if "cpu" in limits:
            args += ["--cpus", str(min(float(quantity(limits["cpu"])), float(os.cpu_count() or 1)))]
        for mount in container.get("volumeMounts", []):
            if mount.get("subPath"):
                raise AssertionError(f"{container['name']}: subPath mounts are not modelled")
            source, read_only = volumes[mount["name"]]
            ro = read_only or mount.get("readOnly", False)
            args += ["-v", f"{source}:{mount['mountPath']}{':ro' if ro else ''}"]
        if container.get("workingDir"):
            args += ["--workdir", container["workingDir"]]
        return args

    def _image_user(self, image: str) -> str:
        return self._docker("image", "inspect", "-f", "{{.Config.User}}", image).stdout.strip().split(":")[0]

    def command_line(self, container: dict, env: Mapping[str, str]) -> list[str]:
        """The image and its arguments for `docker run`: command replaces the image's entrypoint, args its CMD."""
        command = [expand(part, env) for part in container.get("command", [])]
        args = [expand(part, env) for part in container.get("args", [])]
        if command:
            return ["--entrypoint", command[0], container["image"], *command[1:], *args]
        return [container["image"], *args]

    def _start_container(self, pod: Pod, container: dict, volumes: dict, network: str) -> str:
        env = self.environment(pod, container)
        args = self._run_args(pod, container, volumes, network)
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        self._containers.append(args[args.index("--name") + 1])  # removed by close() even if it never starts
        return self._docker(*args, *self.command_line(container, env)).stdout.strip()

    def start(self, pod: Pod, init_timeout: float = 600) -> Pod:
        """Create the pod's network identity, run its init containers to completion, then start its containers."""
        first_image = pod.spec["containers"][0]["image"]
        pause = [*(["--hostname", pod.hostname] if pod.hostname else [])]
        for alias in pod.aliases:
            pause += ["--network-alias", alias]
        pause_name = f"{pod.name}-pause-{self.run_id}"
        self._containers.append(pause_name)
        cid = self._docker("run", "-d", "--name", pause_name, "--network", self.network, "--label",
                           f"kiln.k8s-test={self.run_id}", *pause, "--entrypoint", "sleep", first_image,
                           "infinity").stdout.strip()
        pod.pause = pause_name
        pod.ip = self._docker("inspect", "-f", f'{{{{(index .NetworkSettings.Networks "{self.network}").IPAddress}}}}',
                              cid).stdout.strip()
        pod.host_ip = self._docker("network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}",
                                   self.network).stdout.strip()
        volumes = self._pod_volumes(pod)
        shared = f"container:{pause_name}"
        for init in pod.spec.get("initContainers", []):
            icid = self._start_container(pod, init, volumes, shared)
            code = int(self._docker("wait", icid, timeout=init_timeout).stdout.strip())
            pod.init_logs[init["name"]] = self.logs(icid)
            if code != 0:
                raise AssertionError(f"pod {pod.name}: init container {init['name']} exited {code}:\n"
                                     f"{pod.init_logs[init['name']][-4000:]}")
        for container in pod.spec["containers"]:
            pod.containers[container["name"]] = self._start_container(pod, container, volumes, shared)
        return pod

    def logs(self, cid: str) -> str:
        result = self._docker("logs", cid, check=False)
        return result.stdout + result.stderr

    def wait(self, pod: Pod, timeout: float) -> dict[str, int]:
        """Each container's exit status, once all have exited (AssertionError with their logs at the timeout)."""
        deadline = time.monotonic() + timeout
        codes: dict[str, int] = {}
        for name, cid in pod.containers.items():
            left = max(1.0, deadline - time.monotonic())
            try:
                codes[name] = int(self._docker("wait", cid, timeout=left).stdout.strip())
            except subprocess.TimeoutExpired:
                raise AssertionError(f"pod {pod.name}: {name} still runs after {timeout:.0f} s:\n"
                                     f"{self.logs(cid)[-4000:]}") from None
        return codes

    def remove(self, pod: Pod) -> None:
        """The pod is gone (deleted, or replaced after it failed): its containers, its IP and its DNS names."""
        names = [n for n in self._containers if n.startswith(f"{pod.name}-") and n.endswith(f"-{self.run_id}")]
        self._docker("rm", "-f", "-v", *names, check=False, timeout=300)
        self._containers = [n for n in self._containers if n not in names]
        pod.containers = {}

    def running(self, pod: Pod) -> bool:
        return any(self._docker("inspect", "-f", "{{.State.Running}}", cid).stdout.strip() == "true"
                   for cid in pod.containers.values())

    def stop(self, pods: list[Pod]) -> None:
        """What the kubelet does to a pod that is deleted or preempted: SIGTERM to every container, then SIGKILL
        after the pod's terminationGracePeriodSeconds (default 30), all pods at once."""
        procs = [subprocess.Popen([self.docker, "stop", "-t", str(pod.spec.get("terminationGracePeriodSeconds", 30)),
                                   *pod.containers.values()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for pod in pods]
        for proc in procs:
            proc.wait(timeout=max(pod.spec.get("terminationGracePeriodSeconds", 30) for pod in pods) + 60)

    def exec(self, pod: Pod, container: str, *command: str,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run a command in a running container of the pod (its environment, plus ``env``)."""
        extra = [arg for key, value in (env or {}).items() for arg in ("-e", f"{key}={value}")]
        return self._docker("exec", *extra, pod.containers[container], *command, check=False)


def shared_folder(path: Path, uid: int = 1000, gid: int = 1000) -> Path:
    """A host folder standing in for the ReadWriteMany claim: writable by the pods' user, as the volume's
    fsGroup ownership makes it on a cluster."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o777)
    if os.geteuid() == 0:
        shutil.chown(path, uid, gid)
    return path
