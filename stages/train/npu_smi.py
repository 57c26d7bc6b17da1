"""``npu-smi info``: run it and parse its table into numbers (utilization, HBM, temperature, power, health).

The format is the one Huawei documents for ``npu-smi info`` on Atlas training cards (910A/910B): a
title row with the tool and driver version, then per NPU two rows under a two-row header::

    | npu-smi 24.1.rc1                 Version: 24.1.rc1                                             |
    +---------------------------+---------------+----------------------------------------------------+
    | NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
    | Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
    +===========================+===============+====================================================+
    | 0     910B3               | OK            | 101.8       43                0    / 0             |
    | 0                         | 0000:C1:00.0  | 0           0    / 0          3318 / 65536         |

followed by a process table (``| NPU  Chip | Process id | ...``). The parser reads the column names
from the two header rows, so it follows their order and width (drivers differ in spacing, in a
``Phy-ID``/``Device`` column after ``Chip``, in ``59356/ 65536`` without a space, and 310-series
cards have no HBM column); values a card cannot report (``NA``, ``-``, ``--``) become None. Several
chips under one NPU (Atlas A3) are separate :class:`NpuChip` rows with the same ``npu``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

_PAIR_OR_VALUE = re.compile(r"(\S+)\s*/\s*(\S+)|(\S+)")
_VERSION = re.compile(r"Version:\s*(\S+)")
_TOOL = re.compile(r"npu-smi\s+(\S+)")
_MISSING = {"NA", "N/A", "-", "--", ""}
HEALTHY = "OK"


class NpuSmiError(Exception):
    """``npu-smi`` is missing, failed, or printed no table this parser understands."""


@dataclass(frozen=True)
class NpuChip:
    """One chip's row pair."""

    npu: int
    chip: int
    name: str
    health: str
    power_w: float | None
    temp_c: float | None
    aicore_percent: float | None
    hbm_used_mb: float | None
    hbm_total_mb: float | None
    memory_used_mb: float | None = None
    memory_total_mb: float | None = None
    bus_id: str | None = None

    @property
    def healthy(self) -> bool:
        return self.health == HEALTHY

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class NpuSmiInfo:
    """What one ``npu-smi info`` printed: the tool and driver versions and every chip."""

    tool_version: str | None
    driver_version: str | None
    chips: list[NpuChip] = field(default_factory=list)


def _number(text: str) -> float | None:
    text = text.strip()
    if text.upper() in _MISSING:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _cells(line: str) -> list[str] | None:
    line = line.strip()
    if not line.startswith("|"):
        return None
    return [cell.strip() for cell in line.strip("|").split("|")]


def _values(cell: str) -> list[tuple[str, str | None]]:
    """The third cell's values in order: ``a / b`` pairs as (a, b), single values as (v, None)."""
    out = []
    for match in _PAIR_OR_VALUE.finditer(cell):
        if match.group(1) is not None:
            out.append((match.group(1), match.group(2)))
        else:
            out.append((match.group(3), None))
    return out


def _columns(cell: str) -> list[str]:
    return cell.split()


def _is_first_header(cells: list[str]) -> bool:
    return len(cells) >= 3 and cells[0].startswith("NPU") and cells[1] == "Health"


def _is_second_header(cells: list[str]) -> bool:
    return len(cells) >= 3 and cells[0].startswith("Chip") and cells[1].replace(" ", "") in ("Bus-Id", "BusId")


def _is_process_header(cells: list[str]) -> bool:
    return len(cells) >= 2 and cells[0].startswith("NPU") and cells[1].startswith("Process")


def _by_name(columns: list[str], values: list[tuple[str, str | None]]) -> dict[str, tuple[str, str | None]]:
    return {name: value for name, value in zip(columns, values, strict=False)}


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """Parse the output of ``npu-smi info``; raise :class:`NpuSmiError` when it holds no chip table."""
    tool = driver = None
    first_cols: list[str] = []
    second_cols: list[str] = []
    chips: list[NpuChip] = []
    pending: tuple[int, str, str, dict[str, tuple[str, str | None]]] | None = None
    in_processes = False
    for line in text.splitlines():
        if tool is None and (m := _TOOL.search(line)) and "Version" in line:
            tool = m.group(1)
            if v := _VERSION.search(line):
                driver = v.group(1)
            continue
        cells = _cells(line)
        if cells is None or len(cells) < 3 and not _is_process_header(cells):
            continue
        if _is_process_header(cells):
            in_processes = True
            continue
        if _is_first_header(cells):
            first_cols, in_processes = _columns(cells[2]), False
            continue
        if _is_second_header(cells):
            second_cols = _columns(cells[2])
            continue
        if in_processes or not first_cols or not second_cols:
            continue
        head = cells[0].split()
        if not head or not head[0].isdigit():
            continue
        if pending is None:
            if len(head) < 2:  # a chip row without its NPU row: not a table we know
                continue
            pending = (int(head[0]), " ".join(head[1:]), cells[1], _by_name(first_cols, _values(cells[2])))
            continue
        npu, name, health, first = pending
        second = _by_name(second_cols, _values(cells[2]))
        pending = None

        def single(values: dict[str, tuple[str, str | None]], key: str) -> float | None:
            value = values.get(key)
            return _number(value[0]) if value else None

        def pair(values: dict[str, tuple[str, str | None]], key: str) -> tuple[float | None, float | None]:
            value = values.get(key)
            if not value:
                return None, None
            return _number(value[0]), (_number(value[1]) if value[1] is not None else None)

        hbm_used, hbm_total = pair(second, "HBM-Usage(MB)")
        mem_used, mem_total = pair(second, "Memory-Usage(MB)")
        chips.append(NpuChip(npu=npu, chip=int(head[0]), name=name, health=health,
                             power_w=single(first, "Power(W)"), temp_c=single(first, "Temp(C)"),
                             aicore_percent=single(second, "AICore(%)"), hbm_used_mb=hbm_used, hbm_total_mb=hbm_total,
                             memory_used_mb=mem_used, memory_total_mb=mem_total,
                             bus_id=cells[1] if cells[1].upper() not in _MISSING else None))
    if not chips:
        raise NpuSmiError("no NPU table in the npu-smi output (expected the `| NPU  Name | Health | Power(W) ...` "
                          "header of `npu-smi info`)")
    return NpuSmiInfo(tool_version=tool, driver_version=driver, chips=chips)


def run_npu_smi(timeout: float = 20.0, executable: str | None = None) -> str:
    """The text ``npu-smi info`` prints; raise :class:`NpuSmiError` when it is missing, fails or hangs."""
    path = executable or shutil.which("npu-smi")
    if path is None:
        raise NpuSmiError("npu-smi is not on PATH (on Ascend hosts it is /usr/local/bin/npu-smi, mounted from the "
                          "host together with /usr/local/Ascend/driver)")
    try:
        result = subprocess.run([path, "info"], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as err:
        raise NpuSmiError(f"npu-smi info did not answer within {timeout:g} s") from err
    except OSError as err:
        raise NpuSmiError(f"npu-smi info could not run ({err})") from err
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise NpuSmiError(f"npu-smi info exited with status {result.returncode}: {detail[0]}")
    return result.stdout
