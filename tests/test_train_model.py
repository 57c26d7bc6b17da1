"""Trainer model: config validation, norms against numpy, causality, positions, init scale."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from common.errors import ConfigError
from stages.train.config import ModelConfig, load_trainer_config
from stages.train.model import (
    FLASH_MASK_SIZE,
    GPT,
    Attention,
    LayerNorm,
    RMSNorm,
    apply_rope,
    count_parameters,
    rope_tables,
)
from stages.train.step import setup_cpu

setup_cpu(1)

TINY = {"vocab_size": 64, "d_model": 32, "n_layers": 2, "n_heads": 4, "max_seq_len": 16}


@pytest.mark.parametrize(("change", "message"), [
    ({"n_heads": 5}, "model.n_heads: must divide model.d_model"),
    ({"norm": "batchnorm"}, "model.norm"),
    ({"mlp": "relu"}, "model.mlp"),
    ({"position": "alibi"}, "model.position"),
    ({"attention": "sdpa"}, "model.attention"),
    ({"n_layers": 0}, "model.n_layers: Input should be greater than 0"),
    ({"d_model": 36, "n_heads": 12}, "even head dimension"),
])
def test_config_errors_name_the_key(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_trainer_config(None, [f"model.{key}={value!r}" for key, value in {**TINY, **change}.items()])


def test_hidden_dim_defaults() -> None:
    assert ModelConfig(**TINY, mlp="gelu").hidden_dim == 128
    assert ModelConfig(**TINY, mlp="swiglu").hidden_dim == 128
    assert ModelConfig(**{**TINY, "d_model": 768, "n_heads": 12}, mlp="swiglu").hidden_dim == 2048
    assert ModelConfig(**TINY, ffn_dim=40).hidden_dim == 40


def test_norms_match_numpy() -> None:
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype(np.float32) * 3 + 1
    rms = RMSNorm(8, 1e-6)(Tensor(x)).asnumpy()
    ln = LayerNorm(8, 1e-6)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(rms, x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6), rtol=1e-5, atol=1e-5)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(ln, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("norm", "mlp", "position", "tied"), [
    ("rmsnorm", "swiglu", "rope", True),
    ("layernorm", "gelu", "learned", False),
])
def test_forward_is_causal_fp32_and_shaped(norm: str, mlp: str, position: str, tied: bool) -> None:
    model = GPT(ModelConfig(**TINY, norm=norm, mlp=mlp, position=position, tie_embeddings=tied))
    tokens = np.random.default_rng(1).integers(0, 64, size=(2, 16)).astype(np.int32)
    changed = tokens.copy()
    changed[:, 10:] = (changed[:, 10:] + 1) % 64
    logits = model(Tensor(tokens)).asnumpy()
    logits_changed = model(Tensor(changed)).asnumpy()
    assert logits.shape == (2, 16, 64) and logits.dtype == np.float32
    np.testing.assert_allclose(logits[:, :10], logits_changed[:, :10], rtol=1e-5, atol=1e-5)
    assert not np.allclose(logits[:, 10:], logits_changed[:, 10:])


def test_learned_positions_matter() -> None:
    model = GPT(ModelConfig(**TINY, position="learned"))
    logits = model(Tensor(np.full((1, 16), 7, dtype=np.int32))).asnumpy()
    assert not np.allclose(logits[0, 1], logits[0, 8])


def test_rope_scores_depend_on_relative_position_only() -> None:
    cos, sin = rope_tables(8, 16, 10000.0)
    rng = np.random.default_rng(2)
    q = np.broadcast_to(rng.normal(size=8).astype(np.float32), (1, 1, 16, 8))
    k = np.broadcast_to(rng.normal(size=8).astype(np.float32), (1, 1, 16, 8))
    rq = apply_rope(Tensor(np.ascontiguousarray(q)), cos, sin).asnumpy()[0, 0]
    rk = apply_rope(Tensor(np.ascontiguousarray(k)), cos, sin).asnumpy()[0, 0]
    np.testing.assert_allclose(rq[5] @ rk[2], rq[13] @ rk[10], rtol=1e-4)
    assert not np.isclose(rq[5] @ rk[2], rq[5] @ rk[4], rtol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(rq, axis=-1), np.linalg.norm(q[0, 0], axis=-1), rtol=1e-5)


def test_parameters_and_init_scale() -> None:
    cfg = ModelConfig(**{**TINY, "d_model": 64, "vocab_size": 512, "max_seq_len": 8}, mlp="gelu")
    model = GPT(cfg)
    params = {p.name: p.asnumpy() for p in model.trainable_params()}
    per_block = 4 * 64 * 64 + 2 * 64 * 256 + 2 * 64
    assert count_parameters(model) == 512 * 64 + 2 * per_block + 64
    out_std = 0.02 / math.sqrt(2 * cfg.n_layers)
    assert abs(params["wte.embedding_table"].std() - 0.02 * 0.88) < 0.002
    assert np.abs(params["wte.embedding_table"]).max() <= 0.04 + 1e-6
    assert abs(params["blocks.0.mlp.down.weight"].std() - out_std * 0.88) < 0.001
    assert abs(params["blocks.1.attn.proj.weight"].std() - out_std * 0.88) < 0.001
    assert np.all(params["blocks.0.attn_norm.weight"] == 1)


def test_bfloat16_config_sets_the_bf16_flag_on_every_dense_cell_only_and_keeps_fp32_master_weights() -> None:
    cfg = ModelConfig(vocab_size=64, d_model=16, n_layers=2, n_heads=2, max_seq_len=8, tie_embeddings=False)
    dense = [name for name, cell in GPT(cfg).cells_and_names() if isinstance(cell, nn.Dense)]
    assert len(dense) == 2 * 5 + 1  # qkv, proj, up, gate, down per block, and the head
    assert not any(cell.get_flags().get("bf16") for _, cell in GPT(cfg).cells_and_names())  # auto on CPU: fp32
    model = GPT(cfg.replace(compute_dtype="bfloat16"))
    flagged = {name for name, cell in model.cells_and_names() if cell.get_flags().get("bf16")}
    assert set(dense) <= flagged and not any("norm" in name for name in flagged)
    assert all(p.dtype == ms.float32 for p in model.trainable_params())


@contextlib.contextmanager
def pynative() -> Iterator[None]:
    """Run cells op by op (so that a Python stand-in for an Ascend-only op is called), then back to graph mode."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        yield
    finally:
        ms.set_context(mode=ms.GRAPH_MODE)


def test_flash_attention_builds_on_cpu_and_calls_flash_attention_score_instead_of_the_matmul_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What can be checked of attention="flash" without an NPU (FlashAttentionScore has no CPU kernel): each block is
    built for it with the compressed causal mask, and the forward pass hands FlashAttentionScore BNSD query, key and
    value with the right head count, scale and sparse mode instead of taking the matmul path. A numpy stand-in that
    follows the op's documented semantics then gives the same logits as the matmul model with the same weights."""
    cfg = ModelConfig(**{**TINY, "d_model": 64}, attention="flash")  # head_dim 16: FlashAttentionScore wants D % 16 == 0
    flash = GPT(cfg)
    matmul = GPT(cfg.replace(attention="matmul"))
    for name, param in matmul.parameters_dict().items():
        param.set_data(flash.parameters_dict()[name].data)
    compressed = np.triu(np.ones((FLASH_MASK_SIZE, FLASH_MASK_SIZE), np.uint8), 1)  # 1 = discard, as the op wants
    for block in flash.blocks:
        attn = block.attn
        assert attn.flash and (attn.n_heads, attn.head_dim) == (4, 16) and attn.scale == 1 / math.sqrt(16)
        assert attn.causal_mask.dtype == ms.uint8
        np.testing.assert_array_equal(attn.causal_mask.asnumpy(), compressed)
    assert not any(block.attn.flash for block in matmul.blocks)
    tokens = Tensor(np.random.default_rng(3).integers(0, 64, size=(2, 12)), ms.int32)
    expected = matmul(tokens).asnumpy()

    calls = []

    def flash_attention_score(query, key, value, head_num, *, attn_mask=None, scalar_value=1.0, input_layout="BSH",
                              sparse_mode=0, **others):
        calls.append({"shapes": (query.shape, key.shape, value.shape), "head_num": head_num, "scale": scalar_value,
                      "layout": input_layout, "sparse_mode": sparse_mode, "mask": attn_mask, "others": others})
        q, k, v = (x.asnumpy().astype(np.float64) for x in (query, key, value))
        assert input_layout == "BNSD" and sparse_mode == 2  # leftUpCausal: the top-left S1 x S2 of the 2048² mask
        keep = attn_mask.asnumpy()[:q.shape[2], :k.shape[2]] == 0
        scores = np.where(keep, q @ k.swapaxes(-1, -2) * scalar_value, -np.inf)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        return Tensor((probs @ v).astype(np.float32))

    def no_matmul(*args, **kwargs):
        raise AssertionError("attention='flash' took the matmul path")

    monkeypatch.setattr(ops, "flash_attention_score", flash_attention_score)
    monkeypatch.setattr(Attention, "_matmul_attention", no_matmul)
    with pynative():
        logits = flash(tokens).asnumpy()
    assert len(calls) == cfg.n_layers
    for call, block in zip(calls, flash.blocks, strict=True):
        assert call["shapes"] == ((2, 4, 12, 16),) * 3  # (batch, heads, seq, head_dim): BNSD
        assert (call["head_num"], call["scale"], call["layout"], call["sparse_mode"]) == (4, 0.25, "BNSD", 2)
        assert call["mask"] is block.attn.causal_mask and call["others"] == {}
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
