"""The `kiln` command: run the pipeline, show and report a run, write the demo corpus and score against its truth,
check a machine for training (`kiln doctor`) and write the configuration reference.

Each subcommand is a module of COMMANDS exposing HELP, ``add_arguments(parser)``, ``run(args) -> int`` and
optionally DESCRIPTION. A command module imports the data stages' libraries (pyarrow, ray) in ``run``, so
`kiln doctor` also runs in the trainer's environment, which has neither; a module that needs them to give its
options (run, ablate) is listed there too, as a command that says it needs the data environment."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

from common.errors import KilnError

COMMANDS = {
    "run": "kiln.pipeline",
    "ablate": "kiln.commands.ablate",
    "status": "kiln.commands.status",
    "demo": "kiln.commands.demo",
    "devset": "kiln.commands.devset",
    "category-model": "kiln.commands.category_model",
    "eval-truth": "kiln.commands.eval_truth",
    "report": "kiln.commands.report",
    "autoscale-demo": "kiln.autoscale",
    "doctor": "kiln.doctor",
    "config-reference": "kiln.config_reference",
}
"""Subcommand -> its module, in the order `kiln --help` lists them."""
DATA_LIBRARIES = ("pyarrow", "ray")


def build_parser() -> argparse.ArgumentParser:
    """The `kiln` argument parser with its subcommands."""
    parser = argparse.ArgumentParser(prog="kiln", description="Kiln: run, inspect and score pipeline runs.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module_name in COMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name not in DATA_LIBRARIES:
                raise
            _add_unavailable(sub, name, err)
            continue
        command = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", None))
        module.add_arguments(command)
        command.set_defaults(func=module.run)
    return parser


def _add_unavailable(sub: argparse._SubParsersAction, name: str, missing: ModuleNotFoundError) -> None:
    """`kiln <name>`, whose module needs a library this environment lacks: it takes any arguments (no prefix
    character marks an option, so ``--demo`` and ``-h`` are arguments too) and fails with ``missing``."""
    command = sub.add_parser(name, help=f"needs {missing.name}: use the data environment, .venv", prefix_chars="\0",
                             add_help=False)
    command.add_argument("rest", nargs=argparse.REMAINDER)

    def fail(args: argparse.Namespace) -> int:
        raise missing

    command.set_defaults(func=fail)


def main(argv: list[str] | None = None) -> int:
    """Run the subcommand ``argv`` names; its exit status (2 on a KilnError)."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KilnError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:
        if err.name not in DATA_LIBRARIES:
            raise
        print(f"error: `kiln {args.command}` needs {err.name}, which this environment lacks: use the data "
              "environment (.venv/bin/kiln)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`kiln status | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
