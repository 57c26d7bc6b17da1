"""Training a byte-level BPE tokenizer with HF `tokenizers` (loading one is common/tokenizer.py)."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from common.tokenizer import EOS_TOKEN, PAD_TOKEN, prepared


def new_tokenizer() -> Tokenizer:
    """An untrained byte-level BPE: ByteLevel pre-tokenizer (GPT-2 regex, no prefix space) and decoder."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """Train a byte-level BPE with ``vocab_size`` ids: EOS (id 0), pad (id 1), the 256 bytes, then merges."""
    tokenizer = new_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS_TOKEN, PAD_TOKEN],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return prepared(tokenizer)
