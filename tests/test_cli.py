"""The `kiln` command: one module per subcommand, each with its help, options and run; in the trainer's
environment (no pyarrow) `kiln run` and `kiln ablate` are listed and fail saying so, and `kiln doctor` runs."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
from pathlib import Path

import pytest

from common.pipeline import STAGE_ORDER
from kiln.cli import COMMANDS, build_parser
from tests.conftest import cli

REPO = Path(__file__).resolve().parent.parent
TRAIN_PYTHON = REPO / ".venv-train" / "bin" / "python"


TAKE_A_FOLDER = ("status", "demo", "devset", "eval-truth", "report")


@pytest.mark.parametrize("name", COMMANDS)
def test_every_subcommand_is_a_module_with_help_options_and_run(name: str) -> None:
    module = importlib.import_module(COMMANDS[name])
    assert isinstance(module.HELP, str) and module.HELP
    args = build_parser().parse_args([name, "folder"] if name in TAKE_A_FOLDER else [name])
    assert args.func is module.run


def test_the_kiln_parser_imports_no_stage_code_but_config_sections_so_every_stage_image_runs_kiln() -> None:
    probe = ("import sys, kiln.cli; kiln.cli.build_parser(); "
             "print(sorted(m for m in sys.modules if m.startswith('stages')))")
    imported = set(ast.literal_eval(cli("-c", probe).stdout.strip()))
    sections = {"stages", *(f"stages.{name}" for name in STAGE_ORDER), *(f"stages.{name}.config" for name in STAGE_ORDER)}
    assert imported <= sections, imported - sections


def trainer_kiln(*args: str) -> subprocess.CompletedProcess:
    if not TRAIN_PYTHON.exists():
        pytest.skip("the trainer's environment (.venv-train) is not built: make train-venv")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run([str(TRAIN_PYTHON), "-m", "kiln", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("command", ["run", "ablate"])
def test_in_the_trainer_environment_the_data_commands_say_they_need_the_data_environment(command: str,
                                                                                         tmp_path: Path) -> None:
    result = trainer_kiln(command, "--demo", "--data-dir", str(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (f"error: `kiln {command}` needs pyarrow, which this environment lacks: use the "
                                     "data environment (.venv/bin/kiln)")
    assert "needs pyarrow" in trainer_kiln("--help").stdout
