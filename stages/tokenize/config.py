"""The tokenize stage's configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from common.config_loader import Section


class TokenizeConfig(Section):
    """The tokenize stage: a byte-level BPE tokenizer and the packed uint16 token streams."""

    tokenizer_path: str | None = None
    """A byte-level BPE tokenizer.json to use as is (HF `tokenizers` format; it must define <|endoftext|>, and every
    id must fit uint16, below 65,536); null trains one on a sample of the training split."""
    vocab_size: int = Field(default=32000, ge=258, le=65536)
    """Vocabulary size of the trained tokenizer, including <|endoftext|> and <|pad|> (at most 65,536 so that ids fit
    uint16)."""
    sample_bytes: int = Field(default=16 * 1024 * 1024, ge=1)
    """Bytes of training text the tokenizer is trained on: the documents with the lowest seeded hash of their doc_id
    until this many bytes are reached, read in shard order. Training holds about 30 bytes of memory per byte of
    sample (a 16 MiB sample peaks near 740 MB, 50 MB near 1.6 GB), whatever the corpus size; on the 100,000-record
    demo corpus a 50 MB sample compresses held-out text 0.3 % better (6.07 against 6.05 bytes per token)."""
    min_sample_bytes: int = Field(default=64 * 1024, ge=0)
    """The stage stops when the training split holds less text than this for the tokenizer to train on (a vocabulary
    learned from a few documents is useless); 0 never stops."""
    seq_len: int = Field(default=2048, ge=1)
    """Tokens per training sample; windows of seq_len + 1 tokens are read from the packed stream (recorded in
    meta.json; the reader may choose another)."""
    seed: int = 1234
    """Seed of the tokenizer's training sample and of the document order in the packed stream."""
    batch_docs: int = Field(default=1024, ge=1)
    """Documents encoded per batch inside a work unit."""
    stream_max_documents: int = Field(default=1_000_000, ge=1)
    """Most documents (before repeats) in one packed stream: a split with more is written as <split>-NNNNN.bin/.idx
    streams of consecutive unit shards, read as one stream by the trainer. The packer, on the driver, holds about 500
    bytes per document copy of its stream at 400 tokens a document (bench/tokenize_pack.py: 1,074 MB for 1 M
    documents, 2 M copies), so this bounds the driver near 1 GB whatever the corpus size."""
    encoder: Literal["auto", "hf", "tiktoken"] = "auto"
    """auto: tiktoken built from the tokenizer's vocabulary when it reproduces the HF ids on the probe texts and the
    first documents, else HF `tokenizers`; hf or tiktoken force one (tiktoken fails when it cannot reproduce the
    HF ids)."""
