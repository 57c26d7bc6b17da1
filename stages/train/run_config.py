"""The whole trainer configuration: one YAML file with model/optim/train/health/parallel sections, plus overrides."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from common.errors import ConfigError
from stages.train.config import ModelConfig, OptimConfig, TrainConfig, from_dict
from stages.train.health import HealthConfig
from stages.train.parallel import ParallelConfig

SECTIONS: dict[str, type] = {
    "model": ModelConfig,
    "optim": OptimConfig,
    "train": TrainConfig,
    "health": HealthConfig,
    "parallel": ParallelConfig,
}


@dataclass(frozen=True)
class TrainerConfig:
    """Every section of a training run, each a typed, validated dataclass."""

    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    health: HealthConfig = field(default_factory=HealthConfig)
    parallel: ParallelConfig = field(default_factory=ParallelConfig)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def with_vocab_size(self, vocab_size: int) -> TrainerConfig:
        """The same configuration for a tokenizer of ``vocab_size`` ids (read from the packed tokens' meta.json)."""
        return replace(self, model=replace(self.model, vocab_size=vocab_size))

    def fingerprint(self) -> str:
        """sha256 of what a resume must not change: model, optimizer, schedule length, batch, seq_len and seed."""
        data = {k: getattr(self.train, k) for k in ("steps", "global_batch", "seq_len", "seed")}
        material = {"model": asdict(self.model), "optim": asdict(self.optim), "data": data}
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def _parse_override(text: str) -> tuple[str, str, Any]:
    """``section.key=value`` with the value read as YAML (``8``, ``3e-4``, ``null``, ``swiglu``)."""
    name, sep, raw = text.partition("=")
    section, dot, key = name.strip().partition(".")
    if not sep or not dot or not key:
        raise ConfigError(f"--set {text!r}: expected section.key=value, e.g. train.steps=100")
    if section not in SECTIONS:
        raise ConfigError(f"--set {text!r}: unknown section {section!r} (known: {', '.join(SECTIONS)})")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {text!r}: value is not valid YAML ({err})") from None
    return section, key, value


def read_sections(path: Path | None) -> dict[str, dict[str, Any]]:
    """The sections of a trainer YAML file ({} for None), refusing unknown sections."""
    if path is None:
        return {}
    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read ({err})") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: expected a mapping of sections ({', '.join(SECTIONS)})")
    unknown = sorted(set(loaded) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{path}: unknown sections {unknown} (known: {', '.join(SECTIONS)})")
    for name, values in loaded.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: section {name!r} must be a mapping")
    return loaded


def load_trainer_config(path: Path | None = None, overrides: list[str] | tuple[str, ...] = ()) -> TrainerConfig:
    """Dataclass defaults, then the YAML file, then ``--set section.key=value`` overrides; errors name the file."""
    sections = {name: dict(values) for name, values in read_sections(path).items()}
    for text in overrides:
        section, key, value = _parse_override(text)
        sections.setdefault(section, {})[key] = value
    where = f" (in {path})" if path else ""
    built = {}
    for name, cls in SECTIONS.items():
        try:
            built[name] = from_dict(cls, name, sections.get(name, {}))
        except TypeError as err:
            raise ConfigError(f"{name}: {err}{where}") from None
        except ConfigError as err:
            raise ConfigError(f"{err}{where}") from None
    return TrainerConfig(**built)
