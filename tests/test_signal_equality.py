"""The batched quality signals equal their one-document-at-a-time definition (tests/signals_reference.py),
column by column, on the demo corpus, the real-text development set and texts made to hit edge cases;
so does the text language ID reads (tests/prose_reference.py), and the repair that skips ftfy where
it changes nothing equals ftfy on every document."""

from __future__ import annotations

import ftfy
import numpy as np
import pytest

import tests.prose_reference as prose_reference
import tests.signals_reference as reference
from common.config import load_config
from common.signal_names import SIGNAL_NAMES
from demo.generator import generate_demo_corpus
from stages.clean.batch_text import BatchText
from stages.clean.lid import prose_texts
from stages.clean.navigation import line_kinds
from stages.clean.repair import FTFY_CONFIG, LOST_QUOTE_DEBRIS, repair
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher
from stages.clean.timestamps import scrub_timestamps
from stages.ingest.documents import read_documents
from tests.navigation_reference import line_kind
from tests.test_devset import shared_devset

CFG = load_config()
PATTERNS = tuple(CFG.clean.spam_patterns)


def clean_texts(inputs: list[str], check_repair: bool = False) -> list[str]:
    """The texts the clean stage computes signals on: ingested, repaired, timestamps scrubbed
    (``check_repair``: first assert that each repair equals ftfy's on the whole text, but where a closing quote lost
    a byte, which repair leaves as debris)."""
    texts = read_documents(inputs, CFG).column("text").to_pylist()
    repaired = [repair(text) for text in texts]
    if check_repair:
        assert [i for i, (text, fixed) in enumerate(zip(texts, repaired, strict=True))
                if fixed != ftfy.fix_text(text, config=FTFY_CONFIG) and LOST_QUOTE_DEBRIS not in text] == []
        assert sum(a != b for a, b in zip(texts, repaired, strict=True)) > 0.01 * len(texts)  # ftfy had work
    return [scrub_timestamps(text)[0] for text in repaired]


def mismatches(texts: list[str], patterns: tuple[str, ...] = PATTERNS, batch_rows: int | None = None) -> dict:
    """Per signal: how many documents differ (as stored, float32), with the first one's values."""
    rows = batch_rows or CFG.clean.batch_rows
    batched: dict[str, list[np.ndarray]] = {name: [] for name in SIGNAL_NAMES}
    defined: dict[str, list[np.ndarray]] = {name: [] for name in SIGNAL_NAMES}
    for start in range(0, len(texts), rows):
        part = texts[start:start + rows]
        new = compute_signals(part, spam_matcher(patterns))
        old = reference.compute_signals(part, reference.spam_matcher(patterns))
        for name in SIGNAL_NAMES:
            batched[name].append(new[name])
            defined[name].append(old[name])
    found = {}
    for name in SIGNAL_NAMES:
        new, old = (np.concatenate(values).astype(np.float32) for values in (batched[name], defined[name]))
        assert len(new) == len(old) == len(texts), name
        differ = np.flatnonzero(new != old)
        if len(differ):
            first = int(differ[0])
            found[name] = {"documents": len(differ), "first": first, "batched": float(new[first]),
                           "defined": float(old[first]), "text": texts[first][:200]}
    return found


def test_every_signal_equals_its_definition_on_the_demo_corpus(tmp_path):
    summary = generate_demo_corpus(tmp_path / "demo", 3000, seed=1234)
    texts = clean_texts([str(summary.corpus_dir)], check_repair=True)
    assert len(texts) > 2900
    assert mismatches(texts) == {}


@pytest.mark.slow
def test_every_signal_equals_its_definition_on_the_real_text_development_set(tmp_path_factory):
    texts = clean_texts([str(shared_devset(tmp_path_factory) / "docs.jsonl")], check_repair=True)
    assert len(texts) > 2500
    assert mismatches(texts) == {}
    read = [text for start in range(0, len(texts), 512) for text in prose_texts(texts[start:start + 512])]
    assert [i for i, text in enumerate(texts) if read[i] != prose_reference.prose_lines(text)] == []


EDGE_CASES = [
    "",
    " \n\t\n",
    "rock'n'roll and don'té, l'été, it's a’b’c’d’e; O'Neill's ÀÉ'x",
    "The THE the Is iS a A an AN. Théo",
    "....... .. ... …… ### #",
    "他说……\n好吧…\n……\n…\nwait...\n.. \n她走了……。",
    "so...\n...then...\n  ANNA: ...and …\n…no\nB: x...\n\n\nC:...\nhttp://a...\n...",
    "#tag #a# ## Heading\n# comment\n#\n#include <x>\n#",
    "+-----+-----+\n| a   | b   |\n+=====+=====+\n|:---|---:|\n/*****\n *****/\n--- ---\nx ----- y\n-----+-----",
    "★★★★ ☆彡☆彡☆彡☆彡 =-=-=-=- ab!ab!ab!ab! ────────",
    "â€™ Ã© Ã\nâ\x00Ã",
    "château âge Âme",
    "扫一扫扫一扫扫一扫 加微信加微信 加vx 包邮",
    "A risk-free offer.\nRisk free money: free money now, risk free and free risk-free money.\nfree\n",
    "aa aa xyz, free aa",
    "a pair: aa aa, free",
    "click here! 12% off\nqq: 123456\n\n\nvx：abc\n1380013800012345",
    "Copyright 2024.\nYou may copy it under the terms of this License.\nAny copy shall carry this notice.\n"
    "No warranty of any kind.\nPermission may not be sold.\nThe licence is void if broken.\nEnd of the terms.",
    "line\nline\nline\nother\nline\nother\n",
    "a\nb\na\nb\nc\n",
    "的的的的 是是 人中 0123 ²³ ①",
    "\ud800 lone surrogate \udfff",
    "x" * 5000,
    "\n".join(f"{i}. Entry number {i}" for i in range(40)),
    "TODO: implement\n# TODO fix\ndef f():\n    raise NotImplementedError\n",
    "一二三四五六七八九十" * 30,
    "word " * 300,
    "end of one text with a literal split 加",
    "微信 starts the next one",
    "a text that ends in TO",
    "don?t it?s r?sum? ??????,??????. ?????????\n???\nWhat??? colou?r a ?? b x ??= y find?q=a&b=c ????x ??",
    "?? at the start ?????????",
    "the end???",
    "DO: implement the next one\n# TODO too",
    "ΑΣ ΟΔΟΣ Σ",
    "İstanbul İ",
]


@pytest.mark.parametrize("rows", [1, 3, len(EDGE_CASES)])
def test_edge_cases_equal_their_definition_in_any_batch(rows):
    assert mismatches(EDGE_CASES, batch_rows=rows) == {}


@pytest.mark.parametrize("patterns", [
    ("free", "$", "a"),
    (r"^click", r"here$", r"(?=buy)b", r"[^a]+x"),
    (r"x*", r"\bqq\b"),
    (r"(?i:CLICK)", r"1[3-9]\d{9}", r"\d+% off", "加微信"),
    # branches whose matches overlap: a text runs with only the branches that can match in it
    (r"risk[- ]free", r"free \w+", r"sk[- ]fr\w*", r"money\b", r"\w+ money"),
    # capture groups: a back-reference counts its group within the whole alternation
    (r"(x)yz", r"(a)\1", "free"),
    # "no digit here" lookarounds: texts are joined for them (the NUL between two texts is not a digit)
    (r"(?<!\d)1[3-9]\d{9}(?!\d)", "free"),
])
def test_spam_counts_equal_their_definition_for_any_pattern(patterns):
    assert mismatches(EDGE_CASES + DIGIT_RUNS, patterns=patterns, batch_rows=7) == {}


DIGIT_RUNS = ["13912345678 is a mobile number", "so is 13912345678", "13912345678", "卡号6222021234567894不是",
              "身份证11010519491231002X", "12345678901234567890", "a1391234567899b"]


def test_a_mobile_number_inside_a_longer_run_of_digits_is_no_spam_match():
    matcher = spam_matcher((r"(?<!\d)1[3-9]\d{9}(?!\d)",))
    assert matcher._joinable  # noqa: SLF001 - joined with the batch, not a candidate in every text
    counts, *_ = matcher.batch_hits(DIGIT_RUNS)
    assert counts.tolist() == [1, 1, 1, 0, 0, 0, 0]


def test_what_language_id_reads_equals_its_definition(tmp_path):
    summary = generate_demo_corpus(tmp_path / "demo", 1000, seed=5)
    texts = clean_texts([str(summary.corpus_dir)]) + EDGE_CASES + [
        "```\ncode here\n```\nThis is a line of real prose that a person reads.\n~~~\nmore code\n~~~\n",
        "AN ALL CAPS HEADER LINE HERE\nOPTIONS\n  --verbose   print more\nA sentence with ǅungla words in it.\n",
        "这是一个包含 `--verbose` 和 /usr/bin/python 的中文句子，很长很长。\n中文\n",
        "hyphen-\n  ated words are join-\nable here in this sentence",
    ]
    for rows in (1, 7, 512):
        batched = [text for start in range(0, len(texts), rows) for text in prose_texts(texts[start:start + rows])]
        defined = [prose_reference.prose_lines(text) for text in texts]
        differ = [i for i, (a, b) in enumerate(zip(batched, defined, strict=True)) if a != b]
        assert not differ, (rows, differ[:3], [texts[i][:200] for i in differ[:3]])


def test_the_navigation_kernel_reads_every_line_as_the_definition_does(tmp_path):
    summary = generate_demo_corpus(tmp_path / "demo", 1000, seed=9)
    texts = clean_texts([str(summary.corpus_dir)]) + EDGE_CASES
    batch = BatchText(texts)
    lines = batch.lines()
    kinds = line_kinds(batch, lines.start, lines.end).tolist()
    assert {-1, 0, 1} <= set(kinds)  # lead-ins, other lines and entries all occur
    wrong = [(batch.joined[a:b], kind) for a, b, kind in zip(lines.start.tolist(), lines.end.tolist(), kinds, strict=True)
             if {True: 1, False: 0, None: -1}[line_kind(batch.joined[a:b])] != kind]
    assert wrong == []
