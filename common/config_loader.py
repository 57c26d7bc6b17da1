"""Typed config sections and their loader: strict pydantic sections, YAML layers and ``--set`` overrides,
errors naming key and file.

Every section (a stage's, the trainer's) derives from :class:`Section`; a field's docstring is its
description (``kiln config-reference`` prints it in docs/configuration.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from common.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parent.parent
# The shipped configs: the repository's configs/, or KILN_CONFIG_DIR where Kiln is installed as a package
# (Dockerfile.ascend: the wheel in site-packages, configs/ in /opt/kiln).
CONFIG_DIR = Path(os.environ.get("KILN_CONFIG_DIR") or REPO_ROOT / "configs")
DEFAULT_CONFIG = CONFIG_DIR / "default.yaml"


class Section(BaseModel):
    """Base for every config section: unknown keys are errors, values are type-checked strictly, and a
    field's docstring is its description."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, use_attribute_docstrings=True)
    def replace(self, **changes: Any) -> Self:
        """A validated copy with ``changes``."""
        return self.model_validate({**dict(self), **changes})


M = TypeVar("M", bound=BaseModel)


def known_signal(signal: str, known: Sequence[str]) -> str:
    """``signal`` when it is one of the ``known`` columns, else a ValueError listing them."""
    if signal not in known:
        raise ValueError(f"unknown signal {signal!r} (known: {', '.join(known)})")
    return signal


FieldName = Annotated[str, Field(min_length=1)]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]


def _merge(base: dict, layer: dict, origin: str, origins: dict[str, str], whole: Collection[str],
           prefix: str = "") -> None:
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        below = base.get(key)
        if isinstance(value, dict) and below is not None and not isinstance(below, dict):
            raise ConfigError(f"invalid configuration:\n  {origins.get(dotted, 'defaults')}: {dotted}: "
                              f"expected a mapping of keys, got {below!r} ({origin} sets keys inside it)")
        if isinstance(value, dict) and isinstance(below, dict) and key not in whole:
            _merge(below, value, origin, origins, whole, dotted + ".")
        else:
            base[key] = value
            origins[dotted] = origin


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}")
    return data


def _parse_override(text: str, example: str) -> dict:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE, e.g. --set {example}")
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {text!r}: the value is not valid YAML ({err})") from None
    node: dict = {}
    cursor = node
    parts = key.split(".")
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = value
    return node


def _origin_of(loc: tuple, origins: Mapping[str, str], where: str) -> str:
    """The layer that set the key at ``loc`` (or the mapping above it) and, for an error about a whole
    mapping, the layers that set keys inside it; ``where`` when no layer did."""
    parts = [str(p) for p in loc]
    setters: dict[str, None] = {}
    for end in range(len(parts), 0, -1):
        if (above := ".".join(parts[:end])) in origins:
            setters[origins[above]] = None
            break
    inside = ".".join(parts) + "." if parts else ""
    setters.update(dict.fromkeys(origin for key, origin in origins.items() if key.startswith(inside)))
    return ", ".join(setters) or where


def _message(problem: Mapping[str, Any], hint: str | None) -> str:
    """Pydantic's message for one problem: a validator's own text, and the rejected value when it is a scalar."""
    if problem["type"] == "extra_forbidden":
        return f"unknown key ({hint})" if hint else "unknown key"
    message = str(problem["ctx"]["error"]) if problem["type"] == "value_error" else problem["msg"]
    value = problem.get("input")
    if problem["type"] != "missing" and (value is None or isinstance(value, str | int | float)):
        message += f", got {value!r}"
    return message


def validate(model: type[M], data: dict, origins: Mapping[str, str] | None = None, *, where: str = "defaults",
             hint: str | None = None) -> M:
    """``model`` built from ``data``, or a ConfigError with one line per problem: ``origin: key: message``.

    ``origins`` maps dotted keys to the layer that set them (``where`` for the rest); ``hint`` follows
    "unknown key" (where to look up the valid keys).
    """
    try:
        return model.model_validate(data)
    except ValidationError as err:
        lines = [f"{_origin_of(problem['loc'], origins or {}, where)}: "
                 f"{'.'.join(str(p) for p in problem['loc']) or '<top level>'}: {_message(problem, hint)}"
                 for problem in err.errors()]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines)) from None


def load_layers(model: type[M], paths: Sequence[Path], overrides: Sequence[str], *, example: str,
                hint: str | None = None, whole: Collection[str] = ()) -> M:
    """Merge the YAML files ``paths`` in order, then the ``--set KEY=VALUE`` ``overrides``, and validate.

    Later layers win key by key; a mapping merges into the one below it unless its key is in ``whole``.
    Errors name each bad key and the file or override that set it; ``example`` is an override shown
    when one is malformed.
    """
    merged: dict = {}
    origins: dict[str, str] = {}
    for path in paths:
        _merge(merged, _read_yaml(Path(path)), str(path), origins, whole)
    for text in overrides:
        _merge(merged, _parse_override(text, example), f"--set {text}", origins, whole)
    return validate(model, merged, origins, hint=hint)


def fingerprint(payload: Any) -> str:
    """Stable sha256 of a JSON-serialisable payload (sorted keys), used to key resume state."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
