"""Each stage image as a user meets it: non-root, no compiler or pip cache, only its stage's
dependencies, and a working --help."""

from __future__ import annotations

import pytest

from common.pipeline import STAGE_ORDER
from tests.containers.conftest import run

STAGES = (*STAGE_ORDER, "train-cpu")
# module -> the images that must (True) or must not (False) be able to import it
DEPENDENCIES = {
    "fasttext": {"clean": True, "dedup": False, "ingest": False, "mix": False, "tokenize": False},
    "tokenizers": {"tokenize": True, "clean": False, "dedup": False},
    "xxhash": {"dedup": True, "clean": False},
    "pyarrow": {"ingest": True, "train-cpu": False},
    "mindspore": {"train-cpu": True, "tokenize": False},
}


def _sh(docker: str, image: str, script: str, user: str | None = None) -> str:
    extra = ["--user", user] if user else []
    return run(docker, "run", "--rm", *extra, "--entrypoint", "sh", image, "-c", script).stdout.strip()


@pytest.mark.parametrize("stage", STAGES)
def test_the_image_runs_as_uid_1000_and_owns_data(docker: str, images: dict[str, str], stage: str):
    assert _sh(docker, images[stage], "id -u; id -g; stat -c %u /data") == "1000\n1000\n1000"


@pytest.mark.parametrize("stage", STAGES)
def test_no_compiler_and_no_pip_cache_in_the_final_image(docker: str, images: dict[str, str], stage: str):
    found = _sh(docker, images[stage],
                "for c in gcc g++ cc c++ clang; do command -v $c; done; "
                "ls -d /root/.cache/pip /home/kiln/.cache/pip 2>/dev/null; true", user="0")
    assert found == ""


@pytest.mark.parametrize("stage", STAGES)
def test_help_works_in_the_container(docker: str, images: dict[str, str], stage: str):
    result = run(docker, "run", "--rm", images[stage], "--help")
    assert "usage:" in result.stdout


@pytest.mark.parametrize(("module", "stage", "present"),
                         [(m, s, p) for m, per in DEPENDENCIES.items() for s, p in per.items()])
def test_each_image_carries_only_its_stage_dependencies(docker: str, images: dict[str, str], module: str,
                                                        stage: str, present: bool):
    result = run(docker, "run", "--rm", "--entrypoint", "python", images[stage], "-c", f"import {module}",
                 check=False)
    assert (result.returncode == 0) == present, result.stderr[-500:]


def test_the_clean_image_carries_the_language_id_model(docker: str, images: dict[str, str]):
    probe = ("from stages.clean.lid import identify; "
             "print(identify(['The quick brown fox jumps over the lazy dog.'], None)[0])")
    result = run(docker, "run", "--rm", "--network", "none", "--entrypoint", "python", images["clean"], "-c", probe)
    assert "en" in result.stdout


def test_the_trainer_image_has_numpy_below_2(docker: str, images: dict[str, str]):
    result = run(docker, "run", "--rm", "--entrypoint", "python", images["train-cpu"], "-c",
                 "import numpy; print(numpy.__version__)")
    assert int(result.stdout.split(".")[0]) < 2
