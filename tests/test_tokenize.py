"""The tokenize stage and the token reader: tokenizer, encoders, packing, and the whole stage via its CLI."""

from __future__ import annotations

import json
import logging
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from common.categories import CATEGORIES
from common.errors import KilnError
from common.files import file_sha256
from common.manifest import Accounting, Manifest, require_manifest, write_manifest
from common.runner import WORK_DIR
from common.schema import DOC_SCHEMA, category_array
from common.shards import ShardInfo, read_shard, write_shard
from common.tokenizer import EOS_TOKEN, load_tokenizer
from common.tokens import TokenDataset, TokenFileError
from demo.content_docs import clean_document
from stages.tokenize.bpe import train_tokenizer
from stages.tokenize.encoders import (
    PROBE_TEXTS,
    HFEncoder,
    TiktokenEncoder,
    choose_encoder,
    first_difference,
    to_tiktoken,
)
from stages.tokenize.pack import pack_split, shuffled_order
from stages.tokenize.sample import sample_texts
from stages.tokenize.stage import EMPTY, prepare
from tests.conftest import REPO, child_env, cli, make_config, run_in_process
from tests.resume_helpers import assert_same_output, resume_stage, run_to_fault, units_done
from tests.token_files import write_token_folder

MIX_SCHEMA = pa.schema([*DOC_SCHEMA, pa.field("dup_cluster_size", pa.int32()), pa.field("repeat", pa.int32())])
VOCAB = 2000

SAMPLES = {
    "zh": "自然语言处理是人工智能的一个重要方向。2024年，研究者发布了新的中文语料库，包含新闻、百科和对话。",
    "zh_punct": "　　“你好！”他说，“今天天气怎么样？”……她没有回答；窗外下着雨（很大）。",
    "en": "The committee's report, published on Monday, didn't address the 3.5% budget gap; they'll revisit it.",
    "code": "def add(a: int, b: int) -> int:\n    return a + b  # sum\n\n\nif __name__ == \"__main__\":\n\tprint(add(1, 2))\n",
    "emoji": "Great job 👍🏽🎉 family 👨‍👩‍👧 flag 🇯🇵 ★★★☆☆ ✓",
    "mixed": "使用 PyTorch 2.1 训练 GPT 模型，batch size 为 512，learning rate 设为 3e-4（warmup 2000 步）。",
    "whitespace": "a  b   c    d\n\n\n  indented\n\t\ttabs\r\nwindows\u3000全角空格\u00a0nbsp   \n",
    "special": "text with <|endoftext|> and <|pad|> inside",
}


def _documents(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(text, category, lang) of ``n`` generated documents, Chinese and English in every category."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        category, lang = CATEGORIES[i % len(CATEGORIES)], ("zh", "en")[(i // len(CATEGORIES)) % 2]
        docs.append((clean_document(rng, category, lang, f"{category}-{lang}"), category, lang))
    return docs


def _mix_table(docs: list[tuple[str, str, str]], first_id: int, repeats: list[int]) -> pa.Table:
    n = len(docs)
    return pa.Table.from_pydict({
        "doc_id": list(range(first_id, first_id + n)),
        "source_id": [f"s{first_id + i}" for i in range(n)],
        "text": [d[0] for d in docs],
        "source": [f"{d[1]}-{d[2]}" for d in docs],
        "category": category_array([d[1] for d in docs]),
        "lang": [d[2] for d in docs],
        "lang_score": [0.9] * n,
        "meta": ["{}"] * n,
        "dup_cluster_size": [1] * n,
        "repeat": repeats,
    }, schema=MIX_SCHEMA)


def build_mix(data_dir: Path, train_shards: int = 2, per_shard: int = 60, validation: int = 20) -> dict[int, str]:
    """A finished mix stage under ``data_dir/mix`` (one empty document included); returns text by doc_id."""
    mix = data_dir / "mix"
    rng = random.Random(7)
    texts: dict[int, str] = {}
    shards = []
    docs = _documents(train_shards * per_shard + validation, seed=3)
    docs[5] = ("", docs[5][1], docs[5][2])
    for k in range(train_shards):
        part = docs[k * per_shard:(k + 1) * per_shard]
        table = _mix_table(part, k * 1000, [rng.choice([1, 1, 2, 3]) for _ in part])
        shards.append(write_shard(mix / f"part-{k:05d}.arrow", table, mix))
        texts |= dict(zip(table.column("doc_id").to_pylist(), table.column("text").to_pylist(), strict=True))
    held = _mix_table(docs[train_shards * per_shard:], 900_000, [1] * validation)
    valid = write_shard(mix / "validation" / "part-00000.arrow", held, mix)
    texts |= dict(zip(held.column("doc_id").to_pylist(), held.column("text").to_pylist(), strict=True))
    total = len(docs)
    write_manifest(mix, Manifest(stage="mix", code_version="test", fingerprint="test", config={}, input={},
                                 shards=shards, excluded={}, accounting=Accounting(total, total),
                                 outputs={"validation": [valid]}))
    return texts


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return train_tokenizer([d[0] for d in _documents(240, seed=11)] + list(SAMPLES.values()), VOCAB)


# --- the reader ---------------------------------------------------------------------------------------------


def test_reader_needs_neither_pyarrow_nor_pydantic():
    code = ("import sys\n"
            "for name in ('pyarrow', 'pydantic', 'yaml', 'tokenizers', 'tiktoken', 'tqdm'):\n"
            "    sys.modules[name] = None\n"
            "import common.tokens\n"
            "assert not [m for m in sys.modules if m.startswith(('common.config', 'common.shards'))]\n")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=child_env(), check=True)


def _write_stream(folder: Path, docs: list[list[int]], seq_len: int = 4, vocab: int = 100) -> Path:
    return write_token_folder(folder, {"train": [np.array(d) for d in docs]}, vocab, seq_len)


def test_reader_windows_overlap_by_one_token_and_labels_shift(tmp_path: Path):
    bin_path = _write_stream(tmp_path, [[5, 6, 7, 0], [8, 9, 10, 11, 12, 0], [13, 0]])
    data = TokenDataset(bin_path)
    assert (data.n_tokens, len(data), data.seq_len) == (12, 2, 4)  # (12 - 1) // 4 windows of 5
    assert data.window(0).tolist() == [5, 6, 7, 0, 8]
    assert data.window(1).tolist() == [8, 9, 10, 11, 12]
    inputs, labels = data.batch([1, 0])
    assert inputs.dtype == np.int32 and inputs.shape == (2, 4)
    assert inputs.tolist() == [[8, 9, 10, 11], [5, 6, 7, 0]]
    assert labels.tolist() == [[9, 10, 11, 12], [6, 7, 0, 8]]
    assert data.batch([0], dtype=np.int64)[0].dtype == np.int64
    assert data.doc_boundaries().tolist() == [0, 4, 10, 12]
    assert len(TokenDataset(bin_path, seq_len=2)) == 5
    with pytest.raises(IndexError):
        data.window(2)


def test_reader_refuses_files_that_disagree_with_the_metadata(tmp_path: Path):
    bin_path = _write_stream(tmp_path, [[5, 6, 7, 0], [8, 0]])
    bin_path.write_bytes(bin_path.read_bytes()[:-2])
    with pytest.raises(TokenFileError, match=r"train\.bin: 10 bytes, but meta\.json records 6"):
        TokenDataset(bin_path)
    bin_path = _write_stream(tmp_path, [[5, 6, 7, 0], [8, 0]])
    (tmp_path / "train.idx").write_bytes(np.array([0, 4], np.int64).tobytes())
    with pytest.raises(TokenFileError, match=r"train\.idx"):
        TokenDataset(bin_path)
    _write_stream(tmp_path, [[5, 6, 7, 0], [8, 0]])
    meta = json.loads((tmp_path / "meta.json").read_text())
    (tmp_path / "meta.json").write_text(json.dumps(meta | {"dtype": "int32"}))
    with pytest.raises(TokenFileError, match="dtype 'int32'"):
        TokenDataset(bin_path)
    (tmp_path / "meta.json").write_text(json.dumps(meta | {"vocab_size": 70000}))
    with pytest.raises(TokenFileError, match="vocab_size 70000"):
        TokenDataset(bin_path)
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "train.idx").unlink()
    with pytest.raises(TokenFileError, match=r"train\.idx: document index not found"):
        TokenDataset(bin_path)
    with pytest.raises(TokenFileError, match=r"nothing\.bin"):
        TokenDataset(tmp_path / "nothing.bin")


# --- tokenizer and encoders ---------------------------------------------------------------------------------


def test_verify_finds_edits_by_mode_and_batches_refuse_ids_beyond_the_vocabulary(tmp_path: Path):
    rng = np.random.default_rng(3)
    docs = [rng.integers(2, 100, 1000) for _ in range(2000)]  # 4 MB: larger than the 16 sampled blocks
    bin_path = _write_stream(tmp_path, docs, seq_len=64)
    assert "every byte hashed" in TokenDataset(bin_path).verify("auto")
    blob = bytearray(bin_path.read_bytes())
    inside, outside = 0, 3 * 64 * 1024 + 100  # the first block is sampled; this offset lies between blocks
    blob[outside] ^= 0x01
    bin_path.write_bytes(bytes(blob))
    assert "16 sampled blocks" in TokenDataset(bin_path).verify("sampled")  # the documented trade-off
    with pytest.raises(TokenFileError, match="train.bin: its sha256 is not the one meta.json records"):
        TokenDataset(bin_path).verify("full")
    blob[inside:inside + 2] = (500).to_bytes(2, "little")
    bin_path.write_bytes(bytes(blob))
    with pytest.raises(TokenFileError, match="token 0 has id 500, not below the vocab_size 100"):
        TokenDataset(bin_path).verify("sampled")
    with pytest.raises(TokenFileError, match="token 0 has id 500"):
        TokenDataset(bin_path).batch([0])
    assert TokenDataset(bin_path).batch([1])[0].shape == (1, 64)


def test_verify_refuses_a_meta_json_the_manifest_does_not_list(tmp_path: Path):
    bin_path = _write_stream(tmp_path, [[5, 6, 7, 0], [8, 9, 0]])
    meta = tmp_path / "meta.json"
    (tmp_path / "_manifest.json").write_text(json.dumps(
        {"outputs": {"meta": [{"path": "meta.json", "sha256": file_sha256(meta)}]}}))
    assert "verified" in TokenDataset(bin_path).verify()
    meta.write_text(meta.read_text().replace('"seq_len": 4', '"seq_len": 2'))
    with pytest.raises(TokenFileError, match="meta.json: changed after the tokenize stage wrote it"):
        TokenDataset(bin_path).verify()


def test_decode_of_encode_is_the_text_in_chinese_and_english(tokenizer: Tokenizer):
    encoding = to_tiktoken(tokenizer)
    texts = [*SAMPLES.values(), *(d[0] for d in _documents(24, seed=99))]
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        assert tokenizer.decode(ids) == text
        assert encoding.decode(encoding.encode_ordinary(text)) == text
    assert tokenizer.token_to_id(EOS_TOKEN) == 0 and tokenizer.token_to_id("<|pad|>") == 1
    assert 0 not in tokenizer.encode(SAMPLES["special"]).ids  # a literal EOS in a document is ordinary text


def test_training_is_deterministic():
    texts = [d[0] for d in _documents(60, seed=5)]
    assert train_tokenizer(texts, 600).to_str() == train_tokenizer(texts, 600).to_str()


def test_a_tokenizer_with_ids_beyond_uint16_is_refused(tmp_path: Path):
    vocab = {ch: i for i, ch in enumerate(pre_tokenizers.ByteLevel.alphabet())}
    vocab |= {f"tok{i}": len(vocab) + i for i in range(100_000 - len(vocab))}
    big = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    big.add_special_tokens([EOS_TOKEN])
    path = tmp_path / "big.json"
    big.save(str(path))
    with pytest.raises(KilnError, match=rf"{path}: the largest token id is 100,000, which does not fit uint16"):
        load_tokenizer(path)
    build_mix(tmp_path)
    cfg = make_config(f"tokenize.tokenizer_path={path}")
    with pytest.raises(KilnError, match="100,000"):
        prepare(cfg, tmp_path / "mix", tmp_path / "tokenize", logging.getLogger("test"))
    assert not (tmp_path / "tokenize" / "tokenizer.json").exists()


def _code_point_texts() -> list[str]:
    points = [c for c in range(0x30000) if not 0xD800 <= c < 0xE000]
    return [f"a{chr(c)}b {chr(c)}\n{chr(c)}{chr(c)}中{chr(c)}1" for c in points[::3]]


@pytest.fixture(scope="module")
def large_tokenizer() -> Tokenizer:
    return train_tokenizer([d[0] for d in _documents(1500, seed=12)], 8000)


@pytest.mark.parametrize("which", ["tokenizer", "large_tokenizer"])
def test_tiktoken_gives_the_hf_ids(which: str, request: pytest.FixtureRequest):
    tokenizer = request.getfixturevalue(which)
    encoding = to_tiktoken(tokenizer)
    rng = random.Random(0)
    entries = [tokenizer.decode([i]) for i in range(2, tokenizer.get_vocab_size())]
    joined = ["".join(rng.choice(entries) for _ in range(rng.randint(2, 6))) for _ in range(5000)]
    texts = [*SAMPLES.values(), *PROBE_TEXTS, *(d[0] for d in _documents(120, seed=42)), *joined,
             *_code_point_texts(), "", " ", "\n\n", "   \n\t ", "x" * 20000, "中" * 5000]
    assert first_difference(tokenizer, encoding, texts) is None
    hf_ids, hf_lengths = HFEncoder(tokenizer).encode(texts)
    tk_ids, tk_lengths = TiktokenEncoder(encoding).encode(texts)
    assert np.array_equal(hf_lengths, tk_lengths) and np.array_equal(hf_ids, tk_ids)


def test_encoder_choice_falls_back_to_hf(tokenizer: Tokenizer):
    assert choose_encoder(tokenizer, "auto", list(SAMPLES.values()))[0] == "tiktoken"
    assert choose_encoder(tokenizer, "hf", [])[0] == "hf"
    from tokenizers import normalizers

    lowered = Tokenizer.from_str(tokenizer.to_str())
    lowered.normalizer = normalizers.Lowercase()
    name, reason = choose_encoder(lowered, "auto", [])
    assert name == "hf" and "normalizer" in reason
    with pytest.raises(KilnError, match="tokenize.encoder is tiktoken"):
        choose_encoder(lowered, "tiktoken", [])


# --- sample and packing -------------------------------------------------------------------------------------


def test_the_training_sample_is_seeded_spread_and_within_budget(tmp_path: Path):
    texts = build_mix(tmp_path, train_shards=3, per_shard=40)
    shards = require_manifest(tmp_path / "mix").shards
    budget = 20_000
    sample = sample_texts(tmp_path / "mix", shards, budget, seed=1)
    assert sample == sample_texts(tmp_path / "mix", shards, budget, seed=1)
    assert sample != sample_texts(tmp_path / "mix", shards, budget, seed=2)
    sizes = [len(t.encode()) for t in sample]
    assert budget <= sum(sizes) < budget + max(sizes)
    by_text = {t: i for i, t in texts.items()}
    shard_of = [by_text[t] // 1000 for t in sample]
    assert shard_of == sorted(shard_of) and set(shard_of) == {0, 1, 2}
    everything = sample_texts(tmp_path / "mix", shards, 10**9, seed=1)
    assert len(everything) == 120


def test_shuffled_order_expands_repeats_and_depends_on_the_seed():
    ids = np.array([10, 11, 12, 13, 14], np.int64)
    repeats = np.array([1, 3, 1, 2, 1], np.int64)
    order = shuffled_order(ids, repeats, seed=1)
    assert Counter(order.tolist()) == {0: 1, 1: 3, 2: 1, 3: 2, 4: 1}
    assert np.array_equal(order, shuffled_order(ids, repeats, seed=1))
    assert not np.array_equal(order, shuffled_order(ids, repeats, seed=2))
    # a document's place depends on its id and the seed, not on where it sits in the input
    flipped = shuffled_order(ids[::-1].copy(), repeats[::-1].copy(), seed=1)
    assert np.array_equal(ids[order], ids[::-1][flipped])


def test_an_empty_split_packs_to_an_empty_stream(tmp_path: Path):
    (tmp_path / WORK_DIR).mkdir()
    infos, tally = pack_split(tmp_path, "validation", [], seed=1, max_documents=10)
    assert (tmp_path / "validation.bin").stat().st_size == 0
    assert np.fromfile(tmp_path / "validation.idx", np.int64).tolist() == [0]
    assert [i.rows for i in infos] == [0, 0] and tally["documents"] == tally["tokens"] == 0
    meta = {"format": "kiln-tokens/1", "dtype": "uint16", "vocab_size": 10, "eos_id": 0, "seq_len": 8,
            "splits": {"validation": {"bin": "validation.bin", "idx": "validation.idx", "tokens": 0, "documents": 0}}}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    data = TokenDataset(tmp_path / "validation.bin")
    assert len(data) == 0 and data.doc_boundaries().tolist() == [0]


# --- the whole stage ----------------------------------------------------------------------------------------


TOKENIZE_SETTINGS = (f"tokenize.vocab_size={VOCAB}", "tokenize.sample_bytes=200000", "tokenize.seq_len=64")


def _set(*settings: str) -> list[str]:
    """``--set`` options for the stage's command line: TOKENIZE_SETTINGS, then ``settings``."""
    return [arg for setting in (*TOKENIZE_SETTINGS, *settings) for arg in ("--set", setting)]


@pytest.fixture(scope="module")
def tokenized(tmp_path_factory, ray_local) -> tuple[Path, dict[int, str]]:
    """The stage run in this process on a small mix (the manifest test reruns it as a command)."""
    data = tmp_path_factory.mktemp("tokenize")
    texts = build_mix(data)
    run_in_process("-m", "stages.tokenize", "--data-dir", str(data), *_set())
    return data, texts


def _units(stage_dir: Path, split: str) -> list[ShardInfo]:
    return [s for s in require_manifest(stage_dir).shards
            if read_shard(stage_dir, s).column("split").to_pylist()[:1] == [split]]


@pytest.mark.slow
def test_stage_manifest_lists_the_packed_files_with_their_checksums(tokenized):
    data, texts = tokenized
    stage = data / "tokenize"
    manifest = require_manifest(stage)
    assert set(manifest.outputs) == {"train", "validation", "meta", "tokenizer"}
    for name in ("train", "validation", "meta", "tokenizer"):
        for info in manifest.outputs[name]:
            assert file_sha256(stage / info.path) == info.sha256 and (stage / info.path).stat().st_size == info.bytes
    assert [i.path for i in manifest.outputs["train"]] == ["train.bin", "train.idx"]
    acc = manifest.accounting
    assert (acc.docs_in, acc.docs_out, acc.dropped) == (len(texts), len(texts) - 1, {EMPTY: 1})
    assert len(manifest.shards) == 3
    meta = json.loads((stage / "meta.json").read_text())
    assert meta["tokenizer"]["sha256"] == file_sha256(stage / "tokenizer.json")
    assert meta["tokenizer"]["encoder"] == "tiktoken"
    assert (meta["vocab_size"], meta["eos_id"], meta["pad_id"], meta["seq_len"]) == (VOCAB, 0, 1, 64)
    train = meta["splits"]["train"]
    assert sum(train["tokens_by_category"].values()) == sum(train["tokens_by_lang"].values()) == train["tokens"]
    assert train["unique_documents"] == 119 and meta["splits"]["validation"]["documents"] == 20
    for info in manifest.outputs["train"] + manifest.outputs["validation"]:
        split = info.path.split(".")[0]
        assert meta["splits"][split]["checksums"][info.path]["sha256"] == info.sha256
    for mode, how in (("full", "every byte hashed"), ("sampled", "16 sampled blocks")):
        assert how in TokenDataset(stage / "train.bin").verify(mode)
    excluded = read_shard(stage, manifest.excluded[EMPTY][0]).to_pylist()
    assert excluded[0]["doc_id"] == 5 and excluded[0]["text"] == ""
    rerun = cli("-m", "stages.tokenize", "--data-dir", str(data), *_set())
    assert "already done" in rerun.stderr


@pytest.mark.slow
def test_the_stream_holds_each_document_repeat_times_in_the_seeded_order(tokenized):
    data, texts = tokenized
    stage = data / "tokenize"
    tokenizer = load_tokenizer(stage / "tokenizer.json")
    for split in ("train", "validation"):
        units = [read_shard(stage, s) for s in _units(stage, split)]
        ids = np.concatenate([u.column("doc_id").to_numpy() for u in units])
        repeats = np.concatenate([u.column("repeat").to_numpy() for u in units]).astype(np.int64)
        expected = ids[shuffled_order(ids, repeats, seed=1234)]
        dataset = TokenDataset(stage / f"{split}.bin")
        bounds = dataset.doc_boundaries()
        assert len(bounds) == expected.size + 1 == int(repeats.sum()) + 1
        for i, doc_id in enumerate(expected.tolist()):
            tokens = dataset.tokens[bounds[i]:bounds[i + 1]].tolist()
            assert tokens[-1] == 0 and 0 not in tokens[:-1]
            assert tokenizer.decode(tokens[:-1]) == texts[doc_id]
        assert dataset.seq_len == 64 and len(dataset) == (dataset.n_tokens - 1) // 64
        last = len(dataset) - 1
        assert dataset.window(last).tolist() == dataset.tokens[last * 64:last * 64 + 65].tolist()


@pytest.mark.slow
def test_packing_is_byte_identical_per_seed_and_a_new_seed_only_reorders(tokenized, tmp_path: Path):
    data, _ = tokenized
    stage = data / "tokenize"
    shards = _units(stage, "train")
    streams = {}
    for name, seed in (("a", 1234), ("b", 1234), ("c", 99)):
        folder = tmp_path / name
        (folder / WORK_DIR).mkdir(parents=True)
        for info in shards:
            shutil.copy(stage / info.path, folder / info.path)
        infos, _ = pack_split(folder, "train", shards, seed, max_documents=10**9)
        streams[name] = ((folder / "train.bin").read_bytes(), np.fromfile(folder / "train.idx", np.int64))
        assert infos[0].sha256 == file_sha256(folder / "train.bin")
        assert not list((folder / WORK_DIR).iterdir())
    assert streams["a"][0] == streams["b"][0] == (stage / "train.bin").read_bytes()
    assert streams["a"][0] != streams["c"][0]

    def documents(stream: tuple[bytes, np.ndarray]) -> Counter:
        tokens = np.frombuffer(stream[0], np.uint16)
        return Counter(tokens[a:b].tobytes() for a, b in zip(stream[1][:-1], stream[1][1:], strict=True))

    assert documents(streams["a"]) == documents(streams["c"])




@pytest.mark.slow
def test_a_split_over_the_stream_limit_is_packed_as_streams_read_as_one(tokenized, tmp_path: Path):
    data, _ = tokenized
    stage = data / "tokenize"
    shards = _units(stage, "train")
    assert len(shards) >= 2, "the fixture needs several unit shards"
    limit = max(info.rows for info in shards)  # each stream holds whole unit shards, at most this many documents
    (tmp_path / WORK_DIR).mkdir()
    for info in shards:
        shutil.copy(stage / info.path, tmp_path / info.path)
    infos, tally = pack_split(tmp_path, "train", shards, 1234, max_documents=limit)
    streams = tally["streams"]
    assert len(streams) > 1 and [i.path for i in infos] == [n for s in streams for n in (s["bin"], s["idx"])]
    assert streams[0]["bin"] == "train-00000.bin" and not (tmp_path / "train.bin").exists()
    assert sum(s["tokens"] for s in streams) == tally["tokens"] and sum(s["documents"] for s in streams) == \
        tally["documents"]
    meta = json.loads((stage / "meta.json").read_text())
    meta["splits"] = {"train": tally}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    dataset = TokenDataset(tmp_path / "train.bin", seq_len=64)
    joined = np.concatenate([np.fromfile(tmp_path / s["bin"], np.uint16) for s in streams])
    assert dataset.n_tokens == joined.size and dataset.tokens is None
    for i in (0, len(dataset) // 2, len(dataset) - 1, streams[0]["tokens"] // 64):  # the last one spans a seam
        assert dataset.window(i).tolist() == joined[i * 64:i * 64 + 65].tolist()
    inputs, labels = dataset.batch([streams[0]["tokens"] // 64, 0])
    assert inputs[0].tolist() == joined[streams[0]["tokens"] // 64 * 64:][:64].tolist()
    bounds = dataset.doc_boundaries()
    documents = Counter(joined[a:b].tobytes() for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    single = TokenDataset(stage / "train.bin", seq_len=64)
    expected = single.doc_boundaries()
    assert documents == Counter(single.tokens[a:b].tobytes() for a, b in zip(expected[:-1], expected[1:], strict=True))



@pytest.mark.slow
def test_the_stage_writes_streams_over_the_limit_and_the_manifest_and_doctor_accept_them(tmp_path: Path, in_process):
    build_mix(tmp_path)
    in_process("-m", "stages.tokenize", "--data-dir", str(tmp_path),
               *_set("tokenize.stream_max_documents=60"))
    stage = tmp_path / "tokenize"
    manifest = require_manifest(stage)
    assert [i.path for i in manifest.outputs["train"]] == ["train-00000.bin", "train-00000.idx",
                                                           "train-00001.bin", "train-00001.idx"]
    assert [i.path for i in manifest.outputs["validation"]] == ["validation.bin", "validation.idx"]
    meta = json.loads((stage / "meta.json").read_text())
    assert [s["bin"] for s in meta["splits"]["train"]["streams"]] == ["train-00000.bin", "train-00001.bin"]
    dataset = TokenDataset(stage / "train.bin")
    assert dataset.n_tokens == meta["splits"]["train"]["tokens"] and len(dataset) > 0
    assert "every byte hashed" in dataset.verify("full") and "sampled blocks" in dataset.verify("sampled")
    doctor = cli("-m", "kiln", "doctor", "--data-dir", str(tmp_path), check=False)
    assert "train.bin" in doctor.stdout and "FAIL" not in next(line for line in doctor.stdout.splitlines()
                                                               if "train.bin" in line), doctor.stdout



def _killed_tokenize(data: Path, fault: str) -> Path:
    """The finished build_mix under ``data`` tokenized with the settings of ``tokenized``, killed at ``fault``."""
    build_mix(data)
    args = ["-m", "stages.tokenize", "--data-dir", str(data), "--set", "ray.num_cpus=1"]
    run_to_fault([*args, *_set()], fault, data / "killed.log")
    stage = data / "tokenize"
    assert not (stage / "_manifest.json").exists() and not (stage / "meta.json").exists()
    return stage


@pytest.mark.slow
def test_killed_after_training_the_tokenizer_then_resumed_is_byte_identical(tokenized, tmp_path: Path, ray_local):
    stage = _killed_tokenize(tmp_path, "tokenize.bpe:1")
    assert not (stage / "tokenizer.json").exists(), "the kill lands before tokenizer.json is written"
    assert units_done(stage) == 0 and not list(stage.glob("*.bin"))
    log = resume_stage("tokenize", tmp_path, *TOKENIZE_SETTINGS)
    assert f"training a {VOCAB}-token byte-level BPE" in log and "reusing" not in log
    assert_same_output(stage, tokenized[0] / "tokenize")


@pytest.mark.slow
def test_killed_while_packing_then_resumed_is_byte_identical(tokenized, tmp_path: Path, ray_local):
    stage = _killed_tokenize(tmp_path, "tokenize.pack:1")
    units = len(require_manifest(tokenized[0] / "tokenize").shards)
    # the kill lands after the training split is packed, before the validation split
    assert units_done(stage) == units and (stage / "train.bin").exists() and (stage / "train.idx").exists()
    assert not (stage / "validation.bin").exists() and not (stage / "validation.idx").exists()
    log = resume_stage("tokenize", tmp_path, *TOKENIZE_SETTINGS)
    assert f"resuming tokenize: {units} of {units} units already done" in log and "training a" not in log
    assert_same_output(stage, tokenized[0] / "tokenize")
