"""Every place that names the data stages agrees with their one declaration, common/pipeline.py STAGES."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from common.config import KilnConfig
from common.pipeline import STAGE_ORDER, STAGES, StageSpec, input_stage_of, stage_spec
from tests.test_layering import SECTION_MODULES

REPO = Path(__file__).resolve().parent.parent
# Images built beside the stages' (the trainer's); the CI matrix and the bake file list them after the stages.
TRAINER_IMAGES = ("train-cpu",)


def _make_variable(name: str) -> list[str]:
    match = re.search(rf"^{name}\s*:?=\s*(.*)$", (REPO / "Makefile").read_text(), re.M)
    assert match, f"Makefile sets no {name}"
    return match.group(1).split()


def test_the_order_reads_each_stage_from_the_one_before():
    assert [s.input for s in STAGES] == [None, *STAGE_ORDER[:-1]]
    assert input_stage_of("dedup") == "clean"
    with pytest.raises(ValueError, match="'train' is not a data stage; the pipeline is ingest -> clean"):
        stage_spec("train")


def test_kiln_run_runs_each_declared_stage_package_in_order():
    from kiln.pipeline import pipeline_stages

    assert [stage.name for stage in pipeline_stages()] == list(STAGE_ORDER)
    assert all(importlib.util.find_spec(f"{stage.module}.__main__") for stage in STAGES)


@pytest.mark.parametrize("stage", STAGES, ids=STAGE_ORDER)
def test_each_stage_owns_its_config_section(stage: StageSpec):
    section = KilnConfig.model_fields[stage.name].annotation
    assert section.__module__ == f"{stage.module}.config"


@pytest.mark.parametrize("stage", STAGES, ids=STAGE_ORDER)
def test_each_stage_image_runs_its_module_with_its_declared_requirements(stage: StageSpec):
    dockerfile = (REPO / "stages" / stage.name / "Dockerfile").read_text()
    assert f'ENTRYPOINT ["python", "-m", "{stage.module}"]' in dockerfile
    assert f'org.opencontainers.image.title="kiln-{stage.image}"' in dockerfile
    assert f'org.opencontainers.image.description="Kiln {stage.name} stage: {stage.summary}"' in dockerfile
    lock = f"requirements/images/{stage.name}.lock"
    assert (lock in dockerfile, (REPO / lock).is_file()) == (stage.image_requirements, stage.image_requirements)


@pytest.mark.parametrize("dockerfile", sorted(REPO.glob("stages/*/Dockerfile")), ids=lambda path: path.parent.name)
def test_every_image_that_carries_kiln_carries_what_its_configuration_composes(dockerfile: Path):
    text = dockerfile.read_text()
    composed = {module.split(".")[0] for module in SECTION_MODULES}  # the packages KilnConfig's sections live in
    if "COPY kiln kiln\n" in text:
        assert [p for p in sorted({"configs", "common", *composed}) if f"COPY {p} {p}\n" not in text] == []


def test_the_makefile_builds_and_chains_every_stage_image():
    assert _make_variable("STAGE_IMAGES") == [s.image for s in STAGES]
    chain = _make_variable("COMPOSE_CHAIN")
    assert [name for name in chain if name in STAGE_ORDER] == list(STAGE_ORDER)


def test_compose_runs_every_stage_after_the_one_before():
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    for stage in STAGES:
        service = services[stage.name]
        assert service["image"] == f"${{KILN_IMAGE_PREFIX:-kiln}}/{stage.image}:${{KILN_TAG:-latest}}"
        assert service["build"]["dockerfile"] == f"stages/{stage.name}/Dockerfile"
        if stage.input:
            assert stage.input in service["depends_on"], stage.name


def test_the_bake_file_and_the_ci_matrix_build_every_stage():
    bake = (REPO / ".github" / "docker-bake.hcl").read_text()
    matrix = re.search(r'matrix\s*=\s*\{\s*stage\s*=\s*\[([^\]]*)\]', bake).group(1)
    assert re.findall(r'"([^"]+)"', matrix) == list(STAGE_ORDER)
    default = re.search(r'group "default" \{\s*targets\s*=\s*\[([^\]]*)\]', bake).group(1)
    assert re.findall(r'"([^"]+)"', default) == [*STAGE_ORDER, *TRAINER_IMAGES]
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "images.yml").read_text())
    assert workflow["jobs"]["stages"]["strategy"]["matrix"]["target"] == [*STAGE_ORDER, *TRAINER_IMAGES]


def test_the_kubernetes_pipeline_runs_every_stage_on_its_image_in_order():
    pipeline = REPO / "k8s" / "pipeline"
    assert yaml.safe_load((pipeline / "kustomization.yaml").read_text())["resources"] == ["../base", *STAGE_ORDER]
    for stage in STAGES:
        kustomization = (pipeline / stage.name / "kustomization.yaml").read_text()
        assert f"newName: kiln/{stage.image}}}" in kustomization, stage.name
        assert f"value: python -m {stage.module} --data-dir /data" in kustomization, stage.name
        assert f"app.kubernetes.io/component: {stage.name}" in kustomization, stage.name
    script = (REPO / "k8s" / "run-data.sh").read_text()
    assert re.search(r"^STAGES=\((.*)\)$", script, re.M).group(1).split() == list(STAGE_ORDER)

