"""Token folders in the tokenize stage's format (``<split>.bin``, ``.idx``, meta.json with checksums), for the
tests of the token reader, the trainer, the evaluator and `kiln doctor` (numpy and the standard library only:
the trainer's environment has no pyarrow)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from common.files import file_sha256, sampled_sha256
from common.tokens import META_FORMAT, META_NAME, TOKEN_DTYPE


def learnable_stream(n_tokens: int, vocab: int, rng: np.random.Generator) -> np.ndarray:
    """Random ids in [2, vocab) where every odd token follows from the one before it (7 × previous mod vocab)."""
    stream = rng.integers(2, vocab, n_tokens)
    stream[1::2] = (stream[0::2][: stream[1::2].size] * 7) % vocab
    return stream


def write_token_folder(folder: Path, splits: dict[str, list[np.ndarray] | np.ndarray], vocab: int, seq_len: int,
                       eos_id: int = 0, pad_id: int | None = 1) -> Path:
    """Write each split (its documents' token arrays, or one array as one document) and meta.json as the
    tokenize stage does, checksums included; return the path of ``train.bin``."""
    folder.mkdir(parents=True, exist_ok=True)
    entries = {}
    for name, docs in splits.items():
        docs = [docs] if isinstance(docs, np.ndarray) else docs
        tokens = np.concatenate(docs).astype(TOKEN_DTYPE) if docs else np.zeros(0, TOKEN_DTYPE)
        offsets = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
        files = {"bin": f"{name}.bin", "idx": f"{name}.idx"}
        tokens.tofile(folder / files["bin"])
        offsets.tofile(folder / files["idx"])
        checksums = {file: {"sha256": file_sha256(folder / file), "sampled_sha256": sampled_sha256(folder / file)}
                     for file in files.values()}
        entries[name] = {**files, "tokens": int(tokens.size), "documents": len(docs), "checksums": checksums}
    meta = {"format": META_FORMAT, "dtype": TOKEN_DTYPE, "vocab_size": vocab, "eos_id": eos_id, "pad_id": pad_id,
            "seq_len": seq_len, "splits": entries}
    (folder / META_NAME).write_text(json.dumps(meta))
    return folder / "train.bin"
