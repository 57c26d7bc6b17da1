"""The demo corpus' configuration section."""

from __future__ import annotations

from pydantic import Field

from common.config_loader import Section


class DemoConfig(Section):
    """The built-in demo corpus that `make data` writes when no INPUT is given."""

    n_docs: int = Field(default=20000, ge=50)
    """Records the built-in demo corpus generator writes (`make data` with no INPUT)."""
    seed: int = 1234
    """Seed of the demo corpus: the same seed and size give byte-identical files."""
