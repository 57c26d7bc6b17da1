"""Token files of the ablation: one tokenizer, documents encoded into one-split folders the trainer reads,
and the UTF-8 bytes behind every token (bits per byte need them)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from common.files import atomic_write_bytes, atomic_write_json, file_sha256, sampled_sha256
from common.tokenizer import check_fits_uint16, largest_id, load_tokenizer, special_ids
from common.tokens import META_FORMAT, META_NAME, TOKEN_DTYPE
from stages.tokenize.encoders import HFEncoder, TiktokenEncoder, byte_of_symbol, choose_encoder, make_encoder
from stages.tokenize.pack import atomic_stream

Encoder = HFEncoder | TiktokenEncoder


@dataclass(frozen=True)
class SharedTokenizer:
    """The ablation's one tokenizer, its file, its encoder and the UTF-8 length of every id."""

    path: Path
    tokenizer: Tokenizer
    encoder: Encoder
    eos: int
    byte_lengths: np.ndarray

    @classmethod
    def load(cls, path: Path, probe_texts: list[str]) -> SharedTokenizer:
        """Load ``path`` and pick its fastest exact encoder on ``probe_texts``."""
        tokenizer = load_tokenizer(path)
        name, _ = choose_encoder(tokenizer, "auto", probe_texts)
        eos, _ = special_ids(tokenizer)
        return cls(path, tokenizer, make_encoder(tokenizer, name), eos, token_byte_lengths(tokenizer))

    @property
    def vocab_size(self) -> int:
        """Ids the model needs rows for."""
        return largest_id(self.tokenizer) + 1

    def encode(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(uint16 tokens of every text, each ending with EOS; tokens per text, EOS included)."""
        ids, lengths = self.encoder.encode(texts)
        sizes = lengths + 1
        ends = np.cumsum(sizes)
        flat = np.empty(int(ends[-1]) if ends.size else 0, dtype=np.uint16)
        is_eos = np.zeros(flat.size, dtype=bool)
        is_eos[ends - 1] = True
        flat[~is_eos] = ids
        flat[is_eos] = self.eos
        return flat, sizes


def token_byte_lengths(tokenizer: Tokenizer) -> np.ndarray:
    """UTF-8 bytes each id stands for in a byte-level BPE; special tokens (EOS, pad) count as one byte, the
    document boundary they mark."""
    alphabet = byte_of_symbol()
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    specials = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
    lengths = np.ones(largest_id(tokenizer) + 1, dtype=np.int64)
    for token, index in vocab.items():
        if token not in specials:
            lengths[index] = sum(1 for ch in token if ch in alphabet)
    return lengths


def write_tokenizer(path: Path, tokenizer: Tokenizer) -> None:
    """Save a freshly trained tokenizer (atomically), refused if an id would not fit uint16."""
    check_fits_uint16(tokenizer, str(path))
    atomic_write_bytes(path, tokenizer.to_str().encode("utf-8"))


def write_split(folder: Path, split: str, tokens: np.ndarray, lengths: np.ndarray, shared: SharedTokenizer,
                seq_len: int) -> dict:
    """Write ``<split>.bin``, ``<split>.idx`` and a meta.json naming only this split, as the tokenize stage
    writes them (checksums included); returns the split's entry."""
    folder.mkdir(parents=True, exist_ok=True)
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    for suffix, array in ((".bin", tokens.astype(np.uint16)), (".idx", offsets)):
        with atomic_stream(folder / f"{split}{suffix}") as out:
            out.write(array)
    names = (f"{split}.bin", f"{split}.idx")
    entry = {"bin": names[0], "idx": names[1], "tokens": int(tokens.size), "documents": int(lengths.size),
             "checksums": {n: {"sha256": file_sha256(folder / n), "sampled_sha256": sampled_sha256(folder / n)}
                           for n in names}}
    meta = {"format": META_FORMAT, "dtype": TOKEN_DTYPE, "vocab_size": shared.vocab_size, "eos_id": shared.eos,
            "pad_id": special_ids(shared.tokenizer)[1], "seq_len": seq_len,
            "tokenizer": {"file": os.path.relpath(shared.path.resolve(), folder.resolve()),
                          "sha256": file_sha256(shared.path)},
            "splits": {split: entry}}
    atomic_write_json(folder / META_NAME, meta)
    return entry


def predicted_bytes(tokens: np.ndarray, byte_lengths: np.ndarray, seq_len: int) -> tuple[int, int]:
    """(tokens, UTF-8 bytes) that the windows of ``seq_len`` + 1 tokens predict: positions 1 .. windows·seq_len
    of the stream, as the trainer's and the evaluator's validation loss reads them."""
    windows = (tokens.size - 1) // seq_len if tokens.size else 0
    predicted = tokens[1:windows * seq_len + 1]
    return int(predicted.size), int(byte_lengths[predicted].sum())
