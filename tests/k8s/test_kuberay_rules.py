"""The KubeRay 1.7 operator's own admission rules (ray.md; ray-operator/controllers/ray/utils/validation.go),
which the CRD schema does not express: every rendered RayJob passes them, and each rule is shown to refuse a
RayJob broken in just that way."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.k8s.kube import deep, find, render
from tests.k8s.kuberay import rayjob_violations


@pytest.fixture(scope="module")
def rayjobs() -> dict[str, dict]:
    return {job["metadata"]["name"]: job for job in find(render("data"), "RayJob")}


def test_every_rendered_rayjob_passes_the_operator_rules(rayjobs: dict[str, dict]):
    assert len(rayjobs) == 5
    for name, job in rayjobs.items():
        assert rayjob_violations(job) == [], name


def _cluster(job: dict) -> dict:
    return job["spec"]["rayClusterSpec"]


def _clean_group(job: dict) -> dict:
    return _cluster(job)["workerGroupSpecs"][0]


def _ttl_without_shutdown(job: dict) -> None:
    del job["spec"]["deletionStrategy"]
    job["spec"]["ttlSecondsAfterFinished"] = 600


def _rules_and_shutdown(job: dict) -> None:
    job["spec"]["shutdownAfterJobFinishes"] = True


def _delete_workers_with_autoscaling(job: dict) -> None:
    job["spec"]["deletionStrategy"]["deletionRules"].append(
        {"policy": "DeleteWorkers", "condition": {"jobStatus": "SUCCEEDED", "ttlSeconds": 0}})


def _suspend_without_shutdown(job: dict) -> None:
    job["spec"]["suspend"] = True


def _v2_head_restarts(job: dict) -> None:
    _cluster(job)["headGroupSpec"]["template"]["spec"]["restartPolicy"] = "OnFailure"


def _v2_worker_restarts(job: dict) -> None:
    _clean_group(job)["template"]["spec"]["restartPolicy"] = "Always"


def _resources_twice(job: dict) -> None:
    _clean_group(job)["rayStartParams"] = {"resources": '\'{"clean": 4}\''}


def _head_resources_twice(job: dict) -> None:
    _cluster(job)["headGroupSpec"]["resources"] = {"CPU": "0"}


def _token_without_version(job: dict) -> None:
    del _cluster(job)["rayVersion"]


def _token_with_old_ray(job: dict) -> None:
    _cluster(job)["rayVersion"] = "2.46.0"


def _fixed_group_without_bounds(job: dict) -> None:
    del _clean_group(job)["maxReplicas"]


def _min_above_max(job: dict) -> None:
    _clean_group(job)["minReplicas"] = 9


def _group_idle_timeout_without_v2(job: dict) -> None:
    _clean_group(job)["idleTimeoutSeconds"] = 30


def _version_twice(job: dict) -> None:
    head = _cluster(job)["headGroupSpec"]["template"]["spec"]["containers"][0]
    head.setdefault("env", []).append({"name": "RAY_enable_autoscaler_v2", "value": "true"})


def _long_name(job: dict) -> None:
    job["metadata"]["name"] = "kiln-" + "x" * 43


def _deadline_zero(job: dict) -> None:
    job["spec"]["activeDeadlineSeconds"] = 0


def _ttl_order(job: dict) -> None:
    job["spec"]["deletionStrategy"]["deletionRules"].append(
        {"policy": "DeleteSelf", "condition": {"jobStatus": "FAILED", "ttlSeconds": 60}})


def _duplicate_rule(job: dict) -> None:
    job["spec"]["deletionStrategy"]["deletionRules"].append(deep(job["spec"]["deletionStrategy"]["deletionRules"][0]))


def _two_conditions(job: dict) -> None:
    job["spec"]["deletionStrategy"]["deletionRules"][0]["condition"]["jobDeploymentStatus"] = "Complete"


def _labels_in_start_params(job: dict) -> None:
    _cluster(job)["headGroupSpec"]["rayStartParams"]["labels"] = "tier=head"


# (rule, the RayJob it breaks, how, what the operator says)
BROKEN: list[tuple[str, str, Callable[[dict], None], str]] = [
    ("ttlSecondsAfterFinished > 0 needs shutdownAfterJobFinishes", "kiln-ingest", _ttl_without_shutdown,
     "shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished"),
    ("deletionRules and shutdownAfterJobFinishes are mutually exclusive", "kiln-ingest", _rules_and_shutdown,
     "mutually exclusive"),
    ("DeleteWorkers is refused with autoscaling", "kiln-clean", _delete_workers_with_autoscaling,
     "'DeleteWorkers' not supported with autoscaling"),
    ("suspend needs shutdownAfterJobFinishes", "kiln-dedup", _suspend_without_shutdown,
     "not allowed to be suspended"),
    ("autoscaler v2: the head's restartPolicy is Never or unset", "kiln-clean", _v2_head_restarts,
     "restartPolicy for head Pod should be Never or unset"),
    ("autoscaler v2: a worker group's restartPolicy is Never or unset", "kiln-clean", _v2_worker_restarts,
     "restartPolicy for worker group clean should be Never or unset"),
    ("a group sets resources in rayStartParams or in resources, not both", "kiln-clean", _resources_twice,
     "should not be set in both rayStartParams and Resources for clean group"),
    ("the head too", "kiln-mix", _head_resources_twice, "both rayStartParams and Resources for Head group"),
    ("token auth needs rayVersion", "kiln-tokenize", _token_without_version, "RayVersion was not specified"),
    ("token auth needs Ray >= 2.52", "kiln-tokenize", _token_with_old_ray, "minimum Ray version is 2.52.0"),
    ("a group without autoscaling sets both bounds", "kiln-mix", lambda j: j["spec"]["rayClusterSpec"][
        "workerGroupSpecs"][0].pop("minReplicas"), "must set both minReplicas and maxReplicas"),
    ("the autoscaled group keeps minReplicas <= maxReplicas", "kiln-clean", _min_above_max,
     "minReplicas 9 greater than maxReplicas 8"),
    ("a group's idleTimeoutSeconds needs autoscaler v2", "kiln-dedup", _group_idle_timeout_without_v2,
     "idleTimeoutSeconds is set, but autoscaler v2 is not enabled"),
    ("autoscalerOptions.version and the head's RAY_enable_autoscaler_v2 are exclusive", "kiln-clean", _version_twice,
     "both .spec.autoscalerOptions.version and head Pod env var"),
    ("the RayJob's name fits the RayCluster names it makes", "kiln-ingest", _long_name, "no more than 47 characters"),
    ("activeDeadlineSeconds is positive", "kiln-ingest", _deadline_zero, "activeDeadlineSeconds must be a positive"),
    ("deletion TTLs grow Workers <= Cluster <= Self", "kiln-clean", _ttl_order, "DeleteSelf TTL (60) must be >="),
    ("one rule per (status, policy)", "kiln-ingest", _duplicate_rule, "duplicate rule for DeleteCluster"),
    ("a rule names jobStatus or jobDeploymentStatus, not both", "kiln-ingest", _two_conditions,
     "exactly one of JobStatus and JobDeploymentStatus"),
    ("rayStartParams has no labels", "kiln-ingest", _labels_in_start_params, "rayStartParams['labels']"),
]


def test_the_rules_of_ray_md_are_all_covered():
    rules = " | ".join(rule for rule, *_ in BROKEN)
    for words in ("ttlSecondsAfterFinished", "mutually exclusive", "DeleteWorkers", "suspend",
                  "restartPolicy", "resources in rayStartParams or in resources"):
        assert words in rules, words


@pytest.mark.parametrize(("rule", "name", "breaks", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_each_rule_refuses_a_rayjob_broken_that_way(rayjobs: dict[str, dict], rule: str, name: str,
                                                   breaks: Callable[[dict], None], message: str):
    job = deep(rayjobs[name])
    breaks(job)
    violations = rayjob_violations(job)
    assert any(message in v for v in violations), (rule, violations)
    assert rayjob_violations(rayjobs[name]) == []
