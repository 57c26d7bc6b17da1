"""Text to token ids and back with the run's tokenizer; prompts start with EOS, the separator before every document."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from common.tokenizer import largest_id, load_tokenizer, special_ids


@dataclass(frozen=True)
class Codec:
    """A HF tokenizer and its EOS id."""

    tokenizer: Tokenizer
    eos_id: int

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (special-token text is encoded as ordinary text)."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def encode_prompt(self, text: str) -> list[int]:
        """EOS, then the ids of ``text``: a prompt reads as the start of a new document."""
        return [self.eos_id, *self.encode(text)]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    @property
    def vocab_size(self) -> int:
        """One more than the largest id the tokenizer can produce."""
        return largest_id(self.tokenizer) + 1


def load_codec(path: Path) -> Codec:
    """The tokenizer.json at ``path`` (refused when unreadable or without an EOS token)."""
    tokenizer = load_tokenizer(path)
    eos_id, _ = special_ids(tokenizer)
    return Codec(tokenizer, eos_id)
