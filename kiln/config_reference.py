"""`kiln config-reference`: configs/default.yaml and docs/configuration.md, written from the configuration models.

Every key of :class:`common.config.KilnConfig` with its default and description (the field's docstring):
in the YAML file as comments above each key, in the reference as one table per section (with the type and
bounds), each section named with the module that owns it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import textwrap
import types
import typing
from pathlib import Path

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from common.config_loader import CONFIG_DIR, REPO_ROOT
from common.errors import KilnError

HELP = "write configs/default.yaml and docs/configuration.md from the configuration models"
DESCRIPTION = ("Write configs/default.yaml (every key with its default, its description as a comment) and "
               "docs/configuration.md (every key with its type, default and description, one table per section) "
               "from the pydantic models of the configuration, where each field's docstring is its description. "
               "With --check, write nothing and exit 1 when either file differs from what the models give.")
REFERENCE = REPO_ROOT / "docs" / "configuration.md"
DEFAULT_YAML = CONFIG_DIR / "default.yaml"
YAML_WIDTH = 100
YAML_HEADER = """\
# Kiln configuration: every key with its default, written by `kiln config-reference` from the
# configuration models (docs/configuration.md gives each key's type). Layer your own YAML on top
# with `--config my.yaml` (only the keys you change), or change one key with `--set key=value`.
# An unknown key or a value of the wrong type is an error naming the key and the file.
"""
LONG_DEFAULT = 62
"""Defaults longer than this (characters of JSON) are listed below their section's table."""

INTRO = """\
# Configuration reference

Every key of Kiln's data pipeline configuration, with its type, default and description. This page is
written by `kiln config-reference` from the configuration models (each stage's section lives next to its
code, in `stages/<stage>/config.py`); a test fails when it is out of date.

`configs/default.yaml` holds every key with its default. A run layers your own YAML files over it with
`--config FILE` (only the keys you change; `make data CONFIG=FILE`), then single keys with
`--set KEY=VALUE` (for example `--set clean.lid.thresholds.en=0.7`; `make data ARGS="--set ..."`).
An unknown key or a value of the wrong type is an error naming the key and the file that set it.
A rerun with the same configuration resumes; a changed one needs `--force`.
"""


def _type_name(annotation: object) -> str:
    """A field's type as a reader writes it: ``int | null``, ``dict[str, float]``, ``"auto" | "hf"``."""
    if annotation is type(None):
        return "null"
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(value) for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(arg) for arg in typing.get_args(annotation))}]"
    return getattr(annotation, "__name__", str(annotation))


BOUNDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<", "min_length": "length ≥"}


def _bounds(field: FieldInfo) -> str:
    """The bounds a field's value must keep (``≥ 1``, ``> 0, ≤ 1``), or ''."""
    return ", ".join(f"{mark} {getattr(constraint, name)}" for constraint in field.metadata
                     for name, mark in BOUNDS.items() if hasattr(constraint, name))


def _nested(field: FieldInfo) -> type[BaseModel] | None:
    """The section a field holds whole (``clean.lid``), or None."""
    annotation = field.annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _entries(field: FieldInfo) -> type[BaseModel] | None:
    """The section each value of a ``dict[str, Section]`` field is (``clean.rules.<name>``), or None."""
    if typing.get_origin(field.annotation) is dict:
        value = typing.get_args(field.annotation)[1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value
    return None


def _default(field: FieldInfo) -> object:
    """A field's default as plain data (its sections dumped)."""
    value = field.get_default(call_default_factory=True)
    if isinstance(value, dict):
        return {key: item.model_dump(mode="json", exclude_defaults=True) if isinstance(item, BaseModel) else item
                for key, item in value.items()}
    return value


def _entry_notes(field: FieldInfo) -> dict[str, str]:
    """Notes on the shipped entries of a dict field (``clean.rules``: what each rule catches), if any."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    return dict(extra.get("entry_notes", {}))


# --- docs/configuration.md ------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _owner(model: type[BaseModel]) -> str:
    return Path(inspect.getsourcefile(model)).resolve().relative_to(REPO_ROOT).as_posix()


def _anchor(key: str) -> str:
    return "".join(ch for ch in key.lower() if ch.isalnum() or ch in "-_")


def _long_default(key: str, field: FieldInfo, default: object) -> list[str]:
    """A default too long for its table cell: a table of the entries' notes, or the YAML in a fold."""
    if notes := _entry_notes(field):
        rows = [f"| `{name}` | `{_cell(json.dumps(value, ensure_ascii=False))}` | {_cell(notes.get(name, ''))} |"
                for name, value in default.items()]
        return ["", f"Default of `{key}`:", "", "| Name | Value | What it does |", "| --- | --- | --- |", *rows]
    return ["", "<details>", f"<summary>Default of <code>{key}</code></summary>", "", "```yaml",
            yaml.safe_dump(default, allow_unicode=True, sort_keys=False, width=YAML_WIDTH).rstrip(), "```", "",
            "</details>"]


def _section_markdown(path: str, model: type[BaseModel], level: int) -> list[str]:
    """The heading, description and key table of one section, then its long defaults and its subsections."""
    lines = [f"{'#' * level} {path}", "", f"Defined in `{_owner(model)}`. {_cell(inspect.getdoc(model) or '')}", "",
             "| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    after: list[str] = []
    subsections: list[tuple[str, type[BaseModel]]] = []
    for name, field in model.model_fields.items():
        key = f"{path}.{name}"
        kind = _type_name(field.annotation) + (f" ({bounds})" if (bounds := _bounds(field)) else "")
        description = field.description or ""
        if sub := _nested(field):
            subsections.append((key, sub))
            shown, description = f"see [{key}](#{_anchor(key)})", inspect.getdoc(sub) or ""
        elif field.is_required():
            shown = "required"
        else:
            default = _default(field)
            shown = f"`{json.dumps(default, ensure_ascii=False)}`"
            if len(shown) > LONG_DEFAULT:
                after += _long_default(key, field, default)
                shown = f"{len(default)} entries, listed below"
        if entries := _entries(field):
            subsections.append((f"{key}.*", entries))
        lines.append(f"| `{key}` | `{_cell(kind)}` | {_cell(shown)} | {_cell(description)} |")
    lines += after
    for key, sub in subsections:
        lines += ["", *_section_markdown(key, sub, min(level + 1, 4))]
    return lines


def render_reference() -> str:
    """docs/configuration.md as the models give it."""
    from common.config import KilnConfig

    lines = [INTRO, "## Top level", "", "| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for name, field in KilnConfig.model_fields.items():
        if not _nested(field):
            lines.append(f"| `{name}` | `{_type_name(field.annotation)}` | "
                         f"`{json.dumps(_default(field))}` | {_cell(field.description or '')} |")
    for name, field in KilnConfig.model_fields.items():
        if sub := _nested(field):
            lines += ["", *_section_markdown(name, sub, 2)]
    return "\n".join(lines) + "\n"


# --- configs/default.yaml -------------------------------------------------------------------------------------


def _comment(text: str, indent: str) -> list[str]:
    width = YAML_WIDTH - len(indent) - 2
    return [f"{indent}# {line}" for line in textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)]


def _yaml_key(key: str, value: object, indent: str) -> list[str]:
    """``key: value`` on one line when it fits, else a block mapping or a wrapped flow list."""
    line = yaml.safe_dump({key: value}, default_flow_style=True, allow_unicode=True, sort_keys=False,
                          width=1 << 20).strip()[1:-1]
    if len(indent) + len(line) <= YAML_WIDTH or not isinstance(value, dict | list):
        return [indent + line]
    style = isinstance(value, list)
    text = yaml.safe_dump(value, default_flow_style=style, allow_unicode=True, sort_keys=False,
                          width=YAML_WIDTH - len(indent) - 2)
    if style:
        first, *rest = text.rstrip().splitlines()
        return [f"{indent}{key}: {first}", *(f"{indent}  {part.strip()}" for part in rest)]
    return [f"{indent}{key}:", *(f"{indent}  {part}" for part in text.rstrip().splitlines())]


def _section_yaml(model: type[BaseModel], indent: str) -> list[str]:
    """Every key of one section with its description as a comment above it."""
    lines: list[str] = []
    for name, field in model.model_fields.items():
        sub = _nested(field)
        description = inspect.getdoc(sub) if sub else field.description
        lines += _comment(description or "", indent)
        if sub:
            lines += [f"{indent}{name}:", *_section_yaml(sub, indent + "  ")]
            continue
        default = _default(field)
        notes = _entry_notes(field)
        if notes and isinstance(default, dict) and default:
            lines.append(f"{indent}{name}:")
            for entry, value in default.items():
                lines += _comment(notes.get(entry, ""), indent + "  ") + _yaml_key(entry, value, indent + "  ")
        else:
            lines += _yaml_key(name, default, indent)
    return lines


def render_default_yaml() -> str:
    """configs/default.yaml as the models give it: every key, its default, its description."""
    from common.config import KilnConfig

    lines = [YAML_HEADER.rstrip()]
    for name, field in KilnConfig.model_fields.items():
        lines.append("")
        if sub := _nested(field):
            lines += _comment(inspect.getdoc(sub) or "", "") + [f"{name}:", *_section_yaml(sub, "  ")]
        else:
            lines += _comment(field.description or "", "") + _yaml_key(name, _default(field), "")
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln config-reference`."""
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a file differs from what the models give")


def run(args: argparse.Namespace) -> int:
    """Write (or check) configs/default.yaml and docs/configuration.md."""
    files = {DEFAULT_YAML: render_default_yaml(), REFERENCE: render_reference()}
    if args.check:
        stale = [str(path) for path, text in files.items()
                 if not path.exists() or path.read_text(encoding="utf-8") != text]
        if stale:
            raise KilnError(f"{' and '.join(stale)} out of date: run `kiln config-reference` and commit the result")
        print("configs/default.yaml and docs/configuration.md are up to date")
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0
