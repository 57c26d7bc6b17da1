"""Rebuild a trained model from its checkpoints: the ModelConfig recorded in trainer_state.json, then the weights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.config_loader import validate
from common.errors import ConfigError
from stages.eval.errors import EvalError
from stages.train.checkpoint import NAMES, STATE_FILE, checkpoint_dir, load_checkpoint
from stages.train.config import ModelConfig, TrainerConfig
from stages.train.model import GPT


def checkpoint_root(path: Path) -> Path:
    """The folder holding ``latest/`` and ``best/``: ``path`` itself, or ``path/checkpoints`` for a run folder."""
    path = Path(path)
    if not path.is_dir():
        raise EvalError(f"{path}: checkpoint folder not found")
    if any(checkpoint_dir(path, name) for name in NAMES):
        return path
    if any(checkpoint_dir(path / "checkpoints", name) for name in NAMES):
        return path / "checkpoints"
    raise EvalError(f"{path}: holds no checkpoint (expected {' or '.join(n + '/' for n in NAMES)}, "
                    "as under RUN_DIR/checkpoints)")


def read_state(root: Path) -> dict[str, Any]:
    """The trainer state of ``latest`` (or of ``best`` when latest's is missing or unreadable), with its model."""
    failures = []
    for name in NAMES:
        directory = checkpoint_dir(root, name)
        if directory is None:
            continue
        path = directory / STATE_FILE
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            failures.append(f"{path}: unreadable ({err})")
            continue
        if not isinstance(state, dict) or not isinstance(state.get("model"), dict):
            failures.append(f"{path}: no 'model' section (the model's configuration)")
            continue
        return state
    raise EvalError(f"{root}: no usable trainer state: " + "; ".join(failures))


def model_config(state: dict[str, Any], root: Path) -> ModelConfig:
    """The ModelConfig recorded in ``state``."""
    try:
        return validate(TrainerConfig, {"model": state["model"]}, where=STATE_FILE).model
    except ConfigError as err:
        raise EvalError(f"{root}: the recorded model configuration is invalid ({err})") from None


def load_model(root: Path, state: dict[str, Any]) -> tuple[GPT, dict[str, Any]]:
    """Build the model ``state`` records and load its weights (checksums verified, strict keys, no optimizer);
    return it with the state of the checkpoint actually loaded.

    A sharded checkpoint (written rank by rank under model or pipeline parallelism, ``layout.json`` beside
    its ``rank_<r>/`` folders) is merged into ``merged/model.safetensors`` first by
    :func:`stages.train.checkpoint.merge_sharded`, and the whole model is loaded from there."""
    model = GPT(model_config(state, root))
    loaded = load_checkpoint(root, model, weights_only=True)
    if loaded.get("model") != state["model"]:
        raise EvalError(f"{root}: the checkpoint loaded records the model {loaded.get('model')}, but the model was "
                        f"built from {state['model']} (latest/ and best/ disagree)")
    return model, loaded
