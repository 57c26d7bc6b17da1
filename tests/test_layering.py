"""The house rules of imports: common/ is the ground floor, each stage stands alone, kiln/ sits on top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA_STAGES = ("ingest", "clean", "dedup", "mix", "tokenize")


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


def test_common_imports_no_stage_no_kiln_no_demo():
    assert _offending(_files("common"), ("stages", "kiln", "demo")) == []


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
