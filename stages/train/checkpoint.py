"""Trainer checkpoints: ``latest/`` and ``best/`` directories swapped in atomically and verified before loading,
and the manager that decides when a run writes them.

Each directory holds ``model.safetensors`` (network parameters), ``optimizer.safetensors``
(optimizer state without the network weights), ``trainer_state.json`` and ``checksums.json``
(sha256 of the other three). A checkpoint is written into a hidden temporary sibling, every
file fsync'd, then renamed into place: the previous one becomes ``<name>.old`` and is deleted
only once the new one is in place, so a crash at any point leaves one complete checkpoint.

As in torchtitan, every stateful part hands its state over through ``state_dict()`` and takes it
back through ``load_state_dict()``: the network (:class:`ModelState`) and the optimizer
(:class:`OptimizerState`) into the safetensors files, the trainer's progress, the data order and
the health monitor into ``trainer_state.json``. :class:`CheckpointManager` owns the cadence.

Under a semi-auto parallel layout (model parallel, pipeline stages, optimizer sharding; Ascend only)
each rank holds slices, so every rank writes its own: the directory then holds ``layout.json`` (the
layout), ``trainer_state.json``, ``rank_<r>/model.safetensors`` and ``rank_<r>/optimizer.safetensors``
of every rank, ``strategy/rank_<r>.ckpt`` (the parameter layouts MindSpore's compiler wrote for rank
r) and ``checksums.json`` over all of them; rank 0 renames it into place after a barrier, so the
checkpoint folder must be on storage every node sees. :func:`merge_sharded` turns one into
``merged/model.safetensors`` and ``merged/optimizer.safetensors`` (full tensors) with MindSpore's
``unified_safetensors`` (after ``merge_pipeline_strategys`` with pipeline stages): the evaluator loads
the merged model, and a resume under the same layout loads the merged state before compiling, which
slices it again.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Protocol

import mindspore as ms
from mindspore import log as ms_log
from mindspore import nn

from common.errors import KilnError
from common.faults import fault_point
from common.files import atomic_write_json, file_sha256, fsync_dir
from stages.train.distributed import World, agree_to_stop, barrier

NAMES = ("latest", "best")
MODEL_FILE = "model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "trainer_state.json"
CHECKSUMS_FILE = "checksums.json"
DATA_FILES = (MODEL_FILE, OPTIMIZER_FILE, STATE_FILE)
LAYOUT_FILE = "layout.json"
STRATEGY_DIR = "strategy"
MERGED_DIR = "merged"
MERGED_STRATEGY = "merged_strategy.ckpt"
PART_NAMES = ("model", "optimizer")


class CheckpointError(KilnError):
    """A checkpoint is missing, corrupt, or does not match the network or optimizer."""


class Preempted(KilnError):
    """SIGTERM arrived; ``latest`` was saved and the run can be resumed by rerunning the command."""


class Stateful(Protocol):
    """A part of the training run whose state a checkpoint keeps."""

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


def _key_error(path: Path | str, missing: Iterable[str], extra: Iterable[str]) -> CheckpointError | None:
    missing, extra = sorted(missing), sorted(extra)
    if not missing and not extra:
        return None
    return CheckpointError(f"{path}: keys do not match the target: missing {missing}, extra {extra}")


@contextmanager
def _quiet_mindspore_warnings() -> Iterator[None]:
    """Hold back MindSpore's own warnings (its logger below ERROR) for the block."""
    logger = ms_log._get_logger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _load_into(file: str, target: nn.Cell, params: dict[str, ms.Parameter], ignored: set[str]) -> None:
    """Strict load; every target parameter outside ``ignored`` and every checkpoint key must be loaded.
    MindSpore's warning that the ``ignored`` ones were not loaded is held back: the check here is exact."""
    with _quiet_mindspore_warnings():
        not_loaded, unused = ms.load_param_into_net(target, params, strict_load=True)
    error = _key_error(file, set(not_loaded) - ignored, unused)
    if error:
        raise error


class ModelState:
    """The network's parameters, kept in model.safetensors."""

    file = MODEL_FILE

    def __init__(self, net: nn.Cell):
        self.net = net

    def state_dict(self) -> dict[str, ms.Parameter]:
        return self.net.parameters_dict()

    def load_state_dict(self, state: dict[str, ms.Parameter]) -> None:
        _load_into(self.file, self.net, state, set())


class OptimizerState:
    """The optimizer's own state (moments, step counter) without the network's weights, kept in
    optimizer.safetensors."""

    file = OPTIMIZER_FILE

    def __init__(self, optimizer: nn.Optimizer, net: nn.Cell):
        self.optimizer = optimizer
        self.net_keys = set(net.parameters_dict())

    def state_dict(self) -> dict[str, ms.Parameter]:
        return {k: v for k, v in self.optimizer.parameters_dict().items() if k not in self.net_keys}

    def load_state_dict(self, state: dict[str, ms.Parameter]) -> None:
        _load_into(self.file, self.optimizer, state, self.net_keys)


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
    for part in (ModelState(net), OptimizerState(optimizer, net)):
        ms.save_checkpoint(part.state_dict(), str(tmp / part.file), format="safetensors")
        fsync_dir(tmp / part.file)
    atomic_write_json(tmp / STATE_FILE, state, sort_keys=True)
    atomic_write_json(tmp / CHECKSUMS_FILE, {f: file_sha256(tmp / f) for f in DATA_FILES}, sort_keys=True)
    fsync_dir(tmp)
    fault_point("train.checkpoint")
    _swap_into_place(root, name, tmp)
    return root / name


def checkpoint_dir(root: Path, name: str) -> Path | None:
    """The complete directory of checkpoint ``name``: ``name/``, or ``name.old/`` after a crash between renames."""
    _check_name(name)
    for candidate in (Path(root) / name, Path(root) / f"{name}.old"):
        if candidate.is_dir():
            return candidate
    return None


def verify_checksums(directory: Path) -> None:
    """Compare every file against ``checksums.json``; raise CheckpointError naming the first file that differs."""
    _verify_listing(directory, DATA_FILES, str(sorted(DATA_FILES)))


def _verify_listing(directory: Path, files: Sequence[str], which: str) -> None:
    """Every one of ``files`` present in ``directory`` with the sha256 its ``checksums.json`` records, which must list
    exactly them (``which`` names them in the error); raise CheckpointError naming the first that is not."""
    listing = directory / CHECKSUMS_FILE
    try:
        expected = json.loads(listing.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{listing}: unreadable checksum file ({exc})") from exc
    if not isinstance(expected, dict) or sorted(expected) != sorted(files):
        raise CheckpointError(f"{listing}: must list exactly {which}")
    for name in files:
        path = directory / name
        if not path.is_file():
            raise CheckpointError(f"{path}: missing")
        if file_sha256(path) != expected[name]:
            raise CheckpointError(f"{path}: sha256 does not match {CHECKSUMS_FILE} (corrupt file)")


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


def _load_dir(directory: Path, parts: Sequence[ModelState | OptimizerState]) -> dict[str, Any]:
    files = directory
    if is_sharded(directory):
        verify_sharded_checksums(directory)
        files = merge_sharded(directory)
    else:
        verify_checksums(directory)
    try:
        state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CheckpointError(f"{directory / STATE_FILE}: unreadable ({exc})") from exc
    loads = [(part, _read_params(files / part.file, part.state_dict())) for part in parts]
    for part, params in loads:
        part.load_state_dict(params)
    return state


def load_checkpoint(root: Path, net: nn.Cell, optimizer: nn.Optimizer | None = None, *,
                    weights_only: bool = False) -> dict[str, Any]:
    """Load ``root/latest`` (or ``root/best`` with a warning when latest is missing or invalid); return the
    trainer state.

    Checksums, keys and shapes are verified before anything is loaded. ``weights_only`` (or no
    ``optimizer``) leaves the optimizer untouched. Parameters are loaded with ``set_data``, which a
    step compiled before the load does not see: load before the first compiled step. A sharded
    checkpoint is merged first (:func:`merge_sharded`, kept in its ``merged/``) and loaded whole.
    """
    parts: list[ModelState | OptimizerState] = [ModelState(net)]
    if optimizer is not None and not weights_only:
        parts.append(OptimizerState(optimizer, net))
    failures = []
    for name in NAMES:
        directory = checkpoint_dir(root, name)
        if directory is None:
            failures.append(f"{Path(root) / name}: missing")
            continue
        try:
            state = _load_dir(directory, parts)
        except CheckpointError as exc:
            failures.append(str(exc))
            continue
        if failures:
            warnings.warn(f"checkpoint 'latest' is unusable ({failures[0]}); resuming from {directory} instead",
                          RuntimeWarning, stacklevel=2)
        return state
    raise CheckpointError(f"no usable checkpoint under {root}: " + "; ".join(failures))


# -- sharded checkpoints (semi-auto parallel layouts) ------------------------------------------------------------

def is_sharded(directory: Path) -> bool:
    """Whether ``directory`` is a checkpoint written rank by rank under a semi-auto parallel layout."""
    return (Path(directory) / LAYOUT_FILE).is_file()


def read_layout(directory: Path) -> dict[str, Any]:
    """The layout a sharded checkpoint was written under (see :func:`stages.train.layout.layout_record`)."""
    path = Path(directory) / LAYOUT_FILE
    try:
        layout = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: unreadable ({exc})") from exc
    if not isinstance(layout, dict) or not isinstance(layout.get("world_size"), int) or layout["world_size"] < 1:
        raise CheckpointError(f"{path}: must record the layout's world_size")
    return layout


def rank_dir(directory: Path, rank: int) -> Path:
    return Path(directory) / f"rank_{rank}"


def sharded_files(layout: dict[str, Any]) -> list[str]:
    """Every file a complete sharded checkpoint of ``layout`` holds besides checksums.json, relative to it."""
    files = [LAYOUT_FILE, STATE_FILE]
    for rank in range(layout["world_size"]):
        files += [f"rank_{rank}/{MODEL_FILE}", f"rank_{rank}/{OPTIMIZER_FILE}", f"{STRATEGY_DIR}/rank_{rank}.ckpt"]
    return files


def verify_sharded_checksums(directory: Path) -> None:
    """Every file of a sharded checkpoint present and equal to ``checksums.json``; raise naming the first that is not."""
    directory = Path(directory)
    files = sharded_files(read_layout(directory))
    _verify_listing(directory, files, f"the {len(files)} files of the layout (layout.json, trainer_state.json and "
                                      "every rank's model, optimizer and strategy)")


def save_sharded_checkpoint(root: Path, name: str, net: nn.Cell, optimizer: nn.Optimizer, state: dict[str, Any], *,
                            world: World, layout: dict[str, Any], strategy_file: Path, tag: str) -> Path:
    """Write ``root/name/`` from every rank (each its own slices and strategy file); rank 0 writes the state, the
    layout and the checksums and swaps the directory into place. Every rank must call this at the same step with
    the same ``tag``."""
    _check_name(name)
    root = Path(root)
    tmp = root / f".{name}.tmp-{tag}"
    if world.is_main:
        root.mkdir(parents=True, exist_ok=True)
        for stale in root.glob(f".{name}.tmp-*"):
            shutil.rmtree(stale)
        (tmp / STRATEGY_DIR).mkdir(parents=True)
    barrier(world)
    mine = rank_dir(tmp, world.rank)
    mine.mkdir()
    for part in (ModelState(net), OptimizerState(optimizer, net)):
        ms.save_checkpoint(part.state_dict(), str(mine / part.file), format="safetensors")
        fsync_dir(mine / part.file)
    strategy_copy = tmp / STRATEGY_DIR / f"rank_{world.rank}.ckpt"
    try:
        shutil.copyfile(strategy_file, strategy_copy)
    except OSError as exc:
        raise CheckpointError(f"{strategy_file}: the parallel strategy file MindSpore writes when it compiles the "
                              f"step is missing ({exc}); a sharded checkpoint cannot be merged without it") from exc
    fsync_dir(strategy_copy)
    fsync_dir(mine)
    barrier(world)
    final = root / name
    if world.is_main:
        atomic_write_json(tmp / STATE_FILE, state, sort_keys=True)
        atomic_write_json(tmp / LAYOUT_FILE, layout, sort_keys=True)
        atomic_write_json(tmp / CHECKSUMS_FILE, {f: file_sha256(tmp / f) for f in sharded_files(layout)},
                          sort_keys=True)
        fsync_dir(tmp)
        _swap_into_place(root, name, tmp)
    barrier(world)
    return final


def _swap_into_place(root: Path, name: str, tmp: Path) -> None:
    """Rename ``tmp`` to ``root/name``, keeping the previous one as ``name.old`` until the new one is in place."""
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


def _merged_ok(merged: Path) -> bool:
    try:
        _verify_listing(merged, [f"{part}.safetensors" for part in PART_NAMES], "the merged parts")
    except CheckpointError:
        return False
    return True


def _strategy_for_merge(directory: Path, layout: dict[str, Any], work: Path) -> Path:
    """One strategy file covering every parameter: rank 0's without pipeline stages (every rank's is the same);
    with them, each stage's merged by MindSpore's ``merge_pipeline_strategys``. An optimizer moment
    (``adam_m.<name>``, ``adam_v.<name>``) the file does not list takes its parameter's layout: it has the
    parameter's shape and, without optimizer sharding, its split."""
    strategy_dir = directory / STRATEGY_DIR
    source = strategy_dir / "rank_0.ckpt"
    if int(layout.get("pipeline_stages", 1)) > 1:
        source = work / "pipeline_strategy.ckpt"
        ms.parallel.merge_pipeline_strategys(str(strategy_dir), str(source))
    from mindspore.train import node_strategy_pb2

    strategy = node_strategy_pb2.ParallelStrategyMap()
    try:
        strategy.ParseFromString(source.read_bytes())
    except Exception as exc:
        raise CheckpointError(f"{source}: not a MindSpore parallel strategy file ({exc})") from exc
    items = {item.param_name: item for item in strategy.parallel_layout_item}
    for name, item in list(items.items()):
        stage, _, param = name.rpartition("-") if "-" in name else ("", "", name)
        for moment in ("adam_m", "adam_v"):
            key = f"{stage}-{moment}.{param}" if stage else f"{moment}.{param}"
            if key not in items:
                copy = strategy.parallel_layout_item.add()
                copy.CopyFrom(item)
                copy.param_name = key
                items[key] = copy
    merged = work / MERGED_STRATEGY
    merged.write_bytes(strategy.SerializeToString())
    return merged


def _combine_parts(parts_dir: Path, out: Path) -> None:
    """The part*.safetensors and hyper_param.safetensors that ``unified_safetensors`` writes, as one file."""
    from safetensors.numpy import load_file, save_file

    tensors: dict[str, Any] = {}
    for path in sorted(parts_dir.glob("*.safetensors")):
        tensors.update(load_file(str(path)))
    if not tensors:
        raise CheckpointError(f"{parts_dir}: merging wrote no tensors")
    save_file(tensors, str(out), metadata={"format": "ms"})
    fsync_dir(out)


def merge_sharded(directory: Path) -> Path:
    """``directory/merged/`` with ``model.safetensors`` and ``optimizer.safetensors`` holding full tensors, made from
    every rank's slices and strategy file with MindSpore's ``unified_safetensors`` (runs on CPU); kept once made
    and verified by its own checksums.json. Returns the merged folder."""
    directory = Path(directory)
    merged = directory / MERGED_DIR
    if _merged_ok(merged):
        return merged
    layout = read_layout(directory)
    work = directory / f".{MERGED_DIR}.tmp-{os.getpid()}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        strategy = _strategy_for_merge(directory, layout, work)
        for part in PART_NAMES:
            parts_dir = work / f"{part}-parts"
            try:
                ms.parallel.unified_safetensors(str(directory), str(strategy), str(parts_dir), file_suffix=part,
                                                max_process_num=1)
            except Exception as exc:
                raise CheckpointError(f"{directory}: merging the {part} slices failed ({exc})") from exc
            _combine_parts(parts_dir, work / f"{part}.safetensors")
            shutil.rmtree(parts_dir)
        for leftover in (work / MERGED_STRATEGY, work / "pipeline_strategy.ckpt"):
            if leftover.exists():
                leftover.unlink()
        atomic_write_json(work / CHECKSUMS_FILE,
                          {f"{p}.safetensors": file_sha256(work / f"{p}.safetensors") for p in PART_NAMES},
                          sort_keys=True)
        fsync_dir(work)
        if merged.exists():
            shutil.rmtree(merged)
        work.rename(merged)
        fsync_dir(directory)
    finally:
        if affinity is not None:
            os.sched_setaffinity(0, affinity)  # unified_safetensors widens the process's CPU affinity
        if work.exists():
            shutil.rmtree(work)
    return merged


class CheckpointManager:
    """The checkpoints of one run under ``root``: the resume, and when ``latest`` and ``best`` are written.

    ``latest`` is saved every ``every`` steps (0: only at the end), at step ``total_steps`` and on
    SIGTERM, ``best`` whenever the validation loss improves; rank 0 alone writes. trainer_state.json
    holds the ``record`` of the run (what it trains on which tokens), ``fingerprint`` and the state of
    each of ``parts`` and of the manager itself (the best validation loss), each part owning its keys.
    Inside ``with manager:`` SIGTERM makes :meth:`step_done` save ``latest`` and raise :class:`Preempted`.
    With a semi-auto ``layout`` (and the ``strategy_file`` the compiler writes) every rank writes its slices
    (:func:`save_sharded_checkpoint`), and a resume requires a checkpoint of the same layout.
    """

    def __init__(self, root: Path, net: nn.Cell, optimizer: nn.Optimizer, parts: Sequence[Stateful], *,
                 fingerprint: str, record: dict[str, Any], every: int, total_steps: int, world: World,
                 say: Callable[[str], None], layout: dict[str, Any] | None = None,
                 strategy_file: Path | None = None):
        self.layout = layout
        self.strategy_file = strategy_file
        self.root = Path(root)
        self.net = net
        self.optimizer = optimizer
        self.parts = [*parts, self]
        self.fingerprint = fingerprint
        self.record = record
        self.every = every
        self.total_steps = total_steps
        self.world = world
        self.say = say
        self.best_val_loss: float | None = None
        self._stop_requested = False
        self._previous_handler: Any = None

    def state_dict(self) -> dict[str, Any]:
        """The lowest validation loss so far (None before the first validation)."""
        return {"best_val_loss": self.best_val_loss}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best_val_loss = state["best_val_loss"]

    def load(self) -> bool:
        """Resume every part from ``latest`` (from ``best``, with a warning, when latest is unusable, and then
        replace latest at once); False when the run has no checkpoint yet."""
        if all(checkpoint_dir(self.root, name) is None for name in NAMES):
            return False
        self._check_layout()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            state = load_checkpoint(self.root, self.net, self.optimizer)
        for warning in caught:
            self.say(f"WARNING: {warning.message}")
        if state.get("config_fingerprint") != self.fingerprint:
            raise CheckpointError(
                f"{self.root}: written by a run with a different model, optimizer, step count, batch, "
                f"seq_len or seed (fingerprint {state.get('config_fingerprint')} != {self.fingerprint}); "
                f"use a new run directory, or --restart to start over in this one")
        for part in self.parts:
            part.load_state_dict(state)
        if caught:
            self.save("latest")  # so that a crash before the next save cannot meet the unusable one again
        return True

    def _check_layout(self) -> None:
        """Refuse to resume across layouts, and prepare a sharded checkpoint's merged state (rank 0 merges, the
        others wait) so that every rank loads it whole before compiling."""
        for name in NAMES:
            directory = checkpoint_dir(self.root, name)
            if directory is None:
                continue
            written = read_layout(directory) if is_sharded(directory) else None
            if written != self.layout:
                described = "plain (one process or data parallel)" if written is None else f"the layout {written}"
                wanted = "plain" if self.layout is None else f"the layout {self.layout}"
                raise CheckpointError(f"{directory}: written under {described}, but this run is {wanted}; resume on "
                                      f"the same parallel layout, or start a new run directory")
            if written is not None and self.world.is_main:
                try:
                    verify_sharded_checksums(directory)
                    merge_sharded(directory)
                except CheckpointError as exc:
                    self.say(f"WARNING: {directory} cannot be merged ({exc})")
        if self.layout is not None:
            barrier(self.world)

    def save(self, name: str) -> None:
        """Write checkpoint ``name``: rank 0 alone when the parameters are identical on every rank (plain data
        parallel), every rank its own slices under a semi-auto layout."""
        if self.layout is None and not self.world.is_main:
            return
        state = {**self.record, "config_fingerprint": self.fingerprint}
        for part in self.parts:
            state.update(part.state_dict())
        if self.layout is None:
            save_checkpoint(self.root, name, self.net, self.optimizer, state)
            return
        save_sharded_checkpoint(self.root, name, self.net, self.optimizer, state, world=self.world,
                                layout=self.layout, strategy_file=self.strategy_file, tag=f"step{state.get('step')}")

    def step_done(self, step: int) -> None:
        """After ``step`` steps: save ``latest`` when it is due; after SIGTERM on any rank, save it and raise
        :class:`Preempted` on every rank."""
        stop = agree_to_stop(self._stop_requested, self.world)
        if stop or step == self.total_steps or (self.every and step % self.every == 0):
            self.save("latest")
        if stop:
            barrier(self.world)
            self.say(f"SIGTERM: saved {self.root / 'latest'} at step {step}; rerun the same command to resume")
            raise Preempted(f"stopped by SIGTERM at step {step}")

    def validated(self, loss: float) -> bool:
        """Record a validation loss; save ``best`` and return True when it is the lowest so far."""
        improved = self.best_val_loss is None or loss < self.best_val_loss
        if improved:
            self.best_val_loss = loss
            self.save("best")
        return improved

    def _request_stop(self, signum: int, frame: FrameType | None) -> None:
        self._stop_requested = True

    def __enter__(self) -> CheckpointManager:
        self._previous_handler = signal.signal(signal.SIGTERM, self._request_stop)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        signal.signal(signal.SIGTERM, self._previous_handler)
