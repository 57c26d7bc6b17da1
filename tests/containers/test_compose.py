"""The pipeline as a compose chain on one volume gives make data's tokens, byte for byte; clean run
as a Ray job on two compose workers gives the chain's clean shards; a malformed line in the user's
input is counted, not a failed container."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pyarrow as pa
import pytest

from common.manifest import require_manifest
from common.shards import iter_batches
from tests.conftest import cli
from tests.containers.conftest import compose_cli, run

DEMO_DOCS = "1500"
BAD_LINE = '{"id": "broken", "text": "an unterminated record'
TOKEN_FILES = ("train.bin", "train.idx", "validation.bin", "validation.idx", "meta.json", "tokenizer.json")


def _compose_env(input_dir: Path) -> dict[str, str]:
    return {**os.environ, "KILN_TAG": "latest", "INPUT_DIR": str(input_dir), "KILN_INPUT": "/input",
            "KILN_CONFIG": "configs/demo.yaml", "TRAIN_STEPS": "3"}


def _copy_volume(docker: str, project: str, image: str, out: Path) -> Path:
    """Copy a compose project's kiln-data volume to ``out`` (the files a user would find on it)."""
    out.mkdir(parents=True)
    run(docker, "run", "--rm", "--user", "0", "--network", "none", "-v", f"{project}_kiln-data:/data:ro",
        "-v", f"{out}:/out", "--entrypoint", "sh", image, "-c", "cp -r /data/. /out/ && chmod -R a+rX /out")
    return out


def _down(project: str, env: dict[str, str]) -> None:
    run(*compose_cli(), "-p", project, "--profile", "ray", "down", "-v", "--remove-orphans", env=env, check=False)


@pytest.fixture(scope="module")
def user_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's input folder: the demo corpus plus a file with one good and one malformed line."""
    root = tmp_path_factory.mktemp("compose")
    cli("-m", "kiln", "demo", str(root / "demo"), "--docs", DEMO_DOCS)
    input_dir = root / "input"
    shutil.copytree(root / "demo" / "corpus", input_dir)
    extra = input_dir / "user_extra"
    extra.mkdir()
    good = json.dumps({"id": "fine", "text": "A sentence that is long enough to be a real document. " * 8})
    (extra / "bad.jsonl").write_text(good + "\n" + BAD_LINE + "\n", encoding="utf-8")
    input_dir.chmod(0o755)
    return input_dir


@pytest.fixture(scope="module")
def host_run(user_input: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make data` outside containers on the same input and settings."""
    data = tmp_path_factory.mktemp("host") / "data"
    cli("-m", "kiln", "run", "--input", str(user_input), "--config", "configs/demo.yaml", "--data-dir", str(data),
        timeout=900)
    return data


@pytest.fixture(scope="module")
def chain(docker: str, images: dict[str, str], user_input: Path, tmp_path_factory: pytest.TempPathFactory):
    """`make compose-data` on the user's input: the volume's files after the chain."""
    project = f"kilntest{uuid.uuid4().hex[:8]}"
    env = _compose_env(user_input)
    try:
        result = run("make", "compose-data", f"DOCKER={docker}", f"COMPOSE={' '.join(compose_cli())} -p {project}", env=env)
        assert "every service of the chain exited 0" in result.stdout
        assert "tokenize  done" in result.stdout
        yield _copy_volume(docker, project, images["ingest"], tmp_path_factory.mktemp("chain") / "data")
    finally:
        _down(project, env)


def test_compose_tokens_are_byte_identical_to_make_data(chain: Path, host_run: Path):
    for name in TOKEN_FILES:
        assert (chain / "tokenize" / name).read_bytes() == (host_run / "tokenize" / name).read_bytes(), name


def test_the_chain_trained_the_cpu_trainer_on_the_volume(chain: Path):
    assert (chain / "train" / "checkpoints" / "latest" / "model.safetensors").exists()
    steps = [json.loads(line)["step"] for line in (chain / "train" / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 3


def test_a_malformed_input_line_is_counted_by_ingest(chain: Path, host_run: Path):
    accounting = require_manifest(chain / "ingest").accounting
    assert accounting == require_manifest(host_run / "ingest").accounting
    manifest = require_manifest(chain / "ingest")
    locations = [loc for info in manifest.excluded["bad_json"]
                 for batch in iter_batches(chain / "ingest", info) for loc in batch.column("location").to_pylist()]
    assert any("user_extra/bad.jsonl" in str(loc) and str(loc).endswith(":2") for loc in locations), locations[:5]


def test_clean_as_a_ray_job_on_two_compose_workers_gives_the_same_shards(
        docker: str, images: dict[str, str], user_input: Path, chain: Path, tmp_path: Path):
    project = f"kilnray{uuid.uuid4().hex[:8]}"
    env = _compose_env(user_input)
    compose = (*compose_cli(), "-p", project)
    try:
        run(*compose, "up", "--no-build", "init", "demo", "ingest", env=env)
        run(*compose, "--profile", "ray", "up", "-d", "--no-build", "--scale", "clean-worker=2",
            "ray-head", "clean-worker", env=env)
        submitted = run(*compose, "--profile", "ray", "run", "--rm", "clean-submit", env=env)
        assert "succeeded" in (submitted.stdout + submitted.stderr).lower()
        nodes = run(*compose, "exec", "-T", "ray-head", "ray", "status", env=env).stdout
        assert nodes.count("node_") >= 3, nodes  # the head and both clean workers
        ray_run = _copy_volume(docker, project, images["ingest"], tmp_path / "data")
    finally:
        _down(project, env)
    manifest = require_manifest(chain / "clean")
    names = ["_manifest.json", *(info.path for info in manifest.shards)]
    names += [info.path for infos in manifest.excluded.values() for info in infos]
    for name in names:
        assert (ray_run / "clean" / name).read_bytes() == (chain / "clean" / name).read_bytes(), name
    assert pa.ipc.open_file(str(ray_run / "clean" / manifest.shards[0].path)).num_record_batches >= 1


def test_the_ascend_image_smoke_build_trains_a_few_cpu_steps(docker: str, base_image: str, chain: Path,
                                                              tmp_path: Path):
    """Dockerfile.ascend built on the Python base instead of CANN: Kiln runs from its installed package
    with the configs in /opt/kiln, the same trainer trains on CPU, and kiln doctor passes there with the
    Ascend checks marked as not applying."""
    run("make", "image-ascend-smoke", f"DOCKER={docker}", f"BASE_IMAGE={base_image}", "IMAGE_PREFIX=kiln")
    image = next(line.split()[0] + ":" + line.split()[1] for line in run(
        docker, "images", "kiln/train-ascend-smoke", "--format", "{{.Repository}} {{.Tag}}").stdout.splitlines())
    where = run(docker, "run", "--rm", "--network", "none", image, "python", "-c",
                "import stages.train, common.config_loader as c; print(stages.train.__file__, (c.CONFIG_DIR / 'train-cpu.yaml').is_file())")
    assert where.stdout.split() == ["/opt/venv/lib/python3.11/site-packages/stages/train/__init__.py", "True"]
    data = tmp_path / "data"
    shutil.copytree(chain / "tokenize", data / "tokenize")
    run("chmod", "-R", "a+rwX", str(tmp_path))
    trained = run(docker, "run", "--rm", "--network", "none", "-v", f"{data}:/data", image,
                  "python", "-m", "stages.train", "--data-dir", "/data", "--config", "configs/train-cpu.yaml",
                  "--set", "train.steps=2")
    assert "done: steps 0..2 of 2" in trained.stdout + trained.stderr
    assert (data / "train" / "checkpoints" / "latest" / "model.safetensors").exists()
    assert run(docker, "run", "--rm", "--entrypoint", "id", image, "-u").stdout.strip() == "1000"
    doctor = run(docker, "run", "--rm", "--network", "none", "-v", f"{data}:/data", image,
                 "python", "-m", "kiln", "doctor", "--data-dir", "/data", "--config", "configs/train-cpu.yaml")
    assert "do not apply" in doctor.stdout and ", 0 fail," in doctor.stdout, doctor.stdout
