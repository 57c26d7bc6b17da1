"""The tokenizer.json side of the token contract: its special tokens, loading one, and the uint16 id check."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from common.errors import KilnError
from common.tokens import MAX_VOCAB

EOS_TOKEN = "<|endoftext|>"
PAD_TOKEN = "<|pad|>"


def largest_id(tokenizer: Tokenizer) -> int:
    """The largest id of the vocabulary, added tokens included."""
    return max(tokenizer.get_vocab(with_added_tokens=True).values())


def check_fits_uint16(tokenizer: Tokenizer, origin: str) -> None:
    """Refuse a tokenizer with an id that a uint16 token stream cannot hold."""
    top = largest_id(tokenizer)
    if top >= MAX_VOCAB:
        raise KilnError(
            f"{origin}: the largest token id is {top:,}, which does not fit uint16 (ids must be below "
            f"{MAX_VOCAB:,}); use a tokenizer with at most {MAX_VOCAB:,} tokens"
        )


def prepared(tokenizer: Tokenizer) -> Tokenizer:
    """Encode special-token text found in documents as ordinary text (a literal EOS is not an EOS)."""
    tokenizer.encode_special_tokens = True
    return tokenizer


def load_tokenizer(path: Path) -> Tokenizer:
    """Load a tokenizer.json, refusing one that is unreadable, lacks EOS or has ids beyond uint16."""
    if not path.is_file():
        raise KilnError(f"{path}: tokenizer file not found")
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # the Rust parser raises plain Exceptions
        raise KilnError(f"{path}: not a readable HF tokenizers file ({err})") from None
    check_fits_uint16(tokenizer, str(path))
    if tokenizer.token_to_id(EOS_TOKEN) is None:
        raise KilnError(f"{path}: the tokenizer has no {EOS_TOKEN} token to end documents with")
    return prepared(tokenizer)


def special_ids(tokenizer: Tokenizer) -> tuple[int, int | None]:
    """(EOS id, pad id or None)."""
    return tokenizer.token_to_id(EOS_TOKEN), tokenizer.token_to_id(PAD_TOKEN)
