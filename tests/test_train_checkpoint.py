"""Checkpoints: bit-exact round trip and resume, checksum and strict-key refusals, fallback to best, crash recovery."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from safetensors.numpy import load_file, save_file

from stages.train.checkpoint import (
    CHECKSUMS_FILE,
    DATA_FILES,
    MODEL_FILE,
    CheckpointError,
    file_sha256,
    load_checkpoint,
    save_checkpoint,
)
from stages.train.config import ModelConfig, OptimConfig
from stages.train.model import GPT
from stages.train.optim import build_optimizer
from stages.train.step import make_train_step, setup_cpu

setup_cpu(1)

TINY = ModelConfig(vocab_size=64, d_model=16, n_layers=1, n_heads=2, max_seq_len=8)
OPTIM = OptimConfig(lr=3e-3, min_lr=3e-4, warmup_ratio=0.2)
TOTAL_STEPS = 6


def build() -> tuple[GPT, nn.AdamWeightDecay]:
    net = GPT(TINY)
    return net, build_optimizer(net, OPTIM, TOTAL_STEPS)


def batch(step: int) -> tuple[Tensor, Tensor]:
    window = np.random.default_rng(step).integers(1, 64, size=(2, 9)).astype(np.int32)
    return Tensor(window[:, :-1]), Tensor(window[:, 1:])


def train(net: GPT, optimizer: nn.AdamWeightDecay, start: int, steps: int) -> None:
    step_fn = make_train_step(net, optimizer, clip_norm=1.0)
    for step in range(start, start + steps):
        _, _, applied = step_fn(*batch(step))
        assert bool(applied.asnumpy())


def snapshot(cell: nn.Cell) -> dict[str, np.ndarray]:
    return {name: p.asnumpy().copy() for name, p in cell.parameters_dict().items()}


def assert_same(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype and actual[name].tobytes() == value.tobytes(), name


def rewrite_checksums(directory: Path) -> None:
    (directory / CHECKSUMS_FILE).write_text(json.dumps({f: file_sha256(directory / f) for f in DATA_FILES}))


@pytest.fixture(scope="module")
def trained() -> tuple[GPT, nn.AdamWeightDecay]:
    net, optimizer = build()
    train(net, optimizer, 0, 2)
    return net, optimizer


def test_round_trip_is_bit_exact(tmp_path: Path, trained) -> None:
    net, optimizer = trained
    state = {"step": 2, "tokens_seen": 32, "best_val_loss": 4.1, "config_fingerprint": "abc", "data_seed": 7}
    path = save_checkpoint(tmp_path, "latest", net, optimizer, state)
    assert sorted(f.name for f in path.iterdir()) == sorted([*DATA_FILES, CHECKSUMS_FILE])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]
    assert not any(k in load_file(str(path / "optimizer.safetensors")) for k in net.parameters_dict())

    fresh_net, fresh_opt = build()
    assert load_checkpoint(tmp_path, fresh_net, fresh_opt) == state
    assert_same(snapshot(fresh_net), snapshot(net))
    assert_same(snapshot(fresh_opt), snapshot(optimizer))
    assert np.any(fresh_opt.parameters_dict()["adam_v.wte.embedding_table"].asnumpy() != 0)


def test_flipped_byte_falls_back_to_best(tmp_path: Path, trained) -> None:
    net, optimizer = trained
    save_checkpoint(tmp_path, "best", net, optimizer, {"step": 1})
    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    model_file = tmp_path / "latest" / MODEL_FILE
    data = bytearray(model_file.read_bytes())
    data[-3] ^= 0x01
    model_file.write_bytes(bytes(data))

    fresh_net, fresh_opt = build()
    with pytest.warns(RuntimeWarning, match="model.safetensors"):
        assert load_checkpoint(tmp_path, fresh_net, fresh_opt) == {"step": 1}
    assert_same(snapshot(fresh_net), snapshot(net))

    (tmp_path / "best" / "trainer_state.json").write_text('{"step": 9}')
    with pytest.raises(CheckpointError, match="trainer_state.json: sha256"):
        load_checkpoint(tmp_path, *build())


def test_neither_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no usable checkpoint.*latest: missing.*best: missing"):
        load_checkpoint(tmp_path, *build())


@pytest.mark.parametrize("edit", ["missing", "extra"])
def test_key_mismatch_is_refused(tmp_path: Path, trained, edit: str) -> None:
    net, optimizer = trained
    directory = save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    tensors = load_file(str(directory / MODEL_FILE))
    if edit == "missing":
        del tensors["final_norm.weight"]
    else:
        tensors["extra.weight"] = np.zeros(3, np.float32)
    save_file(tensors, str(directory / MODEL_FILE))
    rewrite_checksums(directory)

    fresh_net, fresh_opt = build()
    before = snapshot(fresh_net)
    key = "final_norm.weight" if edit == "missing" else "extra.weight"
    with pytest.raises(CheckpointError, match=rf"{edit} \['{key}'\]"):
        load_checkpoint(tmp_path, fresh_net, fresh_opt)
    assert_same(snapshot(fresh_net), before)


@pytest.mark.parametrize(("file", "key"), [(MODEL_FILE, "final_norm.weight"),
                                         ("optimizer.safetensors", "adam_m.blocks.0.attn.qkv.weight")])
def test_shape_mismatch_is_refused_naming_the_parameter_and_both_shapes(tmp_path: Path, trained, file: str,
                                                                        key: str) -> None:
    net, optimizer = trained
    directory = save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    tensors = load_file(str(directory / file))
    target = tensors[key].shape
    bigger = (target[0] + 1, *target[1:])
    tensors[key] = np.zeros(bigger, np.float32)
    save_file(tensors, str(directory / file))
    rewrite_checksums(directory)

    fresh_net, fresh_opt = build()
    before_net, before_opt = snapshot(fresh_net), snapshot(fresh_opt)
    with pytest.raises(CheckpointError, match=rf"{file}: {re.escape(key)} has shape {re.escape(str(bigger))}, "
                                              rf"the target has {re.escape(str(target))}"):
        load_checkpoint(tmp_path, fresh_net, fresh_opt)
    assert_same(snapshot(fresh_net), before_net)  # nothing is loaded, not even the parts whose shapes match
    assert_same(snapshot(fresh_opt), before_opt)


def test_weights_only_leaves_the_optimizer_untouched(tmp_path: Path, trained) -> None:
    net, optimizer = trained
    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    fresh_net, fresh_opt = build()
    before = {k: v for k, v in snapshot(fresh_opt).items() if k not in fresh_net.parameters_dict()}
    assert load_checkpoint(tmp_path, fresh_net, fresh_opt, weights_only=True) == {"step": 2}
    assert_same(snapshot(fresh_net), snapshot(net))
    after = {k: v for k, v in snapshot(fresh_opt).items() if k not in fresh_net.parameters_dict()}
    assert_same(after, before)


def test_crash_between_renames_still_loads(tmp_path: Path, trained) -> None:
    net, optimizer = trained
    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    (tmp_path / "latest").rename(tmp_path / "latest.old")
    partial = tmp_path / ".latest.tmp-12345"
    partial.mkdir()
    (partial / MODEL_FILE).write_bytes(b"half")

    fresh_net, fresh_opt = build()
    assert load_checkpoint(tmp_path, fresh_net, fresh_opt) == {"step": 2}
    assert_same(snapshot(fresh_net), snapshot(net))

    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 3})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest"]
    assert load_checkpoint(tmp_path, *build()) == {"step": 3}


def test_crash_after_new_is_in_place_loads_the_new_one(tmp_path: Path, trained) -> None:
    net, optimizer = trained
    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 1})
    (tmp_path / "latest").rename(tmp_path / "keep")
    save_checkpoint(tmp_path, "latest", net, optimizer, {"step": 2})
    (tmp_path / "keep").rename(tmp_path / "latest.old")
    assert load_checkpoint(tmp_path, *build()) == {"step": 2}


def test_resume_matches_a_straight_run(tmp_path: Path) -> None:
    straight_net, straight_opt = build()
    start_net, start_opt = build()
    for name, p in start_net.parameters_dict().items():
        ops.assign(p, straight_net.parameters_dict()[name])
    train(straight_net, straight_opt, 0, TOTAL_STEPS)

    train(start_net, start_opt, 0, 3)
    save_checkpoint(tmp_path, "latest", start_net, start_opt, {"step": 3})
    resumed_net, resumed_opt = build()
    state = load_checkpoint(tmp_path, resumed_net, resumed_opt)
    train(resumed_net, resumed_opt, state["step"], TOTAL_STEPS - state["step"])

    assert int(resumed_opt.global_step.asnumpy()[0]) == TOTAL_STEPS
    assert_same(snapshot(resumed_net), snapshot(straight_net))
    assert_same(snapshot(resumed_opt), snapshot(straight_opt))
