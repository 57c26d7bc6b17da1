"""The data stages, declared once: their order, code, image, inputs, outputs and the Ray resource they ask for.

Everything else that names the stages (the `kiln` CLI, the Makefile's image targets, the compose services,
the bake file, the CI image matrix, the Kubernetes pipeline and k8s/run-data.sh) is generated from
:data:`STAGES` or checked against it by tests/test_stage_registry.py.
"""

from __future__ import annotations

from dataclasses import dataclass

# a stage folder is finished when it holds this file (common/manifest.py writes and reads it)
MANIFEST_NAME = "_manifest.json"


@dataclass(frozen=True)
class StageSpec:
    """One data stage: it reads the output folder of the stage before it and writes ``<data_dir>/<name>/``."""

    name: str
    summary: str
    """What the stage does, in one line (its image's description)."""
    outputs: tuple[str, ...] = ()
    """Named outputs its manifest lists besides the document (or token) shards and the drop reasons."""
    image_requirements: bool = False
    """Whether its image installs requirements/images/<name>.lock on top of the shared base image."""
    ray_resource: str | None = None
    """The custom Ray resource its work units ask for by default (the default of ray.stage_resources)."""

    @property
    def module(self) -> str:
        """The package run as ``python -m <module>`` (its image's entrypoint)."""
        return f"stages.{self.name}"

    @property
    def image(self) -> str:
        """The image name under IMAGE_PREFIX (``kiln/<image>``)."""
        return self.name

    @property
    def input(self) -> str | None:
        """The stage whose output this one reads (None for the first)."""
        return input_stage_of(self.name)


STAGES: tuple[StageSpec, ...] = (
    StageSpec("ingest", "raw files on the shared volume -> Arrow document shards"),
    StageSpec("clean", "ftfy repair, timestamp scrubbing, fastText language ID and quality rules",
              outputs=("_removed_lines", "_pii", "pii"), image_requirements=True, ray_resource="clean"),
    StageSpec("dedup", "exact and MinHash-LSH near-duplicate removal, then benchmark decontamination",
              outputs=("decontamination", "_excised"), image_requirements=True),
    StageSpec("mix", "validation split and category-balanced sampling", outputs=("validation", "summary", "classifier")),
    StageSpec("tokenize", "byte-level BPE and the packed uint16 token streams",
              outputs=("train", "validation", "meta", "tokenizer"), image_requirements=True),
)
STAGE_ORDER = tuple(stage.name for stage in STAGES)


def stage_spec(name: str) -> StageSpec:
    """The declaration of stage ``name``."""
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise ValueError(f"{name!r} is not a data stage; the pipeline is {' -> '.join(STAGE_ORDER)}")


def input_stage_of(name: str) -> str | None:
    """The stage whose output ``name`` reads (None for the first stage)."""
    index = STAGE_ORDER.index(stage_spec(name).name)
    return STAGE_ORDER[index - 1] if index else None
