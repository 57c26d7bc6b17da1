"""Ingest through the real runner on Ray: every format, the field mapping, and every bad input."""

from __future__ import annotations

import gzip
import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from common.errors import UnreadableFileError
from common.manifest import Manifest
from common.schema import DOC_ID_STRIDE
from common.shards import read_shard
from stages.ingest.plan import describe_inputs, resolve_inputs
from stages.ingest.readers import transcode
from stages.ingest.stage import STAGE
from tests.conftest import make_config

DOCS = [
    {"id": f"doc-{i}", "text": text, "url": f"https://example.org/{i}", "source": "wiki", "category": "encyclopedia",
     "title": f"Title {i}"}
    for i, text in enumerate([
        "长江是中国最长的河流，全长约六千三百公里。",
        "The Yangtze is the longest river in China.",
        "第三篇文档。\n它有两行。",
        "A fourth document, with a newline\nand a tab\there.",
    ])
]


def _jsonl_bytes(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _read_docs(data_dir: Path, manifest: Manifest) -> list[dict]:
    rows = []
    for info in manifest.shards:
        rows += read_shard(data_dir / "ingest", info).to_pylist()
    return rows


def _read_excluded(data_dir: Path, manifest: Manifest, reason: str) -> list[dict]:
    return [row for info in manifest.excluded.get(reason, []) for row in read_shard(data_dir / "ingest", info).to_pylist()]


def _balanced(manifest: Manifest) -> None:
    acc = manifest.accounting
    assert acc.docs_in == acc.docs_out + sum(acc.dropped.values())
    assert acc.docs_out == sum(s.rows for s in manifest.shards)
    for reason, count in acc.dropped.items():
        assert sum(s.rows for s in manifest.excluded[reason]) == count


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "jsonl.zst", "parquet"])
def test_every_record_format_gives_the_same_documents(tmp_path: Path, run, fmt: str):
    path = tmp_path / "in" / f"wiki.{fmt}"
    path.parent.mkdir()
    if fmt == "jsonl":
        path.write_bytes(_jsonl_bytes(DOCS))
    elif fmt == "jsonl.gz":
        path.write_bytes(gzip.compress(_jsonl_bytes(DOCS)))
    elif fmt == "jsonl.zst":
        path.write_bytes(zstandard.ZstdCompressor().compress(_jsonl_bytes(DOCS)))
    else:
        pq.write_table(pa.Table.from_pylist(DOCS), path, row_group_size=2)
    manifest = run(STAGE, tmp_path / "data", make_config(input=[path]))
    docs = _read_docs(tmp_path / "data", manifest)
    assert [d["text"] for d in docs] == [d["text"] for d in DOCS]
    assert [d["source_id"] for d in docs] == [d["id"] for d in DOCS]
    assert {d["category"] for d in docs} == {"encyclopedia"}
    assert json.loads(docs[0]["meta"]) == {"url": "https://example.org/0", "title": "Title 0"}
    assert manifest.accounting.docs_in == manifest.accounting.docs_out == len(DOCS)
    _balanced(manifest)


def test_txt_folder_one_document_per_file(tmp_path: Path, run):
    folder = tmp_path / "poems"
    folder.mkdir()
    for i, doc in enumerate(DOCS):
        (folder / f"{i:02d}.txt").write_text(doc["text"], encoding="utf-8")
    (folder / "notes.md").write_text("not an input format")
    cfg = make_config('ingest.source_categories={"poems": "literature"}', input=[folder])
    manifest = run(STAGE, tmp_path / "data", cfg)
    docs = _read_docs(tmp_path / "data", manifest)
    assert [d["text"] for d in docs] == [d["text"] for d in DOCS]
    assert [d["source_id"] for d in docs] == [f"{i:02d}.txt" for i in range(len(DOCS))]
    assert {d["source"] for d in docs} == {"poems"}
    assert {d["category"] for d in docs} == {"literature"}
    assert manifest.input["ignored"] == ["poems/notes.md"]
    folder_entry = {k: v for k, v in manifest.input["files"][0].items() if k != "sampled"}
    assert folder_entry == {"name": "poems", "format": "txt", "files": len(DOCS),
                            "bytes": sum(len(d["text"].encode()) for d in DOCS)}
    (folder / "01.txt").write_text(DOCS[1]["text"] + " ", encoding="utf-8")
    assert describe_inputs(resolve_inputs([str(folder)])[0], "sampled") != manifest.input["files"]


ZH_PARAGRAPH = ("长江是中国最长的河流，全长约六千三百公里。它发源于青藏高原，流经十一个省、自治区和直辖市，"
                "最后在上海注入东海。长江流域是中国经济最发达的地区之一。")
EN_PARAGRAPH = "The café on the corner served crème brûlée to a naïve visitor — twice, as the façade suggests. " * 2


def test_txt_files_in_chinese_and_legacy_encodings_are_transcoded_and_counted(tmp_path: Path, run):
    folder = tmp_path / "legacy"
    folder.mkdir()
    files = {
        "gbk.txt": ZH_PARAGRAPH.encode("gbk"),
        "gb18030.txt": ZH_PARAGRAPH.encode("gb18030"),
        "utf16.txt": ZH_PARAGRAPH.encode("utf-16"),  # with its BOM
        "utf16-en.txt": EN_PARAGRAPH.encode("utf-16"),
        "utf8-bom.txt": b"\xef\xbb\xbf" + ZH_PARAGRAPH.encode("utf-8"),
        "cp1252.txt": EN_PARAGRAPH.encode("cp1252"),
        "binary.txt": random.Random(5).randbytes(4096),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    manifest = run(STAGE, tmp_path / "data", make_config(input=[folder]))
    _balanced(manifest)
    texts = {d["source_id"]: d["text"] for d in _read_docs(tmp_path / "data", manifest)}
    assert texts == {"gbk.txt": ZH_PARAGRAPH, "gb18030.txt": ZH_PARAGRAPH, "utf16.txt": ZH_PARAGRAPH,
                     "utf16-en.txt": EN_PARAGRAPH, "utf8-bom.txt": ZH_PARAGRAPH, "cp1252.txt": EN_PARAGRAPH}
    (binary,) = _read_excluded(tmp_path / "data", manifest, "bad_utf8")
    assert binary["location"] == "legacy/binary.txt" and "invalid UTF-8 at byte" in binary["signal"]
    details = json.loads((tmp_path / "data" / "ingest" / "_stats.json").read_text())["details"]
    assert details["transcoded"] == {"gb18030": 2, "utf_16": 2, "cp1252": 1}


ENGLISH_WITH_CURLY_QUOTES = (
    "The harbour at dusk\n\nNobody on the quay spoke of the storm any more. The lamps were lit early, and the "
    "gulls circled the masts. “We should go before the tide turns,” Mara said. “Do you remember the lighthouse "
    "near Bergen?” he asked, folding the map.\n\nBy the time the ferry left, the rain had stopped. She found a "
    "letter from her brother in the pocket of the old coat. For three winters the house had stood empty on the "
    "hill above the town.\n\nIt was late when the lights went out along the shore. “Tomorrow,” he said, “we will "
    "mend the nets and paint the boat.” The wind dropped, and the water lay still under the moon. “Sleep now,” "
    "she answered, and closed the shutters against the cold.")
TRANSCODED = {  # the first and the third defeat charset-normalizer's own first choice (cp1252; no candidate)
    "English with curly quotes in GBK": (ENGLISH_WITH_CURLY_QUOTES, "gbk"),
    "English with curly quotes and an accent in GBK": (
        "“Look,” said the café owner, “the river is rising again.” Nobody answered; the rain went on.", "gbk"),
    "ASCII-heavy Chinese technical text in GBK": (
        "问：`data_dir` 和 `key_file` 可以同时配置吗？答：可以，`data_dir` 用于数据，`key_file` 用于密钥。", "gbk"),
    "Traditional Chinese in Big5": ("長江是中國最長的河流，全長約六千三百公里。它發源於青藏高原，最後注入東海。", "big5"),
    "French in cp1252": ("Le café était fermé; la façade, très abîmée, attendait des réparations.", "cp1252"),
}


@pytest.mark.parametrize("case", TRANSCODED, ids=list(TRANSCODED))
def test_transcode_recovers_the_text_of_each_legacy_encoding(case: str):
    text, encoding = TRANSCODED[case]
    found = transcode(text.encode(encoding))
    assert found is not None and found[0] == text


def test_field_mapping_and_category_rules(tmp_path: Path, run):
    records = [
        {"uid": 7, "content": "mapped text one", "link": "u1", "site": "forum", "kind": "dialogue"},
        {"uid": 8, "content": "mapped text two", "site": "forum", "kind": "sports"},
        {"content": "no id, no source, no category"},
        {"uid": 9, "content": "source mapped by pattern", "site": "arxiv-2024", "kind": "news"},
    ]
    path = tmp_path / "mapped.jsonl"
    path.write_bytes(_jsonl_bytes(records))
    cfg = make_config(
        'ingest.fields={"text": "content", "id": "uid", "url": "link", "source": "site", "category": "kind"}',
        'ingest.source_categories={"arxiv-*": "academic"}',
        input=[path],
    )
    docs = _read_docs(tmp_path / "data", run(STAGE, tmp_path / "data", cfg))
    assert [d["source_id"] for d in docs] == ["7", "8", "mapped.jsonl:3", "9"]
    assert [d["source"] for d in docs] == ["forum", "forum", "mapped", "arxiv-2024"]
    assert [d["category"] for d in docs] == ["dialogue", "unknown", "unknown", "academic"]
    assert json.loads(docs[0]["meta"]) == {"url": "u1"}
    assert json.loads(docs[1]["meta"]) == {"category_raw": "sports"}


def test_doc_ids_are_dense_per_shard_and_stable(tmp_path: Path, run):
    path = tmp_path / "many.jsonl"
    path.write_bytes(_jsonl_bytes([{"id": str(i), "text": f"document {i} " * 20} for i in range(3000)]))
    cfg = make_config("ingest.shard_max_bytes=50000", "ingest.batch_rows=100", input=[path])
    manifest = run(STAGE, tmp_path / "a", cfg)
    assert len(manifest.shards) > 3
    seen = []
    for k, info in enumerate(manifest.shards):
        ids = read_shard(tmp_path / "a" / "ingest", info).column("doc_id").to_pylist()
        assert ids == [k * DOC_ID_STRIDE + row for row in range(len(ids))]
        seen += read_shard(tmp_path / "a" / "ingest", info).column("source_id").to_pylist()
    assert seen == [str(i) for i in range(3000)], "byte-range splitting must neither lose nor repeat lines"
    again = run(STAGE, tmp_path / "b", cfg)
    assert [s.sha256 for s in again.shards] == [s.sha256 for s in manifest.shards]


def test_split_jsonl_keeps_true_line_numbers(tmp_path: Path, run):
    lines = [json.dumps({"text": f"line {i} " * 30}) for i in range(500)]
    lines[321] = "{broken"
    path = tmp_path / "split.jsonl"
    path.write_text("\n".join(lines) + "\n")
    manifest = run(STAGE, tmp_path / "data", make_config("ingest.shard_max_bytes=4096", input=[path]))
    assert len(manifest.shards) > 5
    (bad,) = _read_excluded(tmp_path / "data", manifest, "bad_json")
    assert bad["location"] == "split.jsonl:322"
    assert bad["text"] == "{broken"


GARBAGE_SEED = 20240611
# The seeded 64 KiB of random bytes split into 249 lines: 2 are blank (not records), 246 hold invalid
# UTF-8 and 1 is valid UTF-8 but not JSON. Pinned so that a reader that miscounts garbage fails here.
GARBAGE_BAD_UTF8, GARBAGE_BAD_JSON = 246, 1

# Every hand-written bad line of mixed.jsonl: its location, the reason and the exact signal it is dropped with.
MIXED_BAD = {
    "messy/mixed.jsonl:2": ("bad_json", "Unterminated string starting at at column 22"),
    "messy/mixed.jsonl:3": ("bad_json", "a JSON list, not an object"),
    "messy/mixed.jsonl:4": ("bad_utf8", "invalid UTF-8 at byte 26"),
    "messy/mixed.jsonl:5": ("missing_text", "no 'text' field"),
    "messy/mixed.jsonl:6": ("missing_text", "no 'text' field"),
    "messy/mixed.jsonl:7": ("missing_text", "'text' is a int, not a string"),
    "messy/mixed.jsonl:8": ("empty_text", "text is empty or whitespace"),
    "messy/mixed.jsonl:9": ("bad_utf8", "text holds unpaired surrogates"),
}


def test_bad_records_are_counted_and_kept_for_audit(tmp_path: Path, run):
    folder = tmp_path / "messy"
    folder.mkdir()
    (folder / "mixed.jsonl").write_bytes(
        b'{"id": "ok-1", "text": "fine"}\n'
        b'{"id": "j1", "text": "unterminated\n'
        b'[1, 2, 3]\n'
        b'{"id": "u1", "text": "bad \xff byte"}\n'
        b'{"id": "m1", "title": "no text"}\n'
        b'{"id": "m2", "text": null}\n'
        b'{"id": "m3", "text": 42}\n'
        b'{"id": "e1", "text": "   \\n  "}\n'
        b'{"id": "s1", "text": "lone \\ud800 surrogate"}\n'
        b"\n"
        b'{"id": "ok-2", "text": "also fine"}\n'
    )
    (folder / "empty.jsonl").write_bytes(b"")
    garbage = random.Random(GARBAGE_SEED).randbytes(64 * 1024)
    (folder / "garbage.jsonl").write_bytes(garbage)
    big = "大" * (17 * 1024 * 1024)  # ~51 MB of UTF-8
    (folder / "big.jsonl").write_text(json.dumps({"id": "huge", "text": big}, ensure_ascii=False) + "\n")
    manifest = run(STAGE, tmp_path / "data", make_config(input=[folder]))
    _balanced(manifest)
    docs = _read_docs(tmp_path / "data", manifest)
    assert [d["source_id"] for d in docs] == ["ok-1", "ok-2"]

    garbage_lines = {f"messy/garbage.jsonl:{n}" for n, line in enumerate(garbage.split(b"\n"), 1) if line.strip()}
    assert len(garbage_lines) == GARBAGE_BAD_UTF8 + GARBAGE_BAD_JSON
    assert manifest.accounting.to_dict() == {
        "in": 10 + 1 + len(garbage_lines), "out": 2,
        "dropped": {"bad_json": 2 + GARBAGE_BAD_JSON, "bad_utf8": 2 + GARBAGE_BAD_UTF8, "missing_text": 3,
                    "empty_text": 1, "oversize": 1},
    }
    excluded = {reason: _read_excluded(tmp_path / "data", manifest, reason) for reason in manifest.accounting.dropped}
    mixed = {r["location"]: (reason, r["signal"]) for reason, rows in excluded.items() for r in rows
             if r["location"].startswith("messy/mixed.jsonl:")}
    assert mixed == MIXED_BAD
    from_garbage = Counter(reason for reason, rows in excluded.items() for r in rows
                           if r["location"] in garbage_lines)
    assert from_garbage == {"bad_utf8": GARBAGE_BAD_UTF8, "bad_json": GARBAGE_BAD_JSON}
    (huge,) = excluded["oversize"]
    assert huge["source_id"] == "huge" and huge["location"] == "messy/big.jsonl:1"
    assert huge["signal"] == f"{len(big.encode())} bytes > ingest.max_doc_bytes=10485760"
    by_location = {r["location"]: r for rows in excluded.values() for r in rows}
    assert by_location["messy/mixed.jsonl:3"]["text"] == "[1, 2, 3]"
    assert by_location["messy/mixed.jsonl:4"]["text"] == '{"id": "u1", "text": "bad \ufffd byte"}'
    assert by_location["messy/mixed.jsonl:7"]["source_id"] == "m3"


def test_parquet_without_text_column_drops_every_row_and_names_the_columns_it_has(tmp_path: Path, run, caplog):
    path = tmp_path / "notext.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(12)], "body": ["x"] * 12}), path)
    with caplog.at_level("WARNING"):
        manifest = run(STAGE, tmp_path / "data", make_config(input=[path]))
    assert manifest.accounting.to_dict() == {"in": 12, "out": 0, "dropped": {"missing_text": 12}}
    rows = _read_excluded(tmp_path / "data", manifest, "missing_text")
    assert [r["location"] for r in rows] == [f"notext.parquet:row {i}" for i in range(12)]
    assert ("notext.parquet: 12 of 12 records have no text field 'text' (ingest.fields.text); its records have the "
            "fields 'body', 'id'") in caplog.text


def test_a_binary_file_named_jsonl_gets_one_file_level_warning(tmp_path: Path, run, caplog):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.jsonl").write_bytes(_jsonl_bytes(DOCS * 5))
    (folder / "photo.jsonl").write_bytes(random.Random(7).randbytes(32 * 1024))
    with caplog.at_level("WARNING"):
        manifest = run(STAGE, tmp_path / "data", make_config(input=[folder]))
    _balanced(manifest)
    assert manifest.accounting.docs_out == 20
    warnings = [line for line in caplog.text.splitlines() if "photo.jsonl" in line]
    assert len(warnings) == 1 and "records are not UTF-8 JSON" in warnings[0] and "binary file" in warnings[0]
    assert "good.jsonl" not in caplog.text


def test_a_symlinked_folder_inside_the_input_is_read(tmp_path: Path, run):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "more.jsonl").write_bytes(_jsonl_bytes(DOCS[:2]))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "main.jsonl").write_bytes(_jsonl_bytes(DOCS[2:]))
    (corpus / "linked").symlink_to(elsewhere, target_is_directory=True)
    (corpus / "loop").symlink_to(corpus, target_is_directory=True)  # a cycle is walked once
    manifest = run(STAGE, tmp_path / "data", make_config(input=[corpus]))
    assert manifest.accounting.to_dict() == {"in": 4, "out": 4, "dropped": {}}
    assert sorted(d["source_id"] for d in _read_docs(tmp_path / "data", manifest)) == [d["id"] for d in DOCS]


def _truncated_inputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    good = folder / "good.jsonl"
    good.write_bytes(_jsonl_bytes(DOCS))
    payload = _jsonl_bytes(DOCS * 500)
    gz = folder / "cut.jsonl.gz"
    gz.write_bytes(gzip.compress(payload)[:-200])
    zst = folder / "cut.jsonl.zst"
    zst.write_bytes(zstandard.ZstdCompressor().compress(payload)[:-200])
    parquet = folder / "cut.parquet"
    pq.write_table(pa.Table.from_pylist(DOCS), parquet)
    parquet.write_bytes(parquet.read_bytes()[:-12])
    return {"gz": gz, "zst": zst, "parquet": parquet, "good": good}


@pytest.mark.parametrize("kind", ["gz", "zst", "parquet"])
def test_unreadable_file_is_an_error_naming_it(tmp_path: Path, run, kind: str):
    files = _truncated_inputs(tmp_path / "in")
    with pytest.raises(UnreadableFileError, match=files[kind].name):
        run(STAGE, tmp_path / "data", make_config(input=[files["good"], files[kind]]))
    assert not (tmp_path / "data" / "ingest" / "_manifest.json").exists()


def test_skip_bad_files_counts_each_as_one_record(tmp_path: Path, run):
    files = _truncated_inputs(tmp_path / "in")
    manifest = run(STAGE, tmp_path / "data", make_config("ingest.skip_bad_files=true", input=[tmp_path / "in"]))
    _balanced(manifest)
    assert manifest.accounting.dropped == {"bad_file": 3}
    assert manifest.accounting.docs_out == len(DOCS)
    skipped = {r["location"] for r in _read_excluded(tmp_path / "data", manifest, "bad_file")}
    assert skipped == {f"in/{files[k].name}" for k in ("gz", "zst", "parquet")}
