"""`kiln doctor`: is this machine (or pod) ready to train? Each check prints ok / warn / fail with its fix.

Runs in the trainer's environment (.venv-train, the training image) and in any other: it imports
neither pyarrow nor ray, and MindSpore only to report on it. The checks: the Python version, numpy < 2
where MindSpore runs, MindSpore's import and version, the CANN toolkit (version, whether set_env.sh
was sourced, whether this MindSpore accepts it), ``npu-smi info`` (every chip's health, the driver
version), the NPUs visible to this pod, ``msrun`` on PATH, free memory, free disk under the data
directory, and the token files the run would read (present, and consistent with their meta.json).
On a machine with no sign of Ascend (no ``/dev/davinci*``, no npu-smi, no CANN environment) the
Ascend checks say plainly that they do not apply. Exit status 1 when any check fails, else 0.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from common.errors import KilnError
from common.train_cli import add_trainer_inputs, train_split

HELP = ("check this machine for training: Python, numpy, MindSpore, CANN, npu-smi, devices, msrun, memory, disk, "
        "token files (exit 1 on a failure)")
OK, WARN, FAIL, NA = "ok", "warn", "fail", "n/a"
MIN_FREE_MEMORY_GIB = 4.0
MIN_FREE_DISK_GIB = 10.0
SUPPORTED_PYTHON = ((3, 11), (3, 12))  # pyproject.toml: requires-python >=3.11,<3.12
MINDSPORE_SERIES = "2.10"
ASCEND_CHECKS = ("cann", "set_env.sh", "mindspore+cann", "npu-smi", "devices")
CPU_ONLY = ("CPU-only machine: no /dev/davinci* device, no npu-smi on PATH, no CANN environment; the Ascend checks "
            "do not apply")


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        text = f"  {self.status:<5} {self.name:<18} {self.detail}"
        if self.fix and self.status in (WARN, FAIL):
            text += f"\n  {'':<5} {'':<18} fix: {self.fix}"
        return text


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def check_python(version: tuple[int, int, int] | None = None) -> Check:
    version = version or sys.version_info[:3]
    low, high = SUPPORTED_PYTHON
    text = ".".join(map(str, version))
    if low <= tuple(version[:2]) < high:
        return Check("python", OK, f"{text} ({sys.executable})")
    return Check("python", FAIL, f"{text}; Kiln needs Python >= {low[0]}.{low[1]}, < {high[0]}.{high[1]} "
                 "(pyproject.toml; MindSpore 2.10's wheels)", "create the environments with python3.11 "
                 "(make venv train-venv PYTHON=python3.11)")


def check_numpy(numpy_version: str | None, mindspore_installed: bool) -> Check:
    if numpy_version is None:
        return Check("numpy", FAIL, "not installed", "pip install -r requirements/train.lock")
    major = int(numpy_version.split(".")[0])
    if major < 2:
        return Check("numpy", OK, f"{numpy_version} (< 2, as MindSpore 2.10's CPU wheel needs)")
    if mindspore_installed:
        return Check("numpy", FAIL, f"{numpy_version} beside MindSpore: with numpy 2 every Tensor op with a Python "
                     "scalar fails (SystemError)", "pip install 'numpy<2' (requirements/train.lock pins 1.26.4)")
    return Check("numpy", WARN, f"{numpy_version}: fine for the data stages, but the trainer's environment needs "
                 "numpy < 2", "run `kiln doctor` from the trainer's environment: .venv-train/bin/kiln doctor")


def check_mindspore(importer: Callable[[], str] | None = None) -> tuple[Check, str | None]:
    """Import MindSpore (slow: several seconds) and report its version; (check, version or None)."""
    if _version("mindspore") is None and importer is None:
        return Check("mindspore", FAIL, "not installed in this environment",
                     "use the trainer's environment (make train-venv; .venv-train/bin/kiln doctor)"), None

    def default() -> str:
        import mindspore

        return mindspore.__version__

    began = time.perf_counter()
    try:
        version = (importer or default)()
    except Exception as err:  # noqa: BLE001 - any import failure is the finding
        return Check("mindspore", FAIL, f"import failed: {type(err).__name__}: {err}",
                     "reinstall from requirements/train.lock; with numpy 2 installed, pin numpy<2"), None
    took = time.perf_counter() - began
    if not version.startswith(MINDSPORE_SERIES + "."):
        return Check("mindspore", WARN, f"{version} imported in {took:.1f} s; Kiln is built and tested against "
                     f"{MINDSPORE_SERIES}.x", f"pip install mindspore=={MINDSPORE_SERIES}.0"), version
    return Check("mindspore", OK, f"{version} imported in {took:.1f} s"), version


def ascend_checks(probe: object, npu_smi_text: Callable[[], str] | None = None) -> list[Check]:
    """CANN, set_env.sh, the MindSpore/CANN pair, npu-smi and the visible devices; one n/a line on a CPU machine."""
    from stages.train.device import SET_ENV_HINT
    from stages.train.npu_smi import NpuSmiError, parse_npu_smi_info, run_npu_smi

    if not probe.any_ascend_sign:
        return [Check("ascend", NA, CPU_ONLY)] + [Check(name, NA, "does not apply (CPU-only machine)")
                                                 for name in ASCEND_CHECKS]
    checks = []
    if probe.cann_sourced:
        version = probe.cann_version or "unknown version"
        checks.append(Check("cann", OK if probe.cann_version else WARN,
                            f"{version} at {probe.cann_home} ({probe.cann_home_var})",
                            f"no version file under {probe.cann_home}: is the toolkit installed there?"))
        sourced = probe.opp_path_set
        checks.append(Check("set_env.sh", OK if sourced else WARN,
                            "sourced (ASCEND_OPP_PATH set)" if sourced else
                            f"{probe.cann_home_var} is set but ASCEND_OPP_PATH is not: set_env.sh was not sourced "
                            "in full", SET_ENV_HINT))
    else:
        checks.append(Check("cann", FAIL, "no CANN environment: ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset",
                            SET_ENV_HINT))
        checks.append(Check("set_env.sh", FAIL, "not sourced", SET_ENV_HINT))
    supported = ", ".join(probe.supported_versions) or "unknown"
    if probe.cann_version is None or probe.mindspore_version is None:
        checks.append(Check("mindspore+cann", FAIL if probe.cann_sourced else NA,
                            f"cannot compare: MindSpore {probe.mindspore_version or 'missing'}, CANN "
                            f"{probe.cann_version or 'missing'}", "install both (the CANN image + train.lock)"))
    elif probe.version_ok:
        checks.append(Check("mindspore+cann", OK, f"MindSpore {probe.mindspore_version} accepts CANN "
                                                  f"{probe.cann_version} ({supported})"))
    else:
        checks.append(Check("mindspore+cann", FAIL, f"MindSpore {probe.mindspore_version} does not accept CANN "
                            f"{probe.cann_version} (it accepts {supported})",
                            "use a CANN image in that list (ascendai/cann:9.0.1-910b-...) or the matching MindSpore"))
    try:
        info = parse_npu_smi_info((npu_smi_text or run_npu_smi)())
    except NpuSmiError as err:
        checks.append(Check("npu-smi", FAIL, str(err), "mount /usr/local/bin/npu-smi and /usr/local/Ascend/driver "
                            "from the host (the Ascend device plugin does for huawei.com/Ascend910 pods)"))
    else:
        bad = [c for c in info.chips if not c.healthy]
        worst = FAIL if any(c.health not in ("OK", "Warning") for c in bad) else WARN if bad else OK
        detail = (f"driver {info.driver_version or 'unknown'}, {len(info.chips)} chip(s): "
                  + ", ".join(f"NPU {c.npu} {c.name} {c.health}" for c in info.chips))
        checks.append(Check("npu-smi", worst, detail, "npu-smi info -t health -i <npu> names the alarm; move the "
                            "job off a card that is not OK"))
    if probe.plugin_checked:
        checks.append(Check("ascend-plugin", FAIL if probe.plugin_error else OK,
                            probe.plugin_error or "MindSpore loaded its Ascend plugin (libmindspore_ascend.so)",
                            "the plugin needs the CANN libraries (libge_runner.so...): source set_env.sh before "
                            "starting Python"))
    if probe.devices:
        visible = f"ASCEND_VISIBLE_DEVICES={','.join(probe.visible)}" if probe.visible else "ASCEND_VISIBLE_DEVICES unset"
        mismatch = probe.visible is not None and len(probe.visible) != len(probe.devices)
        checks.append(Check("devices", WARN if mismatch else OK,
                            f"/dev/davinci{','.join(map(str, probe.devices))} ({visible})",
                            "the visible list and the device files disagree: check the pod's huawei.com/Ascend910 "
                            "request"))
    else:
        checks.append(Check("devices", FAIL, "no /dev/davinci<N> device in this pod",
                            "request huawei.com/Ascend910 in the pod spec (requests == limits)"))
    return checks


def check_msrun() -> Check:
    bin_dir = str(Path(sys.executable).parent)  # the launcher puts this first on the workers' PATH too
    found = shutil.which("msrun", path=os.pathsep.join([bin_dir, os.environ.get("PATH", "")]))
    if found:
        return Check("msrun", OK, found)
    return Check("msrun", WARN, "not on PATH: multi-process training (make train NPROC>1, several NPUs) needs it",
                 "it comes with the mindspore wheel: use the trainer's environment")


def _available_memory() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_memory(available: int | None = None) -> Check:
    available = _available_memory() if available is None else available
    if available is None:
        return Check("memory", WARN, "cannot read the free memory", "")
    gib = available / 2**30
    if gib < MIN_FREE_MEMORY_GIB:
        return Check("memory", WARN, f"{gib:.1f} GiB available (< {MIN_FREE_MEMORY_GIB:g} GiB)",
                     "free memory or raise the pod's memory limit; compiling the graph alone takes a few GiB")
    return Check("memory", OK, f"{gib:.1f} GiB available")


def check_disk(data_dir: Path) -> Check:
    where = data_dir if data_dir.exists() else next((p for p in data_dir.resolve().parents if p.exists()), Path("/"))
    free = shutil.disk_usage(where).free / 2**30
    if free < 1:
        return Check("disk", FAIL, f"{free:.1f} GiB free under {where}", "free disk: checkpoints and logs need room")
    if free < MIN_FREE_DISK_GIB:
        return Check("disk", WARN, f"{free:.1f} GiB free under {where} (< {MIN_FREE_DISK_GIB:g} GiB)",
                     "checkpoints of a large model need several times its size")
    return Check("disk", OK, f"{free:.1f} GiB free under {where}")


def check_tokens(paths: list[tuple[Path, bool]], seq_len: int | None) -> list[Check]:
    """Each token file opened as the trainer opens it (size, index and vocabulary against meta.json). ``paths``
    holds (path, required): a missing required file fails, a missing optional one warns."""
    from common.tokens import TokenDataset, TokenFileError

    checks = []
    for path, required in paths:
        name = f"tokens:{path.stem}"
        if not path.exists():
            checks.append(Check(name, FAIL if required else WARN, f"{path}: not found",
                                "run `make data` (or pass --tokens / --data-dir)"))
            continue
        try:
            tokens = TokenDataset(path, seq_len=seq_len)
        except TokenFileError as err:
            checks.append(Check(name, FAIL, str(err), "rerun `make data` (the tokenize stage writes .bin, .idx and "
                                "meta.json together), or point at the matching meta.json"))
            continue
        checks.append(Check(name, OK, f"{path}: {tokens.n_tokens:,} tokens, {len(tokens):,} windows of "
                                      f"{tokens.seq_len}, vocabulary {tokens.vocab_size:,} (meta.json agrees)"))
    return checks


def run_checks(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> list[Check]:
    from stages.train.config import load_trainer_config
    from stages.train.device import probe_ascend

    checks = [check_python()]
    ms_installed = _version("mindspore") is not None
    checks.append(check_numpy(_version("numpy"), ms_installed))
    ms_check, ms_version = check_mindspore() if ms_installed else (
        Check("mindspore", WARN if args.data_env_ok else FAIL, "not installed in this environment",
              "run `kiln doctor` with the trainer's environment: .venv-train/bin/kiln doctor"), None)
    checks.append(ms_check)
    probe = probe_ascend(env, args.dev_dir, check_plugin=ms_version is not None, mindspore_version=ms_version)
    checks += ascend_checks(probe)
    checks.append(check_msrun())
    checks.append(check_memory())
    checks.append(check_disk(args.data_dir))
    seq_len = None
    try:
        config = load_trainer_config(args.config, args.overrides)
        seq_len = config.train.seq_len
        checks.append(Check("config", OK, f"{args.config or 'the built-in defaults'}: device_target "
                                          f"{config.train.device_target}, layout {config.parallel.data_parallel} x "
                                          f"{config.parallel.model_parallel} x {config.parallel.pipeline_stages}"))
    except KilnError as err:
        checks.append(Check("config", FAIL, str(err), "fix the key named (stages/train/config.py lists them)"))
    tokens = train_split(args)
    paths = [(tokens, args.tokens is not None), (tokens.with_name("validation.bin"), False)]
    checks += check_tokens(paths, seq_len)
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln doctor`: the trainer's inputs, and whether MindSpore may be missing."""
    add_trainer_inputs(
        parser, data_dir="root of a data run: checks DATA_DIR/tokenize/{train,validation}.bin and its free disk",
        tokens="the training split to check (default DATA_DIR/tokenize/train.bin)",
        config="trainer YAML the run uses (its train.seq_len is checked against the tokens)",
        overrides="override one trainer key, as `python -m stages.train --set`")
    parser.add_argument("--dev-dir", type=Path, default=Path("/dev"), help=argparse.SUPPRESS)
    parser.add_argument("--data-env-ok", action="store_true",
                        help="MindSpore missing is a warning, not a failure (checking the data environment)")


def run(args: argparse.Namespace) -> int:
    """Print every check and a summary; 1 when any check fails, else 0."""
    print(f"kiln doctor: {platform.node()} ({platform.machine()}), {sys.executable}", flush=True)
    checks = run_checks(args)
    for check in checks:
        print(check.line(), flush=True)
    counts = {status: sum(c.status == status for c in checks) for status in (OK, WARN, FAIL, NA)}
    print(f"summary: {counts[OK]} ok, {counts[WARN]} warn, {counts[FAIL]} fail, {counts[NA]} not applicable")
    return 1 if counts[FAIL] else 0
