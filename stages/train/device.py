"""Device set-up in one place: choose CPU or Ascend, say why, and configure MindSpore for it.

The trainer (``python -m stages.train``) and the evaluator (``python -m stages.eval``) both call
:func:`resolve_device` and then :func:`setup_device`. ``auto`` picks Ascend only when every piece
is there; ``ascend`` where a piece is missing is a :class:`DeviceUnavailable` error (exit status 2)
naming each missing piece, raised before anything is built or compiled. The pieces:

1. a CANN environment: ``ASCEND_HOME_PATH`` or ``ASCEND_TOOLKIT_HOME`` set, as
   ``source /usr/local/Ascend/ascend-toolkit/set_env.sh`` (or the CANN image's entrypoint) does;
2. a CANN version MindSpore accepts (``$ASCEND_HOME_PATH/compiler/version.info`` against the list
   in ``mindspore/run_check/_check_version.py``: 8.2, 8.3, 8.5, 9.0 and 9.1 for MindSpore 2.10);
3. an NPU visible to this process: ``/dev/davinci<N>`` device files (the Ascend device plugin or
   docker runtime mounts them; ``ASCEND_VISIBLE_DEVICES`` lists them);
4. MindSpore's Ascend plugin loaded (``libmindspore_ascend.so`` finds ``libge_runner.so`` etc.).

The probe reads the environment and the file system it is given, so tests can fake an Ascend
machine; MindSpore is asked only for item 4.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import KilnError

CANN_HOME_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
SET_ENV_HINT = ("source /usr/local/Ascend/ascend-toolkit/set_env.sh (or keep the CANN image's entrypoint, "
                "which sources it)")
MINDSPORE_CANN_VERSIONS: dict[str, tuple[str, ...]] = {"2.10": ("8.2", "8.3", "8.5", "9.0", "9.1")}
"""CANN major.minor versions each MindSpore release accepts (its run_check/_check_version.py), used when
MindSpore's own list cannot be read."""

_VERSION_FILES = ("compiler/version.info", "version.info", "../ascend_toolkit_install.info",
                  "aarch64-linux/ascend_toolkit_install.info", "x86_64-linux/ascend_toolkit_install.info")
_DAVINCI = re.compile(r"^davinci(\d+)$")


class DeviceUnavailable(KilnError):
    """``device_target=ascend`` where the Ascend back end is not usable; the message names what is missing."""


def read_cann_version(home: str | Path) -> str | None:
    """The CANN version (``major.minor`` as MindSpore compares it) recorded under the toolkit ``home``."""
    for name in _VERSION_FILES:
        path = Path(home) / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, _, value = line.partition("=")
            if key.strip().lower() == "version" and value.strip():
                return ".".join(value.strip().split(".")[:2])
    return None


def supported_cann_versions(mindspore_version: str | None) -> tuple[str, ...]:
    """The CANN versions this MindSpore accepts: its own list when importable, else :data:`MINDSPORE_CANN_VERSIONS`."""
    try:
        from mindspore.run_check._check_version import AscendEnvChecker

        return tuple(AscendEnvChecker(None).version)
    except Exception:  # noqa: BLE001 - any failure here falls back to the recorded table
        key = ".".join((mindspore_version or "").split(".")[:2])
        return MINDSPORE_CANN_VERSIONS.get(key, ())


def visible_device_ids(env: Mapping[str, str]) -> list[str] | None:
    """``ASCEND_VISIBLE_DEVICES`` as a list (physical ids), or None when unset."""
    value = env.get("ASCEND_VISIBLE_DEVICES", "").strip()
    if not value:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def davinci_devices(dev_dir: str | Path = "/dev") -> list[int]:
    """The NPU numbers of the ``/dev/davinci<N>`` device files visible here (not davinci_manager)."""
    found = []
    for path in glob.glob(os.path.join(str(dev_dir), "davinci*")):
        match = _DAVINCI.match(os.path.basename(path))
        if match:
            found.append(int(match.group(1)))
    return sorted(found)


def mindspore_ascend_plugin() -> str | None:
    """None when MindSpore loaded its Ascend plugin; otherwise why it could not (its own load error)."""
    try:
        from mindspore._c_expression import MSContext
    except ImportError as err:
        return f"MindSpore is not importable ({err})"
    context = MSContext.get_instance()
    if context.is_pkg_support_device("Ascend"):
        return None
    error = " ".join(context.load_plugin_error().split())
    return error or "MindSpore reports the Ascend back end unavailable"


@dataclass(frozen=True)
class AscendProbe:
    """What this machine offers the Ascend back end (see the module docstring for the four pieces)."""

    cann_home: str | None
    cann_home_var: str | None
    opp_path_set: bool
    cann_version: str | None
    supported_versions: tuple[str, ...]
    mindspore_version: str | None
    devices: list[int]
    visible: list[str] | None
    npu_smi: str | None
    plugin_error: str | None = None
    plugin_checked: bool = False

    @property
    def cann_sourced(self) -> bool:
        return self.cann_home is not None

    @property
    def version_ok(self) -> bool:
        return self.cann_version is not None and self.cann_version in self.supported_versions

    @property
    def device_count(self) -> int:
        return len(self.devices)

    @property
    def missing(self) -> list[str]:
        """Each missing piece as a sentence with its fix; empty when Ascend is usable."""
        missing = []
        if not self.cann_sourced:
            missing.append(f"no CANN environment ({' and '.join(CANN_HOME_VARS)} are unset): {SET_ENV_HINT}")
        elif self.cann_version is None:
            missing.append(f"no CANN version file under {self.cann_home} ({self.cann_home_var}): is the toolkit "
                           f"installed there?")
        elif self.supported_versions and not self.version_ok:
            missing.append(f"CANN {self.cann_version} (under {self.cann_home}) is not a version MindSpore "
                           f"{self.mindspore_version} accepts ({', '.join(self.supported_versions)}): use a "
                           f"matching CANN image or MindSpore wheel")
        if not self.devices:
            where = (f"ASCEND_VISIBLE_DEVICES={','.join(self.visible)} is set, but " if self.visible else "")
            missing.append(f"no NPU visible: {where}no /dev/davinci<N> device in this container (request "
                           f"huawei.com/Ascend910 from the Ascend device plugin, or run on an Ascend host)")
        if self.plugin_checked and self.plugin_error:
            missing.append(f"MindSpore cannot load its Ascend plugin: {self.plugin_error}")
        return missing

    @property
    def usable(self) -> bool:
        return not self.missing

    @property
    def any_ascend_sign(self) -> bool:
        """Anything on this machine that looks like Ascend: then the Ascend checks apply (kiln doctor)."""
        return bool(self.cann_sourced or self.devices or self.visible or self.npu_smi)


def probe_ascend(env: Mapping[str, str] | None = None, dev_dir: str | Path = "/dev", *,
                 which: Callable[[str], str | None] = shutil.which, check_plugin: bool = True,
                 plugin: Callable[[], str | None] = mindspore_ascend_plugin,
                 mindspore_version: str | None = None) -> AscendProbe:
    """Look at ``env`` (default os.environ) and ``dev_dir`` for the Ascend pieces; ask MindSpore about its plugin
    only when ``check_plugin`` and every other piece is present (loading MindSpore is slow)."""
    env = os.environ if env is None else env
    home_var = next((var for var in CANN_HOME_VARS if env.get(var)), None)
    home = env.get(home_var) if home_var else None
    if mindspore_version is None:
        try:
            from importlib.metadata import version

            mindspore_version = version("mindspore")
        except Exception:  # noqa: BLE001 - not installed
            mindspore_version = None
    probe = AscendProbe(
        cann_home=home, cann_home_var=home_var, opp_path_set=bool(env.get("ASCEND_OPP_PATH")),
        cann_version=read_cann_version(home) if home else None,
        supported_versions=supported_cann_versions(mindspore_version), mindspore_version=mindspore_version,
        devices=davinci_devices(dev_dir), visible=visible_device_ids(env), npu_smi=which("npu-smi"))
    if check_plugin and not probe.missing:
        return AscendProbe(**{**probe.__dict__, "plugin_error": plugin(), "plugin_checked": True})
    return probe


@dataclass(frozen=True)
class DeviceChoice:
    """The back end this process runs on, and why (the first line of the log)."""

    target: str  # "CPU" or "Ascend", as MindSpore spells them
    device_id: int | None
    reason: str
    requested: str = "auto"
    probe: AscendProbe | None = field(default=None, compare=False, repr=False)
    setting: str = "train.device_target"

    @property
    def is_ascend(self) -> bool:
        return self.target == "Ascend"

    def describe(self, threads: int | None = None) -> str:
        what = f"Ascend NPU {self.device_id}" if self.is_ascend else "CPU"
        if not self.is_ascend and threads is not None:
            what += f", {threads} operator thread{'s' if threads != 1 else ''}"
        return f"device: {what} ({self.setting}={self.requested}: {self.reason})"


def _device_id(configured: int | None, env: Mapping[str, str], probe: AscendProbe) -> tuple[int, str]:
    if configured is not None:
        device_id, source = configured, "train.device_id"
    elif env.get("DEVICE_ID", "").strip().isdigit():
        device_id, source = int(env["DEVICE_ID"]), "DEVICE_ID, the launcher's local rank"
    else:
        device_id, source = 0, "the only/first NPU (no DEVICE_ID set)"
    count = len(probe.visible) if probe.visible else probe.device_count
    if count and device_id >= count:
        raise DeviceUnavailable(f"device_id {device_id} (from {source}) but only {count} NPU(s) are visible here "
                                f"(ASCEND_VISIBLE_DEVICES={','.join(probe.visible or []) or 'unset'}, "
                                f"/dev/davinci{probe.devices}): start at most {count} workers per pod")
    physical = f" = physical NPU {probe.visible[device_id]}" if probe.visible and device_id < len(probe.visible) else ""
    return device_id, f"device_id {device_id}{physical} from {source}"


def resolve_device(requested: str = "auto", device_id: int | None = None, env: Mapping[str, str] | None = None,
                   probe: AscendProbe | None = None, setting: str = "train.device_target") -> DeviceChoice:
    """Pick the back end for ``requested`` (auto, cpu or ascend); raise :class:`DeviceUnavailable` for ``ascend``
    where a piece is missing. The scheduler process of a distributed job (``MS_ROLE=MS_SCHED``) needs no device.
    ``setting`` names the option in messages (the evaluator's is ``--device-target``)."""
    env = os.environ if env is None else env
    requested = requested.lower()
    if requested not in ("auto", "cpu", "ascend"):
        raise DeviceUnavailable(f"{setting} must be auto, cpu or ascend, got {requested!r}")
    if env.get("MS_ROLE") == "MS_SCHED":
        return DeviceChoice("CPU", None, "this is the scheduler process (MS_ROLE=MS_SCHED): it only serves the "
                                         "cluster and uses no device", requested, setting=setting)
    if requested == "cpu":
        return DeviceChoice("CPU", None, "asked for", requested, setting=setting)
    probe = probe or probe_ascend(env)
    if probe.usable:
        chosen_id, how = _device_id(device_id, env, probe)
        version = f"CANN {probe.cann_version} ({probe.cann_home_var}={probe.cann_home})"
        reason = f"{version}, {probe.device_count} NPU(s) visible, MindSpore's Ascend plugin loaded; {how}"
        return DeviceChoice("Ascend", chosen_id, ("asked for; " if requested == "ascend" else "") + reason,
                            requested, probe, setting)
    if requested == "ascend":
        raise DeviceUnavailable(f"{setting}=ascend, but the Ascend back end is not usable here: "
                                + "; ".join(probe.missing) + " (run `kiln doctor` for every check)")
    return DeviceChoice("CPU", None, "Ascend not usable: " + "; ".join(probe.missing), requested, probe, setting)


@functools.cache
def _setup_cpu(threads: int) -> None:
    import mindspore as ms

    ms.set_device("CPU")
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.device_context.cpu.op_tuning.threads_num(threads)


@functools.cache
def _setup_ascend(device_id: int, max_device_memory: str, jit_level: str, memory_optimize_level: str,
                  precision_mode: str | None) -> None:
    import mindspore as ms

    ms.set_device("Ascend", device_id)
    ms.set_context(mode=ms.GRAPH_MODE, jit_config={"jit_level": jit_level})
    ms.runtime.set_memory(max_size=max_device_memory, optimize_level=memory_optimize_level)
    if precision_mode:
        ms.device_context.ascend.op_precision.precision_mode(precision_mode)


def setup_device(choice: DeviceChoice, threads: int = 2, ascend: object | None = None) -> None:
    """Configure MindSpore for ``choice``: graph mode always; ``threads`` operator threads on CPU (MindSpore's
    default is 25); on Ascend the device id and the :class:`stages.train.config.AscendConfig` settings.

    MindSpore takes these once per process, so a repeated call with the same arguments does nothing."""
    if not choice.is_ascend:
        _setup_cpu(threads)
        return
    if ascend is None:
        from stages.train.config import AscendConfig

        ascend = AscendConfig()
    _setup_ascend(choice.device_id or 0, ascend.max_device_memory, ascend.jit_level, ascend.memory_optimize_level,
                  ascend.precision_mode)
