"""Benchmark decontamination: evaluation items copied into web pages the ways the web copies them are found, and
pages that share only exam phrasing or short common phrases with them are not.

The items are generated here from a fixed seed (not the shipped samples the defaults were chosen on): questions of
common Chinese characters or English words, many of them opening with the same long exam phrasing.
"""

from __future__ import annotations

import csv
import json
import random
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from common.eval_sets import EvalSetError, read_eval_sets
from stages.dedup.config import DecontaminateConfig
from stages.dedup.decontaminate import ContaminationIndex, decontaminate

ZH_CHARS = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后"
            "多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还"
            "因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结"
            "解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级")
EN_WORDS = ["river", "mountain", "theory", "method", "energy", "market", "village", "history", "culture", "system", "garden", "engine", "letter", "doctor", "island", "winter", "signal", "circle", "planet", "animal", "window", "number", "silver", "forest", "harbor", "bridge", "camera", "question", "answer", "student", "teacher", "science", "nature", "reason", "season", "family", "friend", "country", "morning", "evening", "measure", "balance", "pattern", "surface", "channel", "element", "factor", "record", "office", "record", "quarter"]
ZH_PHRASING = "根据我国现行法律法规的有关规定下列说法中正确的是"  # opens many items: phrasing, not content
EN_PHRASING = "according to the passage above which of the following statements is most likely true"
ITEMS = 40


def _zh(rng: random.Random, low: int, high: int) -> str:
    return "".join(rng.choice(ZH_CHARS) for _ in range(rng.randint(low, high)))


def _en(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(EN_WORDS) for _ in range(rng.randint(low, high)))


def generated_questions(seed: int) -> tuple[list[list[str]], list[list[str]]]:
    """Rows (question, A, B, C, D, answer letter) of a Chinese and an English set; every third item opens with the
    set's exam phrasing, every fifth has a short question (matched whole)."""
    rng = random.Random(seed)
    zh, en = [], []
    for i in range(ITEMS):
        zh_question = _zh(rng, 9, 11) if i % 5 == 4 else _zh(rng, 16, 30)
        en_question = _en(rng, 9, 11) if i % 5 == 4 else _en(rng, 14, 24)
        if i % 3 == 0:
            zh_question, en_question = f"{ZH_PHRASING}{_zh(rng, 4, 6)}？", f"{EN_PHRASING} {_en(rng, 3, 4)}?"
        zh.append([zh_question, *(_zh(rng, 2, 5) for _ in range(4)), rng.choice("ABCD")])
        en.append([en_question, *(_en(rng, 1, 3) for _ in range(4)), rng.choice("ABCD")])
    return zh, en


def write_sets(folder: Path, seed: int) -> Path:
    """A CMMLU-layout file (zh) and a C-Eval-layout file (en) under ``folder``."""
    zh, en = generated_questions(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "zh_subject.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", "Question", "A", "B", "C", "D", "Answer"])
        writer.writerows([i, *row] for i, row in enumerate(zh))
    with open(folder / "en_subject.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "A", "B", "C", "D", "answer", "explanation"])
        writer.writerows([i, *row, "because"] for i, row in enumerate(en))
    return folder


_FULL_WIDTH = str.maketrans({"?": "？", ",": "，", ".": "。", ":": "：", "(": "（", ")": "）"})
_HALF_WIDTH = str.maketrans({"？": "?", "，": ",", "。": ".", "：": ":"})


def _options(row: list[str], zh: bool) -> str:
    return "\n".join(f"{letter}. {text}" for letter, text in zip("ABCD", row[1:5], strict=True)) + \
        (f"\n答案：{row[5]}" if zh else f"\nAnswer: {row[5]}")


def _wrap(text: str, width: int) -> str:
    """Lines of ``width`` characters (Chinese wraps anywhere), or of whole words when the text has spaces."""
    if " " in text:
        return textwrap.fill(text, width)
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def web_copies(seed: int, zh: list[list[str]], en: list[list[str]]) -> list[str]:
    """Pages that each embed at least one item, as the web copies them."""
    rng = random.Random(seed)
    pages = []
    for i, (z, e) in enumerate(zip(zh, en, strict=True)):
        style = i % 5
        if style == 0:  # verbatim inside a longer page
            pages += [f"{_zh(rng, 200, 400)}\n{z[0]}\n{_zh(rng, 200, 400)}", f"{_en(rng, 80, 120)}. {e[0]} {_en(rng, 80, 120)}."]
        elif style == 1:  # numbered with its options laid out and the answer after them
            pages += [f"{_zh(rng, 50, 90)}\n{i + 1}. {z[0]}\n{_options(z, True)}\n{_zh(rng, 50, 90)}",
                      f"Practice test\n\n{i + 1}. {e[0]}\n{_options(e, False)}\n\n{_en(rng, 40, 60)}."]
        elif style == 2:  # other punctuation widths, rewrapped lines, doubled spaces, other case
            pages += [f"{_zh(rng, 100, 200)}\n{_wrap(z[0].translate(_HALF_WIDTH), 7)}\n{_zh(rng, 60, 80)}",
                      f"{_en(rng, 60, 90)}.\n{_wrap(e[0].upper().replace(' ', '  ').translate(_FULL_WIDTH), 23)}\n"
                      f"{_en(rng, 30, 50)}."]
        elif style == 3:  # several items on one exam-prep page
            pages += ["\n\n".join(f"{n + 1}. {row[0]}\n{_options(row, True)}" for n, row in enumerate(zh[i:i + 3])),
                      "\n\n".join(f"{n + 1}) {row[0]}\n{_options(row, False)}" for n, row in enumerate(en[i:i + 3]))]
        else:  # one item inside a long article
            pages += [f"{_zh(rng, 3000, 4000)}{z[0]}{_zh(rng, 3000, 4000)}",
                      f"{_en(rng, 900, 1200)} {e[0]} {_en(rng, 900, 1200)}"]
    return pages


def hard_negatives(seed: int, zh: list[list[str]], en: list[list[str]]) -> list[str]:
    """Pages that share only exam phrasing, options or a short piece of a question with the items."""
    rng = random.Random(seed)
    pages = []
    for z, e in zip(zh, en, strict=True):
        pages.append(f"{_zh(rng, 100, 200)}{ZH_PHRASING}{_zh(rng, 20, 40)}。")  # the phrasing many items share
        pages.append(f"{_en(rng, 50, 80)}. {EN_PHRASING.capitalize()} {_en(rng, 10, 20)}?")
        pages.append(f"{_zh(rng, 100, 200)}，{'、'.join(z[1:5])}。")  # every option, in a list
        pages.append(f"{_en(rng, 50, 80)}, {', '.join(e[1:5])}.")
        pages.append(f"{_zh(rng, 100, 200)}{z[0][-7:]}{_zh(rng, 50, 100)}")  # a piece of a question, 7 characters
        pages.append(f"{_en(rng, 50, 80)} {' '.join(e[0].split()[-6:])} {_en(rng, 20, 40)}.")
    return pages


def _table(texts: list[str]) -> pa.Table:
    return pa.table({"doc_id": pa.array(range(len(texts)), pa.int64()),
                     "source_id": pa.array([f"page-{i}" for i in range(len(texts))]),
                     "text": pa.array(texts, pa.large_string())})


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[ContaminationIndex, list[str], list[str]]:
    folder = write_sets(tmp_path_factory.mktemp("evalsets") / "generated", seed=20261205)
    zh, en = generated_questions(20261205)
    items, files = read_eval_sets([folder])
    return ContaminationIndex.build(items, files, DecontaminateConfig()), web_copies(7, zh, en), hard_negatives(8, zh, en)


def test_every_planted_copy_is_removed_and_every_hard_negative_kept(generated):
    index, copies, negatives = generated
    done = decontaminate(_table(copies + negatives), index, DecontaminateConfig())
    removed = set(done.removed.column("doc_id").to_pylist())
    assert [i for i in range(len(copies)) if i not in removed] == []
    assert [negatives[i - len(copies)][:80] for i in sorted(removed) if i >= len(copies)] == []
    assert done.kept.num_rows == len(negatives)
    counts = done.stats["decontamination"]["generated"]
    assert counts["documents"] == len(copies)
    assert len(counts["items"]) == 2 * ITEMS  # every item of both files is found somewhere


def test_the_exam_phrasing_many_items_share_is_ignored_and_short_items_are_counted(generated):
    index = generated[0]
    assert index.common_ngrams > 0  # the phrasing's n-grams, shared by a third of the items
    short = ContaminationIndex.build(*read_eval_sets([_lines_file(index, "short.txt", ["太短的问题", "Too short to tell"])]),
                                     DecontaminateConfig())
    assert short.skipped == {"short": 2}


def _lines_file(index: ContaminationIndex, name: str, lines: list[str]) -> Path:
    path = Path(index.files[0].path).parent.parent / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _item(index: ContaminationIndex, where: str) -> str:
    return next(item.question for item in index.items if item.where == where)


def test_the_exclusion_says_which_item_matched_where(generated):
    index, copies, _ = generated
    done = decontaminate(_table(copies[:1]), index, DecontaminateConfig())
    assert done.signals[0].startswith("generated zh_subject.csv:1 at characters ")
    start, end = (int(n) for n in done.signals[0].split("at characters ")[1].split(":")[0].split("-"))
    assert copies[0][start:end] in _item(index, "zh_subject.csv:1")


def test_excise_cuts_the_item_and_keeps_the_article_around_it(generated):
    index, copies, _ = generated
    cfg = DecontaminateConfig(mode="excise", excise_margin_chars=10)
    article = copies[8]  # style 4: one Chinese item inside a long article
    exam_page = copies[6]  # style 3: three items and their options, nothing else
    done = decontaminate(_table([article, exam_page]), index, cfg)
    assert done.kept.column("doc_id").to_pylist() == [0]
    text = done.kept.column("text")[0].as_py()
    assert _item(index, "zh_subject.csv:5") not in text and len(text) > 0.9 * len(article)
    assert set(done.cut.column("item").to_pylist()) == {"zh_subject.csv:5"}
    assert done.stats["decontamination"]["generated"]["excised_documents"] == 1
    assert done.stats["decontamination"]["generated"]["documents"] == 1


def test_evaluation_sets_in_every_layout_and_their_errors(tmp_path: Path):
    (tmp_path / "set.jsonl").write_text('{"text": "a held out line of text"}\n\n{"text": "another one"}\n')
    (tmp_path / "plain.txt").write_text("first question line\n\n  second question line  \n")
    items, files = read_eval_sets([tmp_path / "set.jsonl", tmp_path / "plain.txt"])
    assert [(i.set_name, i.row, i.question) for i in items] == [
        ("set", 1, "a held out line of text"), ("set", 3, "another one"),
        ("plain", 1, "first question line"), ("plain", 3, "second question line")]
    assert [f.items for f in files] == [2, 2] and all(len(f.sha256) == 64 for f in files)
    (tmp_path / "bad.jsonl").write_text('{"text": "ok"}\n{"question": "no text field"}\n')
    with pytest.raises(EvalSetError, match=r"bad\.jsonl:2: the record has no text in its 'text' field"):
        read_eval_sets([tmp_path / "bad.jsonl"])
    with pytest.raises(EvalSetError, match=r"missing: no such file or folder"):
        read_eval_sets([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalSetError, match=r"empty: the folder holds no \.csv, \.jsonl, \.txt file"):
        read_eval_sets([tmp_path / "empty"])
    (tmp_path / "broken.csv").write_text("id,question\n1,q\n")
    with pytest.raises(EvalSetError, match=r"evaluation set broken: .*broken\.csv: missing column"):
        read_eval_sets([tmp_path / "broken.csv"])


def test_offsets_point_into_the_text_as_given_when_normalization_changes_its_length(generated):
    index = generated[0]
    question = _item(index, "zh_subject.csv:2")
    text = "ﬁ" * 5 + "前言" + question + "后记"  # each ligature becomes two characters under NFKC
    matches = index.scan([text])[0]
    start, end = min(m.start for m in matches), max(m.end for m in matches)
    assert text[start:end] == question.rstrip("？")


def test_the_report_counts_items_found_per_set(generated):
    from stages.dedup.decontaminate import report

    index, copies, _ = generated
    done = decontaminate(_table(copies), index, DecontaminateConfig())
    summary = report(index, DecontaminateConfig(), done.stats["decontamination"])
    row = summary["sets"]["generated"]
    assert (row["items"], row["items_found"], row["documents"]) == (2 * ITEMS, 2 * ITEMS, len(copies))
    assert len(row["top_items"]) == 10 and row["top_items"][0]["documents"] >= row["top_items"][-1]["documents"]
    assert json.dumps(summary, ensure_ascii=False)


def test_a_question_of_exactly_ngram_tokens_is_found_without_its_answer(tmp_path: Path):
    # 13 tokens: the only window inside the question; the others run into the answer, which a copy may not follow
    question = "下列动物中，哪一种是哺乳动物？"
    (tmp_path / "one.csv").write_text(f",Question,A,B,C,D,Answer\n0,{question},鲸鱼,鲨鱼,金枪鱼,章鱼,A\n", encoding="utf-8")
    index = ContaminationIndex.build(*read_eval_sets([tmp_path / "one.csv"]), DecontaminateConfig())
    copies = ["今天的练习题。\n下列动物\n中,哪一种是哺乳动物?\n请写出理由。", "下列动物中，哪一种是哺乳动物？答案是鲸鱼。"]
    assert [bool(found) for found in index.scan([*copies, "下列动物中，哪一种是鱼类？"])] == [True, True, False]


def test_kiln_run_with_eval_sets_removes_the_pages_that_copy_them_and_keeps_the_negatives(tmp_path: Path, in_process):
    from demo.content_docs import clean_document

    sets = write_sets(tmp_path / "cmmlu_like", seed=5)
    zh, en = generated_questions(5)
    rng = random.Random(6)
    records = []
    for i, (z, e) in enumerate(zip(zh, en, strict=True)):
        for lang, row in (("zh", z), ("en", e)):
            category = rng.choice(("news", "encyclopedia", "academic"))
            block = (row[0], f"{i + 1}. {row[0]}\n{_options(row, lang == 'zh')}",
                     _wrap(row[0].translate(_HALF_WIDTH if lang == "zh" else _FULL_WIDTH), 9 if lang == "zh" else 30),
                     row[0].upper() if lang == "en" else row[0].replace("，", ", "))[i % 4]
            phrasing = ZH_PHRASING if lang == "zh" else EN_PHRASING.capitalize() + "?"
            for kind, extra in (("copy", block), ("negative", f"{phrasing}\n{'、'.join(row[1:5])}")):
                host = clean_document(rng, category, lang, "wire_like").split("\n\n")
                at = rng.randint(1, len(host))
                text = "\n\n".join([*host[:at], extra, *host[at:]])
                records.append({"id": f"{kind}-{lang}-{i}", "text": text, "category": category, "source": "web"})
    for i in range(200):  # the rest of the corpus: clean pages of every category
        lang, category = rng.choice(("zh", "en")), rng.choice(("news", "encyclopedia", "academic", "dialogue"))
        records.append({"id": f"plain-{i}", "text": clean_document(rng, category, lang, "wire_like"),
                        "category": category, "source": "web"})
    corpus = tmp_path / "pages.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    data = tmp_path / "data"
    out = in_process("-m", "kiln", "run", "--input", str(corpus), "--eval-sets", str(sets), "--data-dir", str(data),
                     "--set", "tokenize.seq_len=128").stdout  # a corpus this small has a short validation split
    removed = pa.Table.from_batches(
        [b for f in sorted((data / "dedup" / "_excluded" / "contaminated").glob("*.arrow"))
         for b in pa.ipc.open_file(f).read_all().to_batches()])
    copies = {r["id"] for r in records if r["id"].startswith("copy")}
    assert set(removed.column("source_id").to_pylist()) == copies
    assert all(signal.startswith("cmmlu_like ") for signal in removed.column("signal").to_pylist())
    assert f"cmmlu_like: {2 * ITEMS} of {2 * ITEMS} items found, {len(copies)} documents removed" in out
    meta = json.loads((data / "tokenize" / "meta.json").read_text())
    assert sorted(Path(f["path"]).name for f in meta["decontamination"]["files"]) == ["en_subject.csv", "zh_subject.csv"]
