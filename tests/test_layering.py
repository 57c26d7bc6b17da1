"""The house rules of imports: common/ is the ground floor, each stage stands alone, kiln/ sits on top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from common.pipeline import STAGE_ORDER

REPO = Path(__file__).resolve().parent.parent
DATA_STAGES = STAGE_ORDER
# The modules whose sections common/config.py composes into KilnConfig: each part's next to its code.
SECTION_MODULES = (*(f"stages.{name}.config" for name in STAGE_ORDER), "kiln.ablation.config", "demo.config")
# The runner of map stages, split by concern, in its one-way order: each module imports only those before it.
RUNNER_MODULES = ("common.units", "common.tasks", "common.resume", "common.stage_stats", "common.runner")
RUNNER_MODULE_MAX_LINES = 300


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _files(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


def _offending(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(REPO)} imports {module}"
        for path in paths
        for module in sorted(imported_modules(path))
        if any(module == f or module.startswith(f + ".") for f in forbidden)
    ]


def test_import_scanner_sees_function_level_and_relative_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    sample = tmp_path / "pkg" / "sub" / "mod.py"
    sample.parent.mkdir(parents=True)
    sample.write_text("def f():\n    from stages.eval import x\nfrom . import sibling\nfrom ..up import y\n")
    assert {"stages.eval", "stages.eval.x", "pkg.sub", "pkg.sub.sibling", "pkg.up", "pkg.up.y"} <= imported_modules(sample)


def test_common_imports_no_stage_no_kiln_no_demo_but_the_config_sections_it_composes():
    composer = REPO / "common" / "config.py"
    assert _offending([f for f in _files("common") if f != composer], ("stages", "kiln", "demo")) == []
    outside = {m for m in imported_modules(composer) if m.split(".")[0] in ("stages", "kiln", "demo")}
    assert {m.rsplit(".", 1)[0] if m not in SECTION_MODULES else m for m in outside} == set(SECTION_MODULES)


@pytest.mark.parametrize("module", SECTION_MODULES)
def test_a_config_section_module_imports_only_common(module: str):
    assert _offending([_module_file(module)], ("stages", "kiln", "demo")) == []


def test_the_trainer_reads_its_sections_without_the_data_pipelines_config():
    assert _offending([*_files("stages/train"), *_files("stages/eval")], ("common.config", "common.runner")) == []


def _module_file(module: str) -> Path:
    return REPO / (module.replace(".", "/") + ".py")


@pytest.mark.parametrize("position", range(len(RUNNER_MODULES)), ids=RUNNER_MODULES)
def test_the_runner_modules_import_one_way(position: int):
    assert _offending([_module_file(RUNNER_MODULES[position])], RUNNER_MODULES[position + 1:]) == []


def test_the_runner_builds_on_its_parts():
    assert set(RUNNER_MODULES[:-1]) <= imported_modules(_module_file("common.runner"))


@pytest.mark.parametrize("module", RUNNER_MODULES)
def test_a_runner_module_stays_small(module: str):
    lines = len(_module_file(module).read_text(encoding="utf-8").splitlines())
    assert lines <= RUNNER_MODULE_MAX_LINES, f"{module} has {lines} lines"


def test_demo_corpus_uses_only_common():
    assert _offending(_files("demo"), ("stages", "kiln")) == []


@pytest.mark.parametrize("stage", DATA_STAGES)
def test_a_data_stage_imports_no_other_stage(stage: str):
    others = tuple(f"stages.{name}" for name in (*DATA_STAGES, "train", "eval") if name != stage)
    assert _offending(_files(f"stages/{stage}"), (*others, "kiln", "demo")) == []


def test_train_imports_nothing_from_eval_or_the_data_stages():
    data = tuple(f"stages.{name}" for name in DATA_STAGES)
    assert _offending(_files("stages/train"), ("stages.eval", *data, "kiln", "demo")) == []


def test_eval_uses_train_but_no_data_stage():
    data = tuple(f"stages.{name}" for name in DATA_STAGES)
    assert _offending(_files("stages/eval"), (*data, "kiln", "demo")) == []
