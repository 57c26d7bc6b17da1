"""BatchText's kernels against the str methods and regular expression they stand for."""

from __future__ import annotations

import random

import numpy as np

from stages.clean.batch_text import BatchText
from tests.signals_reference import TOKEN_RE

PIECES = ["word", "Word", "中文", "的", "\n", "\n\n", " ", "  ", "\t", "\u3000", "\r", "\x0b", "\u2028", "\xa0",
          "123", "٣", "²", "_", "a_b", "ｆｕｌｌ", "，。", "é", "e\u0301", "𠀋", "ǅ", "!", "--", "\U0001F600", ""]


def _random_batch(rng: random.Random, docs: int) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(docs)]


def _batches() -> list[list[str]]:
    rng = random.Random(7)
    edge = ["", "\n", " \n \n", "中", "a", "\n a \n", "x\n", "\ny", "   ", "a b\tc\u3000d"]
    return [edge, edge[::-1], *(_random_batch(rng, rng.randint(1, 40)) for _ in range(300))]


def test_lines_are_the_stripped_non_empty_lines_of_each_document():
    for texts in _batches():
        batch = BatchText(texts)
        lines = batch.lines()
        found = [(int(batch.doc_of[a]), batch.joined[a:b]) for a, b in zip(lines.start.tolist(), lines.end.tolist(),
                                                                             strict=True)]
        expected = [(doc, line.strip()) for doc, text in enumerate(texts) for line in text.split("\n") if line.strip()]
        assert found == expected, texts


def test_tokens_are_the_matches_of_the_token_pattern_in_each_document():
    for texts in _batches():
        batch = BatchText(texts)
        tokens = batch.tokens()
        found = [(int(batch.doc_of[a]), batch.joined[a:b], bool(digits)) for a, b, digits in
                 zip(tokens.start.tolist(), tokens.end.tolist(), tokens.digits_only.tolist(), strict=True)]
        expected = [(doc, token, token.isdigit()) for doc, text in enumerate(texts) for token in TOKEN_RE.findall(text)]
        assert found == expected, texts


def test_span_hashes_are_equal_exactly_for_equal_texts():
    rng = random.Random(3)
    texts = ["".join(rng.choice(["a", "b", "中", " ", "\n"]) for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    batch = BatchText(texts)
    start, end = batch.starts[:-1], batch.starts[1:]
    hashes = batch.span_hashes(start, end).tolist()
    assert len(set(hashes)) == len(set(texts))
    by_hash = {}
    for value, text in zip(hashes, texts, strict=True):
        assert by_hash.setdefault(value, text) == text
    # the same text at another position, and its own prefixes
    tail = BatchText(["xyz" + texts[0], texts[0][:-1]])
    assert tail.span_hashes(np.array([3]), np.array([3 + len(texts[0])]))[0] == hashes[0]
    assert tail.span_hashes(tail.starts[1:2], tail.starts[2:3])[0] != hashes[0]
