"""Trainer checkpoints: ``latest/`` and ``best/`` directories swapped in atomically and verified before loading.

Each directory holds ``model.safetensors`` (network parameters), ``optimizer.safetensors``
(optimizer state without the network weights), ``trainer_state.json`` and ``checksums.json``
(sha256 of the other three). A checkpoint is written into a hidden temporary sibling, every
file fsync'd, then renamed into place: the previous one becomes ``<name>.old`` and is deleted
only once the new one is in place, so a crash at any point leaves one complete checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import mindspore as ms
from mindspore import nn

from common.errors import KilnError
from common.files import file_sha256, fsync_dir

NAMES = ("latest", "best")
MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "trainer_state.json"
CHECKSUMS_FILE = "checksums.json"
DATA_FILES = (MODEL_FILE, OPTIMIZER_FILE, STATE_FILE)


class CheckpointError(KilnError):
    """A checkpoint is missing, corrupt, or does not match the network or optimizer."""


def _write_json(path: Path, value: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, sort_keys=True)
        handle.write("\n")


def _check_name(name: str) -> None:
    if name not in NAMES:
        raise CheckpointError(f"checkpoint name must be one of {list(NAMES)}, got {name!r}")


def save_checkpoint(root: Path, name: str, net: nn.Cell, optimizer: nn.Optimizer, state: dict[str, Any]) -> Path:
    """Write ``root/name/`` (model, optimizer state, trainer ``state``, checksums) atomically; return its path."""
    _check_name(name)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f".{name}.tmp-*"):
        shutil.rmtree(stale)
    tmp = root / f".{name}.tmp-{os.getpid()}"
    tmp.mkdir()
    net_keys = set(net.parameters_dict())
    ms.save_checkpoint(net, str(tmp / MODEL_FILE), format="safetensors")
    ms.save_checkpoint(optimizer, str(tmp / OPTIMIZER_FILE), format="safetensors",
                       choice_func=lambda key: key not in net_keys)
    _write_json(tmp / STATE_FILE, state)
    _write_json(tmp / CHECKSUMS_FILE, {f: file_sha256(tmp / f) for f in DATA_FILES})
    for f in (*DATA_FILES, CHECKSUMS_FILE):
        fsync_dir(tmp / f)
    fsync_dir(tmp)

    final = root / name
    old = root / f"{name}.old"
    if final.exists():
        if old.exists():
            shutil.rmtree(old)
        final.rename(old)
        fsync_dir(root)
    tmp.rename(final)
    fsync_dir(root)
    if old.exists():
        shutil.rmtree(old)
        fsync_dir(root)
    return final


def checkpoint_dir(root: Path, name: str) -> Path | None:
    """The complete directory of checkpoint ``name``: ``name/``, or ``name.old/`` after a crash between renames."""
    _check_name(name)
    for candidate in (Path(root) / name, Path(root) / f"{name}.old"):
        if candidate.is_dir():
            return candidate
    return None


def verify_checksums(directory: Path) -> None:
    """Compare every file against ``checksums.json``; raise CheckpointError naming the first file that differs."""
    listing = directory / CHECKSUMS_FILE
    try:
        expected = json.loads(listing.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{listing}: unreadable checksum file ({exc})") from exc
    if not isinstance(expected, dict) or sorted(expected) != sorted(DATA_FILES):
        raise CheckpointError(f"{listing}: must list exactly {sorted(DATA_FILES)}")
    for f in DATA_FILES:
        path = directory / f
        if not path.is_file():
            raise CheckpointError(f"{path}: missing")
        if file_sha256(path) != expected[f]:
            raise CheckpointError(f"{path}: sha256 does not match {CHECKSUMS_FILE} (corrupt file)")


def _key_error(path: Path, missing: Iterable[str], extra: Iterable[str]) -> CheckpointError | None:
    missing, extra = sorted(missing), sorted(extra)
    if not missing and not extra:
        return None
    return CheckpointError(f"{path}: keys do not match the target: missing {missing}, extra {extra}")


def _read_params(path: Path, expected: dict[str, ms.Parameter]) -> dict[str, ms.Parameter]:
    """Read a safetensors file and check its keys and shapes against ``expected`` without touching it."""
    try:
        params = ms.load_checkpoint(str(path), format="safetensors")
    except Exception as exc:
        raise CheckpointError(f"{path}: unreadable ({exc})") from exc
    error = _key_error(path, set(expected) - set(params), set(params) - set(expected))
    if error:
        raise error
    for key, param in params.items():
        if tuple(param.shape) != tuple(expected[key].shape):
            raise CheckpointError(f"{path}: {key} has shape {tuple(param.shape)}, "
                                  f"the target has {tuple(expected[key].shape)}")
    return params


def _load_into(path: Path, target: nn.Cell, params: dict[str, ms.Parameter], ignored: set[str]) -> None:
    """Strict load; every target parameter outside ``ignored`` and every checkpoint key must be loaded."""
    not_loaded, unused = ms.load_param_into_net(target, params, strict_load=True)
    error = _key_error(path, set(not_loaded) - ignored, unused)
    if error:
        raise error


def _load_dir(directory: Path, net: nn.Cell, optimizer: nn.Optimizer | None) -> dict[str, Any]:
    verify_checksums(directory)
    try:
        state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CheckpointError(f"{directory / STATE_FILE}: unreadable ({exc})") from exc
    net_params = net.parameters_dict()
    loads = [(directory / MODEL_FILE, net, _read_params(directory / MODEL_FILE, net_params), set())]
    if optimizer is not None:
        own = {k: v for k, v in optimizer.parameters_dict().items() if k not in net_params}
        loads.append((directory / OPTIMIZER_FILE, optimizer, _read_params(directory / OPTIMIZER_FILE, own),
                      set(net_params)))
    for path, target, params, ignored in loads:
        _load_into(path, target, params, ignored)
    return state


def load_checkpoint(root: Path, net: nn.Cell, optimizer: nn.Optimizer | None = None, *,
                    weights_only: bool = False) -> dict[str, Any]:
    """Load ``root/latest`` (or ``root/best`` with a warning when latest is missing or invalid); return the
    trainer state.

    Checksums, keys and shapes are verified before anything is loaded. ``weights_only`` (or no
    ``optimizer``) leaves the optimizer untouched. Parameters are loaded with ``set_data``, which a
    step compiled before the load does not see: load before the first compiled step.
    """
    target = None if weights_only else optimizer
    failures = []
    for name in NAMES:
        directory = checkpoint_dir(root, name)
        if directory is None:
            failures.append(f"{Path(root) / name}: missing")
            continue
        try:
            state = _load_dir(directory, net, target)
        except CheckpointError as exc:
            failures.append(str(exc))
            continue
        if failures:
            warnings.warn(f"checkpoint 'latest' is unusable ({failures[0]}); resuming from {directory} instead",
                          RuntimeWarning, stacklevel=2)
        return state
    raise CheckpointError(f"no usable checkpoint under {root}: " + "; ".join(failures))
