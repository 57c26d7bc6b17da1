"""The data pipeline's configuration: :class:`KilnConfig` composes the section each part owns, next to its code
(a stage's in ``stages/<name>/config.py``, Ray's in common/ray_cluster.py, the demo corpus' in demo/config.py,
the ablation's in kiln/ablation/config.py), and :func:`load_config` reads configs/default.yaml, the ``--config``
layers and the ``--set`` overrides into it."""

from __future__ import annotations

from pathlib import Path

from common.config_loader import CONFIG_DIR, Section, load_layers
from common.ray_cluster import RayConfig
from demo.config import DemoConfig
from kiln.ablation.config import AblationConfig
from stages.clean.config import CleanConfig
from stages.dedup.config import DecontaminateConfig, DedupConfig
from stages.ingest.config import IngestConfig
from stages.mix.config import MixConfig
from stages.tokenize.config import TokenizeConfig

DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"


class KilnConfig(Section):
    """The data pipeline's configuration: one section per stage, Ray's, the demo corpus' and the ablation's."""

    data_dir: str = "data"
    """Root of a run on the shared volume; each stage writes <data_dir>/<stage>/."""
    ray: RayConfig = RayConfig()
    demo: DemoConfig = DemoConfig()
    ingest: IngestConfig = IngestConfig()
    clean: CleanConfig = CleanConfig()
    dedup: DedupConfig = DedupConfig()
    decontaminate: DecontaminateConfig = DecontaminateConfig()
    mix: MixConfig = MixConfig()
    tokenize: TokenizeConfig = TokenizeConfig()
    ablation: AblationConfig = AblationConfig()

    def section(self, name: str) -> Section:
        """Return the config section of one stage by name."""
        return getattr(self, name)


def load_config(paths: list[Path] | None = None, overrides: list[str] | None = None) -> KilnConfig:
    """Load configs/default.yaml, then each file in ``paths``, then ``--set`` overrides, and validate."""
    return load_layers(KilnConfig, [DEFAULT_CONFIG, *(paths or [])], overrides or [],
                       example="ingest.batch_rows=1024", hint="see configs/default.yaml for the valid keys",
                       whole={"source_categories", "default_url_categories"})

