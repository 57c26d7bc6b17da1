"""What the README and docs/ show exists: every relative link resolves (its #anchor to a heading), every
`make TARGET` names a target of the Makefile, every `kiln COMMAND --flag` and `python -m stages.NAME --flag`
a real subcommand, module and option; and the README stays a short entry point that starts with
`make data` and `make test`."""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
README_MAX_LINES = 200


def pages() -> list[Path]:
    return [README, *sorted((REPO / "docs").glob("*.md"))]


# -- reading markdown --------------------------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"")


@dataclass(frozen=True)
class Code:
    """One line of code as the page shows it: a line of a fenced block, or an inline code span."""

    path: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


@dataclass(frozen=True)
class Page:
    code: tuple[Code, ...]  # in the order the page shows them
    links: tuple[tuple[int, str], ...]  # (line, target) of every link outside code
    headings: tuple[str, ...]  # heading texts outside code, in order


@functools.cache
def read_page(path: Path) -> Page:
    lines = path.read_text(encoding="utf-8").splitlines()
    code: list[Code] = []
    links: list[tuple[int, str]] = []
    headings: list[str] = []
    paragraph: list[tuple[int, str]] = []

    def flush() -> None:
        if not paragraph:
            return
        start = paragraph[0][0]
        text = "\n".join(line for _, line in paragraph)
        prose = list(text)
        for match in CODE_SPAN.finditer(text):
            line = start + text.count("\n", 0, match.start())
            code.append(Code(path, line, " ".join(match.group(2).split())))
            for i in range(match.start(), match.end()):  # links inside code spans are not links
                if prose[i] != "\n":
                    prose[i] = " "
        plain = "".join(prose)
        for pattern in (LINK, REFERENCE):
            for match in pattern.finditer(plain):
                links.append((start + plain.count("\n", 0, match.start()), match.group(1)))
        paragraph.clear()

    fence: str | None = None
    block: list[tuple[int, str]] = []  # a fenced line continued with a backslash
    for number, line in enumerate(lines, 1):
        marker = FENCE.match(line)
        if fence is not None:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence) \
                    and not line.strip()[len(marker.group(1)):].strip():
                fence = None
                continue
            block.append((number, line))
            if not line.rstrip().endswith("\\"):
                joined = " ".join(text.rstrip().rstrip("\\").strip() for _, text in block)
                code.append(Code(path, block[0][0], " ".join(joined.split())))
                block.clear()
            continue
        if marker:
            flush()
            fence = marker.group(1)
            continue
        heading = HEADING.match(line)
        if heading:
            flush()
            headings.append(heading.group(2))
            paragraph.append((number, heading.group(2)))  # links and code in a heading count too
            flush()
            continue
        if line.strip():
            paragraph.append((number, line))
        else:
            flush()
    flush()
    return Page(tuple(code), tuple(links), tuple(headings))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link text kept, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in read_page(path).headings:
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    found.update(HTML_ANCHOR.findall(path.read_text(encoding="utf-8")))
    return frozenset(found)


# -- what the commands name --------------------------------------------------------------------------------------------

ENV = r"(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)*"
START = rf"^(?:\$\s+)?{ENV}"
MAKE = re.compile(rf"{START}make\s+(?P<args>\S.*)$")
KILN = re.compile(rf"{START}(?:(?:\S*/)?kiln|(?:\S*/)?python3?\s+-m\s+kiln)\s+(?P<args>\S.*)$")
STAGE = re.compile(rf"{START}(?:\S*/)?python3?\s+-m\s+(?P<module>stages(?:\.[\w<>]+)+)(?:\s+(?P<args>.*))?$")
SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}


def words(args: str) -> list[str]:
    """The arguments as the shell splits them, up to a comment or the next command of a pipe or list."""
    try:
        tokens = shlex.split(args, comments=True)
    except ValueError:  # an unbalanced quote in a shown fragment: split plainly
        tokens = re.split(r"\s#", args, maxsplit=1)[0].split()
    out = []
    for token in tokens:
        if token in SHELL_OPERATORS or token.startswith((">", "<")):
            break
        out.append(token)
    return out


def flags(tokens: list[str]) -> list[str]:
    """The options among the words (`[--out DIR]` shows --out), up to a bare `--`."""
    found = []
    for token in tokens:
        token = token.strip("[]")
        if token == "--":
            break
        if token.startswith("-") and token != "-" and not re.fullmatch(r"-\d[\d.]*", token):
            found.append(token.split("=", 1)[0])
    return found


def is_placeholder(word: str) -> bool:
    """`<name>`, `...` or an upper-case name such as COMMAND: a word the reader fills in."""
    return "<" in word or word.startswith("...") or re.fullmatch(r"[A-Z][A-Z0-9_]+", word) is not None


@functools.cache
def make_targets() -> frozenset[str]:
    """The Makefile's targets, from make's own database (`make -pRrq`), else from its rule lines."""
    targets: set[str] = set()
    try:
        database = subprocess.run(["make", "-pRrq", "-f", "Makefile", ":"], cwd=REPO, capture_output=True,
                                  text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        database = ""
    not_a_target = False
    for line in database.splitlines():
        if line.startswith("# Not a target"):
            not_a_target = True
            continue
        rule = re.match(r"^([^#\s:=][^:=]*?):(?![=:])", line)
        if rule and not not_a_target:
            targets.update(name for name in rule.group(1).split() if not name.startswith("."))
        if not line.startswith("#"):
            not_a_target = False
    if not targets:
        for line in (REPO / "Makefile").read_text(encoding="utf-8").splitlines():
            rule = re.match(r"^([A-Za-z0-9][\w.-]*(?:\s+[A-Za-z0-9][\w.-]*)*)\s*:(?![=:])", line)
            if rule:
                targets.update(rule.group(1).split())
    return frozenset(targets)


def options(parser: argparse.ArgumentParser) -> frozenset[str]:
    return frozenset(option for action in parser._actions for option in action.option_strings)


@functools.cache
def kiln_commands() -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The `kiln` parser's own options, and each subcommand's."""
    from kiln.cli import build_parser

    parser = build_parser()
    commands: dict[str, frozenset[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            commands.update({name: options(sub) for name, sub in action.choices.items()})
    return options(parser), commands


def module_file(module: str) -> Path | None:
    base = REPO / module.replace(".", "/")
    for candidate in (base / "__main__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _options_in_source(path: Path) -> frozenset[str]:
    """Without importing: the literal options of add_argument calls (inside `_parser` when the module has one),
    plus every run option when the module builds its parser with common.stage_cli."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope: ast.AST = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                           and node.name in ("_parser", "build_parser")), tree)
    found = {"-h", "--help"}
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            found.update(arg.value for arg in node.args
                         if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    if names & {"stage_parser", "add_run_options"}:
        from common.stage_cli import add_run_options

        parser = argparse.ArgumentParser()
        add_run_options(parser, "")
        found |= options(parser)
    return frozenset(found)


@functools.cache
def stage_options(module: str) -> frozenset[str]:
    """The options of `python -m MODULE`: its parser where the module builds one cheaply (`_parser()`), else read
    from its source (a stage's own options over common.stage_cli's, or a module whose imports this environment
    lacks, such as the launcher's psutil)."""
    path = module_file(module)
    assert path is not None
    name = module + ".__main__" if path.name == "__main__.py" else module
    try:
        loaded = importlib.import_module(name)
    except ImportError:
        return _options_in_source(path)
    build = getattr(loaded, "_parser", None) or getattr(loaded, "build_parser", None)
    return options(build()) if callable(build) else _options_in_source(path)


# -- the checks --------------------------------------------------------------------------------------------------------

def commands(kind: re.Pattern[str]) -> list[tuple[Code, re.Match[str]]]:
    return [(code, match) for path in pages() for code in read_page(path).code if (match := kind.match(code.text))]


def test_every_relative_link_resolves_to_a_file_and_heading():
    problems = []
    for path in pages():
        for line, target in read_page(path).links:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(REPO)}:{line}: link ({target})"
            if not linked.exists():
                problems.append(f"{where}: no file {file_part}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading #{anchor} in {linked.relative_to(REPO)}")
    assert not problems, "\n".join(problems)


def test_every_make_command_names_a_makefile_target():
    problems = []
    targets = make_targets()
    assert {"data", "test"} <= targets, f"could not read the Makefile's targets: {sorted(targets)}"
    for code, match in commands(MAKE):
        for word in words(match.group("args")):
            if word.startswith("-") or "=" in word or is_placeholder(word):
                continue
            if word not in targets:
                problems.append(f"{code.where()}: `{code.text}`: the Makefile has no target {word!r}")
    assert not problems, "\n".join(problems)


def test_every_kiln_command_names_a_subcommand_and_its_options():
    problems = []
    top, subcommands = kiln_commands()
    for code, match in commands(KILN):
        tokens = words(match.group("args"))
        command, known = "kiln", top
        subcommand = next((token for token in tokens if not token.strip("[]").startswith("-")), None)
        if subcommand is not None and not is_placeholder(subcommand):
            if subcommand not in subcommands:
                problems.append(f"{code.where()}: `{code.text}`: kiln has no subcommand {subcommand!r} "
                                f"(it has {', '.join(sorted(subcommands))})")
                continue
            position = tokens.index(subcommand)
            problems += [f"{code.where()}: `{code.text}`: kiln has no option {flag}"
                         for flag in flags(tokens[:position]) if flag not in top]
            command, known, tokens = f"kiln {subcommand}", subcommands[subcommand], tokens[position + 1:]
        problems += [f"{code.where()}: `{code.text}`: {command} has no option {flag}"
                     for flag in flags(tokens) if flag not in known]
    assert not problems, "\n".join(problems)


def test_every_stage_module_exists_with_the_options_shown():
    problems = []
    for code, match in commands(STAGE):
        module = match.group("module")
        if "<" in module:  # python -m stages.<name>
            continue
        if module_file(module) is None:
            problems.append(f"{code.where()}: `{code.text}`: no module {module}")
            continue
        known = stage_options(module)
        problems += [f"{code.where()}: `{code.text}`: python -m {module} has no option {flag}"
                     for flag in flags(words(match.group("args") or "")) if flag not in known]
    assert not problems, "\n".join(problems)


def test_the_readme_is_short_and_starts_with_make_data_then_make_test():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    shown = [" ".join(words(code.text)) for code in read_page(README).code
             if MAKE.match(code.text) or KILN.match(code.text) or STAGE.match(code.text)]
    assert shown[:2] == ["make data", "make test"], f"README.md's first commands are {shown[:2]}"


def test_the_markdown_reader_sees_what_a_reader_sees(tmp_path: Path):
    """Code in fences and spans (a span may wrap a line), links only outside code, headings to GitHub's anchors."""
    page = tmp_path / "page.md"
    page.write_text("# Does it help? `make ablation`\n\nRun `make train\nNPROC=2` or see [a](other.md#x-y).\n"
                    "`[not](a-link.md)` and make data in prose.\n\n```bash\nmake data INPUT='a b' \\\n"
                    "  DATA_DIR=d   # a comment\n```\n\n## Does it help? `make ablation`\n", encoding="utf-8")
    read = read_page(page)
    assert [(c.line, c.text) for c in read.code] == [
        (1, "make ablation"), (3, "make train NPROC=2"), (5, "[not](a-link.md)"),
        (8, "make data INPUT='a b' DATA_DIR=d # a comment"), (12, "make ablation")]
    assert read.links == ((4, "other.md#x-y"),)
    assert anchors(page) == {"does-it-help-make-ablation", "does-it-help-make-ablation-1"}
    assert words(read.code[3].text) == ["make", "data", "INPUT=a b", "DATA_DIR=d"]
    assert flags(words(".venv/bin/kiln doctor [--data-dir D] -- --x")) == ["--data-dir"]
    assert slug("Tested here, and what could not be run without a cluster") == \
        "tested-here-and-what-could-not-be-run-without-a-cluster"
