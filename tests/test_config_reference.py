"""configs/default.yaml and docs/configuration.md are what the configuration models give, every key described."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel

from common.config import KilnConfig, load_config
from common.config_loader import validate
from common.errors import KilnError
from kiln import config_reference


def _sections(model: type[BaseModel], path: str = "") -> list[tuple[str, type[BaseModel]]]:
    found = [(path, model)]
    for name, field in model.model_fields.items():
        key = f"{path}.{name}" if path else name
        if sub := config_reference._nested(field):
            found += _sections(sub, key)
        elif sub := config_reference._entries(field):
            found += _sections(sub, f"{key}.*")
    return found


@pytest.mark.parametrize("path", [config_reference.DEFAULT_YAML, config_reference.REFERENCE], ids=lambda p: p.name)
def test_the_shipped_files_are_what_the_models_give(path: Path):
    rendered = {config_reference.DEFAULT_YAML: config_reference.render_default_yaml,
                config_reference.REFERENCE: config_reference.render_reference}[path]()
    assert path.read_text(encoding="utf-8") == rendered, (
        f"{path.name} is stale: run `.venv/bin/kiln config-reference` and commit it")


def test_the_default_yaml_loads_as_the_models_defaults():
    assert validate(KilnConfig, yaml.safe_load(config_reference.render_default_yaml())) == KilnConfig()


def test_every_key_and_section_is_described():
    undescribed = [f"{path}.{name}" if path else name
                   for path, model in _sections(KilnConfig) for name, field in model.model_fields.items()
                   if not field.description and config_reference._nested(field) is None]
    sections = [path for path, model in _sections(KilnConfig) if path and not model.__doc__]
    assert (undescribed, sections) == ([], [])


def test_every_key_appears_in_the_reference_with_its_default():
    text = config_reference.render_reference()
    assert "| `clean.lid.thresholds` | `dict[str, float]` | `{\"zh\": 0.5, \"en\": 0.65}` |" in text
    assert "| `tokenize.vocab_size` | `int (≥ 258, ≤ 65536)` | `32000` |" in text
    assert "Defined in `stages/dedup/config.py`." in text
    keys = [f"{path}.{name}" if path else name for path, model in _sections(KilnConfig)
            for name, field in model.model_fields.items() if config_reference._nested(field) is None]
    missing = [key for key in keys if f"`{key}`" not in text]
    assert missing == []


def test_check_refuses_a_stale_file_and_a_run_writes_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(config_reference, "DEFAULT_YAML", tmp_path / "configs" / "default.yaml")
    monkeypatch.setattr(config_reference, "REFERENCE", tmp_path / "docs" / "configuration.md")
    with pytest.raises(KilnError, match=r"default.yaml and .*configuration.md out of date: run `kiln config-ref"):
        config_reference.run(argparse.Namespace(check=True))
    assert config_reference.run(argparse.Namespace(check=False)) == 0
    assert config_reference.run(argparse.Namespace(check=True)) == 0
    assert load_config([tmp_path / "configs" / "default.yaml"]) == KilnConfig()
