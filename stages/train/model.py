"""A nanoGPT-style decoder-only transformer in MindSpore.

Norms and softmax run in fp32 whatever the compute dtype; with bf16 compute (Ascend) the Dense
layers and the tied head multiply in bf16 over fp32 master weights. Attention has one switch:
``FlashAttentionScore`` on Ascend, batched matmul + additive causal mask + fp32 softmax
elsewhere. Weights start from TruncatedNormal(init_std); the two output projections of
each block (attention and MLP) use init_std / sqrt(2 · n_layers).
"""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import TruncatedNormal, initializer

from stages.train.config import ModelConfig

MASK_VALUE = -1e9
FLASH_MASK_SIZE = 2048


def truncated_normal(std: float) -> TruncatedNormal:
    """TruncatedNormal(std) cut at two standard deviations."""
    return TruncatedNormal(sigma=std, a=-2 * std, b=2 * std)


def resolve_compute_dtype(choice: str) -> ms.Type:
    """``auto`` means bf16 exactly when the device is Ascend; bf16 kernels do not exist on the CPU backend."""
    if choice == "auto":
        return ms.bfloat16 if ms.get_context("device_target") == "Ascend" else ms.float32
    return ms.bfloat16 if choice == "bfloat16" else ms.float32


def use_flash_attention(choice: str) -> bool:
    """Resolve the attention switch: ``auto`` means FlashAttentionScore exactly when the device is Ascend."""
    if choice == "auto":
        return ms.get_context("device_target") == "Ascend"
    return choice == "flash"


class RMSNorm(nn.Cell):
    """x / sqrt(mean(x²) + eps) · weight, computed in fp32."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = Parameter(initializer("ones", (dim,), ms.float32), name="weight")

    def construct(self, x: Tensor) -> Tensor:
        x32 = ops.cast(x, ms.float32)
        y = x32 * ops.rsqrt(ops.mean(ops.square(x32), -1, keep_dims=True) + self.eps)
        return ops.cast(y * self.weight, x.dtype)


class LayerNorm(nn.Cell):
    """(x - mean) / sqrt(var + eps) · weight + bias, computed in fp32."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = Parameter(initializer("ones", (dim,), ms.float32), name="weight")
        self.bias = Parameter(initializer("zeros", (dim,), ms.float32), name="bias")

    def construct(self, x: Tensor) -> Tensor:
        x32 = ops.cast(x, ms.float32)
        centered = x32 - ops.mean(x32, -1, keep_dims=True)
        y = centered * ops.rsqrt(ops.mean(ops.square(centered), -1, keep_dims=True) + self.eps)
        return ops.cast(y * self.weight + self.bias, x.dtype)


def make_norm(cfg: ModelConfig) -> nn.Cell:
    return RMSNorm(cfg.d_model, cfg.norm_eps) if cfg.norm == "rmsnorm" else LayerNorm(cfg.d_model, cfg.norm_eps)


def rope_tables(head_dim: int, max_seq_len: int, theta: float) -> tuple[Tensor, Tensor]:
    """cos and sin of shape (max_seq_len, head_dim / 2) for rotate-half RoPE."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(max_seq_len, dtype=np.float64), inv_freq)
    return Tensor(np.cos(angles), ms.float32), Tensor(np.sin(angles), ms.float32)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate (batch, heads, seq, head_dim) by the positions' angles, in fp32; cos/sin are (seq, head_dim / 2)."""
    x32 = ops.cast(x, ms.float32)
    half = x.shape[-1] // 2
    x1 = x32[..., :half]
    x2 = x32[..., half:]
    rotated = ops.concat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1)
    return ops.cast(rotated, x.dtype)


class Attention(nn.Cell):
    """Causal multi-head self-attention with a fused QKV projection and optional RoPE."""

    def __init__(self, cfg: ModelConfig, out_std: float):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.head_dim
        self.scale = 1.0 / math.sqrt(cfg.head_dim)
        self.use_rope = cfg.position == "rope"
        self.flash = use_flash_attention(cfg.attention)
        self.qkv = nn.Dense(cfg.d_model, 3 * cfg.d_model, weight_init=truncated_normal(cfg.init_std), has_bias=False)
        self.proj = nn.Dense(cfg.d_model, cfg.d_model, weight_init=truncated_normal(out_std), has_bias=False)
        self.scores_matmul = ops.BatchMatMul(transpose_b=True)
        self.values_matmul = ops.BatchMatMul()
        if self.use_rope:
            self.cos, self.sin = rope_tables(cfg.head_dim, cfg.max_seq_len, cfg.rope_theta)
        if self.flash:
            self.causal_mask = Tensor(np.triu(np.ones((FLASH_MASK_SIZE, FLASH_MASK_SIZE), np.uint8), 1))
        else:
            upper = np.triu(np.ones((cfg.max_seq_len, cfg.max_seq_len), np.float32), 1)
            self.causal_mask = Tensor(upper * MASK_VALUE, ms.float32)

    def construct(self, x: Tensor) -> Tensor:
        batch, seq, width = x.shape
        qkv = self.qkv(x).reshape(batch, seq, 3, self.n_heads, self.head_dim)
        # One Unstack, not qkv[0], qkv[1], qkv[2]: each index is a StridedSlice kernel, and MindSpore's CPU one
        # is slow (3.6 ms per slice at d_model 128, batch 8 x 256, against 0.2 ms for the Unstack of all three).
        q, k, v = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 0)
        if self.use_rope:
            cos, sin = self.cos[:seq], self.sin[:seq]
            q = apply_rope(q, cos, sin)
            k = apply_rope(k, cos, sin)
        if self.flash:
            out = ops.flash_attention_score(q, k, v, self.n_heads, attn_mask=self.causal_mask,
                                            scalar_value=self.scale, input_layout="BNSD", sparse_mode=2)
        else:
            out = self._matmul_attention(q, k, v, seq)
        out = ops.transpose(out, (0, 2, 1, 3)).reshape(batch, seq, width)
        return self.proj(out)

    def _matmul_attention(self, q: Tensor, k: Tensor, v: Tensor, seq: int) -> Tensor:
        # BatchMatMul(transpose_b) rather than ops.matmul(q, kᵀ): no Transpose kernels forward or backward. The
        # softmax runs on a 2-D view: MindSpore's CPU ReduceSum in its backward is ~3x slower on 4-D tensors.
        scores = ops.cast(self.scores_matmul(q, k), ms.float32) * self.scale
        scores = scores + self.causal_mask[:seq, :seq]
        probs = ops.softmax(scores.reshape(-1, seq), -1).reshape(scores.shape)
        return self.values_matmul(ops.cast(probs, v.dtype), v)


class MLP(nn.Cell):
    """GELU: down(gelu(up x)). SwiGLU: down(silu(gate x) · up x)."""

    def __init__(self, cfg: ModelConfig, out_std: float):
        super().__init__()
        self.swiglu = cfg.mlp == "swiglu"
        init = truncated_normal(cfg.init_std)
        self.up = nn.Dense(cfg.d_model, cfg.hidden_dim, weight_init=init, has_bias=False)
        if self.swiglu:
            self.gate = nn.Dense(cfg.d_model, cfg.hidden_dim, weight_init=init, has_bias=False)
        self.down = nn.Dense(cfg.hidden_dim, cfg.d_model, weight_init=truncated_normal(out_std), has_bias=False)

    def construct(self, x: Tensor) -> Tensor:
        if self.swiglu:
            return self.down(ops.silu(self.gate(x)) * self.up(x))
        return self.down(ops.gelu(self.up(x), approximate="none"))


class Block(nn.Cell):
    """Pre-norm transformer block: x + attn(norm x), then x + mlp(norm x)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        out_std = cfg.init_std / math.sqrt(2 * cfg.n_layers)
        self.attn_norm = make_norm(cfg)
        self.attn = Attention(cfg, out_std)
        self.mlp_norm = make_norm(cfg)
        self.mlp = MLP(cfg, out_std)

    def construct(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class GPT(nn.Cell):
    """Token ids (batch, seq) -> fp32 logits (batch, seq, vocab)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        init = truncated_normal(cfg.init_std)
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model, embedding_table=init)
        self.learned_positions = cfg.position == "learned"
        if self.learned_positions:
            self.wpe = nn.Embedding(cfg.max_seq_len, cfg.d_model, embedding_table=init)
            self.positions = Tensor(np.arange(cfg.max_seq_len, dtype=np.int32))
        self.blocks = nn.CellList([Block(cfg) for _ in range(cfg.n_layers)])
        self.final_norm = make_norm(cfg)
        self.tied = cfg.tie_embeddings
        self.head_matmul = ops.MatMul(transpose_b=True)
        if not self.tied:
            self.lm_head = nn.Dense(cfg.d_model, cfg.vocab_size, weight_init=init, has_bias=False)
        self.compute_dtype = resolve_compute_dtype(cfg.compute_dtype)
        self.low_precision = self.compute_dtype != ms.float32
        if self.low_precision:
            for _, cell in self.cells_and_names():
                if isinstance(cell, nn.Dense):
                    cell.to_float(self.compute_dtype)

    def construct(self, tokens: Tensor) -> Tensor:
        x = self.wte(tokens)
        if self.learned_positions:
            x = x + self.wpe(self.positions[:tokens.shape[1]])
        for block in self.blocks:
            x = block(x)
        x = self.final_norm(x)
        if self.tied:
            # x (batch·seq, d) @ tableᵀ as one 2-D MatMul with transpose_b: ops.matmul of a 3-D x and a 2-D
            # transposed table broadcast the table to (batch, d, vocab) and ran a batched matmul.
            batch, seq, width = x.shape
            table = self.wte.embedding_table
            if self.low_precision:
                x, table = ops.cast(x, self.compute_dtype), ops.cast(table, self.compute_dtype)
            logits = self.head_matmul(x.reshape(batch * seq, width), table)
            logits = logits.reshape(batch, seq, self.cfg.vocab_size)
        else:
            logits = self.lm_head(x)
        return ops.cast(logits, ms.float32)


def count_parameters(model: nn.Cell) -> int:
    """Trainable parameters (a tied embedding is counted once)."""
    return sum(int(np.prod(p.shape)) for p in model.trainable_params())
