"""Two encoders of one tokenizer: HF `tokenizers`, and tiktoken built from the same byte-level BPE.

tiktoken merges the adjacent pair whose result has the lowest rank first, with a token's rank
being its id; a byte-level BPE trained by HF numbers its tokens in the order it learns the
merges, so the two give the same ids (tests/test_tokenize.py checks code points of every
plane in several contexts, Chinese/English/code documents and random concatenations of
vocabulary entries). ``choose_encoder`` still checks it on the tokenizer at hand and falls back
to HF when they differ or when the tokenizer is not a plain byte-level BPE.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from functools import cache

import numpy as np
import tiktoken
from tokenizers import Tokenizer

from common.errors import KilnError

# The ByteLevel pre-tokenizer's regex (HF tokenizers, use_regex=True), in tiktoken's syntax.
BYTE_LEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Texts on which the tiktoken encoder must reproduce the HF ids: Chinese and English prose, code as
# corpora hold it (comments, tabs, CRLF), emoji, mixed scripts and unusual whitespace.
PROBE_TEXTS = (
    "人工智能（AI）正在改变世界。2023年，大语言模型取得了突破性进展！你好，世界？",
    "　　第一章　开端\n\n　　他说：“我们明天见。”她笑了笑……没有回答。",
    "The quick brown fox jumps over the lazy dog. It's 3.14159, isn't it? We'll see; they've gone.",
    "def tokenize(text: str) -> list[int]:\n    \"\"\"Encode.\"\"\"\n\treturn [ord(c) for c in text]  # CODE POINTS\n",
    "for (int i = 0; i < n; ++i) {\r\n    sum += a[i] * b[i];\r\n}\r\n",
    "Emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flags 🇨🇳🇺🇸 keycap 1️⃣ ★☆♥ → ⇒ ∑ ∞",
    "混合 mixed 文本 text：GPU 显存 80GB，batch_size=32，学习率 3e-4。",
    "spaces:  two   three    four\n\n\nnewlines\t\ttabs \u00a0nbsp \u3000ideographic \u2028sep\u200bzwsp\ufeffbom",
    "   leading and trailing   \n ",
    "\n",
    " ",
    "<|endoftext|> is text here, and so is <|pad|>",
    "Ünïcödé café naïve Ελληνικά русский العربية हिन्दी 日本語のテキスト 한국어",
    "١٢٣ ①②③ ² ½ 0x1F 1,000,000 ０１２３ ＡＢＣ",
    "'s 's'S'T'LL 'd'm're've ''quoted'' \"double\"",
)

_BYTE_SYMBOLS = (
    list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
)


@cache
def byte_of_symbol() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the printable character standing for each byte, inverted."""
    symbols = list(_BYTE_SYMBOLS)
    chars = list(_BYTE_SYMBOLS)
    extra = 0
    for byte in range(256):
        if byte not in symbols:
            symbols.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(char): byte for byte, char in zip(symbols, chars, strict=True)}


class NotConvertible(Exception):
    """The tokenizer cannot be expressed as a tiktoken Encoding; the message says why."""


def _plain_byte_level(config: dict) -> None:
    model, pre = config.get("model") or {}, config.get("pre_tokenizer") or {}
    if model.get("type") != "BPE":
        raise NotConvertible(f"model type {model.get('type')!r} is not BPE")
    for key in ("dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise NotConvertible(f"BPE option {key}={model[key]!r}")
    if model.get("byte_fallback"):
        raise NotConvertible("BPE byte_fallback is on")
    if config.get("normalizer") is not None:
        raise NotConvertible("it has a normalizer")
    if pre.get("type") != "ByteLevel" or pre.get("add_prefix_space") or not pre.get("use_regex", True):
        raise NotConvertible(f"pre-tokenizer {pre!r} is not ByteLevel(add_prefix_space=False, use_regex=True)")
    ordinary = [t["content"] for t in config.get("added_tokens", []) if not t.get("special")]
    if ordinary:
        raise NotConvertible(f"it has non-special added tokens {ordinary[:5]}")


def to_tiktoken(tokenizer: Tokenizer) -> tiktoken.Encoding:
    """A tiktoken Encoding with the tokenizer's vocabulary (rank = id) and special tokens."""
    config = json.loads(tokenizer.to_str())
    _plain_byte_level(config)
    specials = {t["content"]: t["id"] for t in config.get("added_tokens", [])}
    table = byte_of_symbol()
    ranks: dict[bytes, int] = {}
    for token, token_id in tokenizer.get_vocab(with_added_tokens=False).items():
        if token in specials:
            continue
        try:
            ranks[bytes(table[ch] for ch in token)] = token_id
        except KeyError:
            raise NotConvertible(f"vocabulary entry {token!r} is not in the byte-level alphabet") from None
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise NotConvertible(f"{len(missing)} single bytes are missing from the vocabulary (e.g. {missing[0]:#04x})")
    return tiktoken.Encoding("kiln-bpe", pat_str=BYTE_LEVEL_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


class HFEncoder:
    """HF `tokenizers` encode_batch (special-token text in documents is encoded as ordinary text)."""

    name = "hf"

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(flat ids, tokens per text)."""
        encodings = self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        ids = [e.ids for e in encodings]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.uint32, count=int(lengths.sum()))
        return flat, lengths


class TiktokenEncoder:
    """tiktoken over the same vocabulary, one text at a time, straight into numpy."""

    name = "tiktoken"

    def __init__(self, encoding: tiktoken.Encoding):
        self.encoding = encoding

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(flat ids, tokens per text)."""
        arrays = [self.encoding.encode_to_numpy(text, disallowed_special=()) for text in texts]
        lengths = np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays))
        flat = np.concatenate(arrays) if arrays else np.zeros(0, np.uint32)
        return flat, lengths


def first_difference(tokenizer: Tokenizer, encoding: tiktoken.Encoding, texts: Sequence[str]) -> str | None:
    """The first text (shortened) on which tiktoken's ids differ from HF's, or None."""
    encodings = tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
    for text, encoded in zip(texts, encodings, strict=True):
        if encoded.ids != encoding.encode_ordinary(text):
            return text[:80]
    return None


def choose_encoder(tokenizer: Tokenizer, mode: str, texts: Sequence[str]) -> tuple[str, str]:
    """(encoder name, why): tiktoken when allowed and it gives HF's ids on the probes and ``texts``."""
    if mode == "hf":
        return "hf", "tokenize.encoder is hf"
    try:
        encoding = to_tiktoken(tokenizer)
    except NotConvertible as err:
        reason = f"tiktoken cannot express this tokenizer: {err}"
    else:
        checked = [*PROBE_TEXTS, *texts]
        differs = first_difference(tokenizer, encoding, checked)
        if differs is None:
            return "tiktoken", f"tiktoken gives the HF ids on {len(checked)} probe and sample texts"
        reason = f"tiktoken's ids differ from HF's on {differs!r}"
    if mode == "tiktoken":
        raise KilnError(f"tokenize.encoder is tiktoken, but {reason}; use encoder auto or hf")
    return "hf", reason


def make_encoder(tokenizer: Tokenizer, name: str) -> HFEncoder | TiktokenEncoder:
    """The encoder ``choose_encoder`` picked."""
    return TiktokenEncoder(to_tiktoken(tokenizer)) if name == "tiktoken" else HFEncoder(tokenizer)
