"""The tokenize stage: a byte-level BPE tokenizer, documents encoded per mix shard, then packed streams.

Global step (``prepare``): train the tokenizer on a seeded sample of the training split (or copy
the user's), save ``tokenizer.json``, and pick the encoder (``_work/encoder.json``). Map units,
one per mix shard (training shards, then validation shards): encode the documents, each ending
with EOS, into ``part-NNNNN.arrow``. ``finalize``: per split, shuffle the documents with their
repeats expanded and write ``<split>.bin`` / ``<split>.idx``, then ``meta.json``.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tokenizers import Tokenizer

from common.config import KilnConfig
from common.errors import KilnError
from common.eval_sets import DECONTAMINATING_STAGE, DECONTAMINATION_REPORT
from common.faults import fault_point
from common.files import atomic_write_bytes, atomic_write_json, file_sha256
from common.manifest import manifest_sha256, require_manifest
from common.ray_cluster import stage_resource
from common.runner import WORK_DIR, MapStage, Plan, UnitContext, UnitResult, WorkUnit, run_tasks
from common.schema import CATEGORY_TYPE
from common.shards import ShardInfo, iter_batches
from common.tokenizer import check_fits_uint16, largest_id, load_tokenizer, special_ids
from common.tokens import META_FORMAT, META_NAME, TOKEN_DTYPE
from stages.tokenize.bpe import train_tokenizer
from stages.tokenize.config import TokenizeConfig
from stages.tokenize.encoders import HFEncoder, TiktokenEncoder, choose_encoder, make_encoder
from stages.tokenize.pack import pack_split
from stages.tokenize.sample import leading_texts, sample_texts

TOKENIZER_NAME = "tokenizer.json"
ENCODER_NAME = "encoder.json"
SPLITS = ("train", "validation")
EMPTY = "empty_after_tokenize"
VERIFY_BYTES = 4 << 20
REQUIRED_COLUMNS = ("doc_id", "source_id", "text", "source", "category", "lang", "repeat")

TOKENS_SCHEMA = pa.schema([
    pa.field("doc_id", pa.int64(), nullable=False),
    pa.field("split", pa.string()),
    pa.field("category", CATEGORY_TYPE),
    pa.field("source", pa.string()),
    pa.field("lang", pa.string()),
    pa.field("repeat", pa.int32()),
    pa.field("tokens", pa.list_(pa.uint16())),
])


def _tokenizer_source(tcfg: TokenizeConfig) -> dict:
    if tcfg.tokenizer_path is None:
        return {"trained": True}
    path = Path(tcfg.tokenizer_path)
    if not path.is_file():
        raise KilnError(f"tokenize.tokenizer_path: {path}: tokenizer file not found")
    return {"path": str(path), "sha256": file_sha256(path)}


def plan(cfg: KilnConfig, input_dir: Path | None) -> Plan:
    """One unit per mix shard: the training shards, then the validation shards."""
    assert input_dir is not None
    manifest = require_manifest(input_dir)
    shards = [("train", s) for s in manifest.shards] + [("validation", s) for s in manifest.outputs.get("validation", [])]
    units = [WorkUnit(index=i, spec={"split": split, "shard": info.to_dict()}) for i, (split, info) in enumerate(shards)]
    source = {"stage": manifest.stage, "manifest_sha256": manifest_sha256(input_dir),
              "tokenizer": _tokenizer_source(cfg.tokenize)}
    return Plan(units=units, input=source)


def train_on_sample(input_dir: str, shards: list[dict], tcfg: TokenizeConfig) -> dict:
    """A Ray task, so that the driver never holds the trainer's memory (about 30 bytes a byte of sample): train the
    tokenizer on the seeded sample of ``shards``; returns its JSON and the sample's documents and bytes."""
    infos = [ShardInfo(**shard) for shard in shards]
    texts = sample_texts(Path(input_dir), infos, tcfg.sample_bytes, tcfg.seed)
    size = sum(len(t.encode("utf-8")) for t in texts)
    if size < tcfg.min_sample_bytes:
        raise KilnError(
            f"tokenize: the training split holds {size:,} bytes of text in {len(texts):,} documents, below "
            f"tokenize.min_sample_bytes {tcfg.min_sample_bytes:,}: a tokenizer trained on it would be useless. "
            f"Give the mix more documents (see `kiln status {Path(input_dir).parent}` for what was dropped), pass a "
            "trained tokenizer (tokenize.tokenizer_path), or lower tokenize.min_sample_bytes")
    return {"tokenizer": train_tokenizer(texts, tcfg.vocab_size).to_str(), "documents": len(texts), "bytes": size}


def prepare(cfg: KilnConfig, input_dir: Path | None, stage_dir: Path, log: logging.Logger) -> None:
    """Train (or copy) the tokenizer once, then choose the encoder once; both are reused on resume."""
    assert input_dir is not None
    tcfg = cfg.tokenize
    train_shards = require_manifest(input_dir).shards
    path = stage_dir / TOKENIZER_NAME
    if path.exists():
        log.info("tokenize: reusing %s", path)
    elif tcfg.tokenizer_path is not None:
        source = Path(tcfg.tokenizer_path)
        load_tokenizer(source)
        atomic_write_bytes(path, source.read_bytes())
        log.info("tokenize: using %s", source)
    else:
        start = time.perf_counter()
        log.info("tokenize: training a %d-token byte-level BPE on up to %.1f MB of the training split",
                 tcfg.vocab_size, tcfg.sample_bytes / 1e6)
        [trained] = run_tasks(train_on_sample, [(str(input_dir), [s.to_dict() for s in train_shards], tcfg)], cfg,
                              "tokenize BPE", log, "tokenize.bpe_task", resource=stage_resource(cfg.ray, "tokenize"))
        tokenizer = Tokenizer.from_str(trained["tokenizer"])
        fault_point("tokenize.bpe")
        check_fits_uint16(tokenizer, str(path))
        atomic_write_bytes(path, trained["tokenizer"].encode("utf-8"))
        log.info("tokenize: %d ids trained on %d documents (%.1f MB) in %.1f s -> %s", largest_id(tokenizer) + 1,
                 trained["documents"], trained["bytes"] / 1e6, time.perf_counter() - start, path)
    choice_path = stage_dir / WORK_DIR / ENCODER_NAME
    if not choice_path.exists():
        texts = list(leading_texts(input_dir, train_shards, VERIFY_BYTES))
        name, reason = choose_encoder(load_tokenizer(path), tcfg.encoder, texts)
        atomic_write_json(choice_path, {"encoder": name, "reason": reason})
    choice = json.loads(choice_path.read_text())
    log.info("tokenize: encoding with %s (%s)", choice["encoder"], choice["reason"])


def encode_documents(batch: pa.RecordBatch, split: str, encoder: HFEncoder | TiktokenEncoder,
                     eos: int) -> tuple[pa.Table, np.ndarray]:
    """Encode a batch: (rows with their tokens, each ending with EOS; positions of empty documents)."""
    ids, lengths = encoder.encode(batch.column("text").to_pylist())
    nonempty = lengths > 0
    sizes = lengths + nonempty
    ends = np.cumsum(sizes)
    flat = np.empty(int(ends[-1]) if ends.size else 0, dtype=np.uint16)
    if flat.size > np.iinfo(np.int32).max:
        raise KilnError(f"tokenize: {flat.size:,} tokens in one batch overflow an Arrow list; lower tokenize.batch_docs")
    is_eos = np.zeros(flat.size, dtype=bool)
    is_eos[ends[nonempty] - 1] = True
    flat[~is_eos] = ids
    flat[is_eos] = eos
    offsets = np.concatenate([[0], ends]).astype(np.int32)
    table = pa.Table.from_arrays([
        batch.column("doc_id").cast(pa.int64()),
        pa.array([split] * batch.num_rows, pa.string()),
        batch.column("category").cast(CATEGORY_TYPE),
        batch.column("source").cast(pa.string()),
        batch.column("lang").cast(pa.string()),
        batch.column("repeat").cast(pa.int32()),
        pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat)),
    ], schema=TOKENS_SCHEMA)
    empty = np.nonzero(~nonempty)[0]
    return (table if not empty.size else table.filter(pa.array(nonempty))), empty


def _check_input(batch: pa.RecordBatch, info: ShardInfo) -> None:
    missing = [c for c in REQUIRED_COLUMNS if c not in batch.schema.names]
    if missing:
        raise KilnError(f"tokenize: mix shard {info.path} lacks the columns {missing}")
    repeats = batch.column("repeat").to_numpy(zero_copy_only=False)
    if repeats.size and repeats.min() < 1:
        raise KilnError(f"tokenize: mix shard {info.path} has a repeat of {repeats.min()} (must be at least 1)")


def process(unit: WorkUnit, ctx: UnitContext) -> None:
    """Encode one mix shard in batches of tokenize.batch_docs documents."""
    tokenizer = load_tokenizer(ctx.stage_dir / TOKENIZER_NAME)
    choice = json.loads((ctx.stage_dir / WORK_DIR / ENCODER_NAME).read_text())
    encoder = make_encoder(tokenizer, choice["encoder"])
    eos, _ = special_ids(tokenizer)
    split = unit.spec["split"]
    info = ShardInfo(**unit.spec["shard"])
    step = ctx.cfg.tokenize.batch_docs
    for batch in iter_batches(ctx.input_dir, info):
        _check_input(batch, info)
        for start in range(0, batch.num_rows, step):
            part = batch.slice(start, step)
            ctx.count_in(part.num_rows)
            table, empty = encode_documents(part, split, encoder, eos)
            ctx.keep(table)
            if empty.size:
                ctx.drop(EMPTY, part.take(pa.array(empty)), signal="0 tokens")
            tokens = pc.sum(pc.list_value_length(table.column("tokens"))).as_py() or 0
            ctx.add_stats({"tokens": {split: tokens}, "documents": {split: table.num_rows},
                           "encoder": {encoder.name: part.num_rows}})


def finalize(cfg: KilnConfig, stage_dir: Path, results: list[UnitResult], details: dict,
             log: logging.Logger) -> dict[str, list[ShardInfo]]:
    """Pack each split into shuffled uint16 streams with their indexes (one unless the split holds more than
    tokenize.stream_max_documents documents), then write meta.json."""
    tcfg = cfg.tokenize
    tokenizer_path = stage_dir / TOKENIZER_NAME
    tokenizer = load_tokenizer(tokenizer_path)
    eos, pad = special_ids(tokenizer)
    outputs: dict[str, list[ShardInfo]] = {}
    splits = {}
    for split in SPLITS:
        start = time.perf_counter()
        shards = [r.shard for r in results if r.spec["split"] == split]
        outputs[split], tally = pack_split(stage_dir, split, shards, tcfg.seed, tcfg.stream_max_documents)
        fault_point("tokenize.pack")
        _check_window(split, tally, tcfg.seq_len)
        files = {} if "streams" in tally else {"bin": f"{split}.bin", "idx": f"{split}.idx"}
        splits[split] = {**files, **tally}
        log.info("tokenize: packed %s: %d documents, %d tokens in %.1f s", split, tally["documents"],
                 tally["tokens"], time.perf_counter() - start)
    encoder = json.loads((stage_dir / WORK_DIR / ENCODER_NAME).read_text())["encoder"]
    meta = {
        "format": META_FORMAT,
        "dtype": TOKEN_DTYPE,
        "vocab_size": largest_id(tokenizer) + 1,
        "eos_id": eos,
        "pad_id": pad,
        "seq_len": tcfg.seq_len,
        "seed": tcfg.seed,
        "tokenizer": {"file": TOKENIZER_NAME, "sha256": file_sha256(tokenizer_path), "encoder": encoder},
        "splits": splits,
        "decontamination": _decontamination(stage_dir.parent),
    }
    atomic_write_json(stage_dir / META_NAME, meta)
    outputs["meta"] = [_info(stage_dir, META_NAME, 1)]
    outputs["tokenizer"] = [_info(stage_dir, TOKENIZER_NAME, meta["vocab_size"])]
    return outputs


def _decontamination(data_dir: Path) -> dict | None:
    """The evaluation files the run's text was decontaminated against (each with its sha256) and how; None when the
    decontaminating stage removed no evaluation set (``python -m stages.eval`` then warns on every benchmark)."""
    path = data_dir / DECONTAMINATING_STAGE / DECONTAMINATION_REPORT
    if not path.is_file():
        return None
    summary = json.loads(path.read_text(encoding="utf-8"))
    return {"mode": summary["mode"], "ngram": summary["ngram"],
            "files": [{"set": f["set_name"], "path": f["path"], "sha256": f["sha256"]} for f in summary["files"]]}


def _check_window(split: str, tally: dict, seq_len: int) -> None:
    """Refuse a split the trainer could not read one window of seq_len + 1 tokens from (an empty validation
    split is allowed: mix.validation_fraction 0 asks for none)."""
    if tally["tokens"] < seq_len + 1 and (split == "train" or tally["documents"]):
        raise KilnError(
            f"tokenize: the {split} split holds {tally['tokens']:,} tokens in {tally['documents']:,} documents, fewer "
            f"than one training window of tokenize.seq_len + 1 = {seq_len + 1:,}: give the mix more documents, "
            f"lower tokenize.seq_len{', or raise mix.validation_fraction' if split == 'validation' else ''}")


def _info(stage_dir: Path, name: str, rows: int) -> ShardInfo:
    path = stage_dir / name
    return ShardInfo(path=name, rows=rows, bytes=path.stat().st_size, sha256=file_sha256(path))


STAGE = MapStage(name="tokenize", output_schema=TOKENS_SCHEMA, plan=plan, process=process,
                 prepare=prepare, finalize=finalize)
