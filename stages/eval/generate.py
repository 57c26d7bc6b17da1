"""Sample text for a quick look at a model: greedy, or top-k / temperature sampling with a seeded numpy RNG.

Every new token reruns the forward pass over the whole context, truncated to its last max_seq_len
tokens: there is no KV cache, which is simple and correct and fast enough for a few short samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stages.eval.errors import EvalError
from stages.eval.forward import CompiledForward


@dataclass(frozen=True)
class Generation:
    """The new tokens (EOS excluded) and whether EOS ended them before the token limit."""

    tokens: tuple[int, ...]
    stopped_at_eos: bool


def check_sampling(max_new_tokens: int, temperature: float, top_k: int) -> None:
    """Refuse settings that cannot sample."""
    if max_new_tokens < 1:
        raise EvalError(f"max new tokens must be positive, got {max_new_tokens}")
    if not temperature >= 0:
        raise EvalError(f"temperature must be 0 (greedy) or positive, got {temperature}")
    if top_k < 0:
        raise EvalError(f"top-k must be 0 (no limit) or positive, got {top_k}")


def next_token(logits: np.ndarray, rng: np.random.Generator, temperature: float, top_k: int) -> int:
    """Argmax when ``temperature`` is 0; otherwise a draw from softmax(logits / temperature) over the
    ``top_k`` most likely tokens (all of them when top_k is 0)."""
    if temperature == 0:
        return int(np.argmax(logits))
    scaled = logits.astype(np.float64) / temperature
    candidates = np.arange(scaled.size)
    if 0 < top_k < scaled.size:
        candidates = np.argpartition(scaled, -top_k)[-top_k:]
    weights = np.exp(scaled[candidates] - scaled[candidates].max())
    return int(rng.choice(candidates, p=weights / weights.sum()))


def generate(forward: CompiledForward, context: Sequence[int], *, max_new_tokens: int, eos_id: int,
             temperature: float = 0.0, top_k: int = 0, seed: int = 0) -> Generation:
    """Extend ``context`` (token ids, at least one) until EOS or ``max_new_tokens`` new tokens."""
    check_sampling(max_new_tokens, temperature, top_k)
    if not context:
        raise EvalError("generation needs at least one context token")
    rng = np.random.default_rng(seed)
    ids = list(context)
    new: list[int] = []
    for _ in range(max_new_tokens):
        token = next_token(forward.next_logits(ids[-forward.max_seq_len:]), rng, temperature, top_k)
        if token == eos_id:
            return Generation(tokens=tuple(new), stopped_at_eos=True)
        new.append(token)
        ids.append(token)
    return Generation(tokens=tuple(new), stopped_at_eos=False)
