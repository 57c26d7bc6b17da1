"""`kiln ablate` (make ablation): statistics, byte accounting, evaluation matching, and a reduced ablation end to end."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from common.config import load_config
from common.eval_sets import EvalItem
from common.text import dedup_tokens
from common.tokens import TokenDataset
from demo.content_docs import clean_document
from kiln.ablation.evalsets import COPIED_WINDOW_SHARE, EvalMatcher, benchmark_questions
from kiln.ablation.results import bits_per_byte, interval, overlap, summarize
from kiln.ablation.streams import SharedTokenizer, predicted_bytes, token_byte_lengths, write_tokenizer
from stages.dedup.decontaminate import ContaminationIndex
from stages.tokenize.bpe import train_tokenizer
from tests.conftest import REPO, cli
from tests.test_pipeline_demo import shared_demo_run

TRAIN_PYTHON = REPO / ".venv-train" / "bin" / "python"
ARMS = ("raw", "full")  # the ingest source and the mix's training split with its repeats
MIXED = ["The committee met on Tuesday to discuss the budget for 2025.", "北京是中国的首都，也是政治和文化中心。",
         "def f(x):\n    return x ** 2  # 平方", "Ünïcödé café naïve — “quotes” and emoji 🎉"]


@pytest.fixture(scope="module")
def shared_tokenizer(tmp_path_factory) -> SharedTokenizer:
    texts = [clean_document(random.Random(i), "encyclopedia", lang, "wiki") for i in range(60) for lang in ("en", "zh")]
    texts += MIXED
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    write_tokenizer(path, train_tokenizer(texts, 600))
    return SharedTokenizer.load(path, texts)


def test_interval_is_the_student_t_interval_of_the_mean():
    mean, half = interval([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    assert math.isnan(interval([5.0])[1])


def test_bits_per_byte_divides_nats_by_ln2_and_bytes():
    assert bits_per_byte(math.log(2), 100, 100) == pytest.approx(1.0)
    assert bits_per_byte(math.log(2), 100, 400) == pytest.approx(0.25)  # 4 bytes per token


def test_every_token_stands_for_its_utf8_bytes(shared_tokenizer):
    tokens, lengths = shared_tokenizer.encode(MIXED)
    assert lengths.sum() == tokens.size and (tokens[np.cumsum(lengths) - 1] == shared_tokenizer.eos).all()
    expected = sum(len(t.encode("utf-8")) for t in MIXED) + len(MIXED)  # each EOS counts as one byte
    assert shared_tokenizer.byte_lengths[tokens].sum() == expected
    assert token_byte_lengths(shared_tokenizer.tokenizer)[shared_tokenizer.eos] == 1


def test_predicted_bytes_are_those_of_the_windows_targets(shared_tokenizer):
    tokens, _ = shared_tokenizer.encode(MIXED * 3)
    seq_len = 16
    windows = (tokens.size - 1) // seq_len
    predicted, text_bytes = predicted_bytes(tokens, shared_tokenizer.byte_lengths, seq_len)
    assert predicted == windows * seq_len
    assert text_bytes == shared_tokenizer.byte_lengths[tokens[1:predicted + 1]].sum()


def test_the_matcher_finds_ids_copies_and_near_duplicates_not_other_text():
    rng = random.Random(7)
    held = [clean_document(rng, "news", "en", "news") for _ in range(3)] + [clean_document(rng, "news", "zh", "news")]
    other = clean_document(rng, "news", "en", "news")
    words = held[0].split()
    near = " ".join(words[:-3] + ["changed", "three", "words"])
    cfg = load_config()
    matcher = EvalMatcher(held, np.array([10, 11, 12, 13]), cfg.dedup, cfg.decontaminate)
    embedded = f"{other}\n\n{held[2]}\n\n{clean_document(rng, 'news', 'en', 'news')}"  # whole, inside a longer page
    sentence = " ".join(held[2].split()[:20])
    quoting = f"{other} {sentence}"  # one shared sentence: ordinary overlap, not a copy
    texts = [held[1].upper() + "  ", near, held[3], other, "unrelated", embedded, quoting]
    hits = matcher.matches(np.array([1, 2, 3, 4, 12, 5, 6]), texts)
    # case and spacing, near copy, zh copy, other, same id, embedded copy, a quoted sentence
    assert hits.tolist() == [True, True, True, False, True, True, False]


def test_the_matcher_finds_pages_copying_a_benchmark_question_as_make_data_does():
    rng = random.Random(8)
    samples = tuple(sorted((REPO / "stages" / "eval" / "samples").glob("*.csv")))
    questions = benchmark_questions(samples, load_config().decontaminate)
    held = [clean_document(rng, "news", "en", "news")]
    page = clean_document(rng, "news", "zh", "news")
    copied = page + "\n\n3. 在TCP/IP模型中，HTTP协议\n属于哪一层？\nA. 应用层\nB. 传输层"
    cfg = load_config()
    matcher = EvalMatcher(held, np.array([10]), cfg.dedup, cfg.decontaminate, questions)
    assert matcher.matches(np.array([1, 2]), [copied, page]).tolist() == [True, False]
    assert not EvalMatcher(held, np.array([10]), cfg.dedup, cfg.decontaminate).matches(np.array([1]), [copied]).any()


def _run(arm: str, seed: int, loss: float) -> dict:
    return {"arm": arm, "seed": seed, "heldout_loss": loss, "validation_loss": None, "multiple_choice": None,
            "curve": [{"step": 10, "loss": loss, "tokens": 100}]}


def test_summary_pairs_seeds_against_raw_and_names_overlapping_intervals():
    from kiln.ablation.arms import Arm

    arms = {name: Arm(name, name, 5, 1000, 4000, 9, 1, "sha", "sha", 1000) for name in ("raw", "clean", "dedup")}
    losses = {"raw": (3.0, 3.1, 3.2), "clean": (2.5, 2.6, 2.7), "dedup": (2.52, 2.61, 2.69)}
    results = [_run(arm, seed, loss) for arm, values in losses.items() for seed, loss in enumerate(values)]
    summary = summarize(arms, results, {"heldout": {"tokens": 100, "bytes": 100 / math.log(2)}}, {})
    rows = {row["name"]: row for row in summary["arms"]}
    assert rows["clean"]["heldout"]["mean"] == pytest.approx(2.6)
    assert rows["clean"]["delta_vs_raw"]["mean"] == pytest.approx(-0.5)
    assert rows["clean"]["delta_vs_raw"]["ci95"] == pytest.approx(0.0, abs=1e-9)  # the same gap at every seed
    assert not rows["clean"]["delta_vs_raw"]["overlaps_raw"]
    assert overlap(rows["clean"]["heldout"], rows["dedup"]["heldout"])
    assert [n.split(":")[0] for n in summary["notes"]] == ["clean and dedup"]
    assert "do not resolve" in summary["notes"][0]


TINY_TRAINER = """
model: {d_model: 32, n_layers: 1, n_heads: 2, max_seq_len: 64}
optim: {lr: 3.0e-3, min_lr: 3.0e-4, warmup_ratio: 0.1}
train: {global_batch: 4, seq_len: 64, threads: 2, log_every: 2}
"""


@pytest.mark.slow
def test_a_reduced_ablation_trains_every_arm_alike_on_data_disjoint_from_the_evaluation_sets(tmp_path_factory):
    if not TRAIN_PYTHON.is_file():
        pytest.skip("the trainer's environment (.venv-train) is not built: make train-venv")
    shared, _ = shared_demo_run(tmp_path_factory)
    tmp = tmp_path_factory.mktemp("ablation")
    data = tmp / "data"
    shutil.copytree(shared, data)
    (tmp / "tiny.yaml").write_text(TINY_TRAINER)
    # the shared run's own input and settings, so that the copy's stages resume instead of running again
    command = ["-m", "kiln", "ablate", "--input", str(shared / "demo" / "corpus"), "--config", "configs/demo.yaml",
               "--data-dir", str(data),
               "--set", "ray.num_cpus=2", "--set", f"ablation.train_config={tmp / 'tiny.yaml'}",
               "--set", "ablation.tokens_per_run=1536", "--set", "ablation.heldout_documents=30",
               "--set", "ablation.eval_points=3", "--set", "ablation.jobs=2", "--set", "ablation.arms=[raw,full]",
               "--set", f"ablation.mc_path={REPO / 'stages' / 'eval' / 'samples'}"]
    first = cli(*command, timeout=600)
    root = data / "ablation"
    summary = json.loads((root / "summary.json").read_text())
    assert [row["name"] for row in summary["arms"]] == list(ARMS)
    assert "held-out bits/byte" in first.stdout and (data / "report" / "ablation-curves.png").is_file()

    # the same tokenizer, steps, tokens and seeds in every arm
    tokenizer_sha = {json.loads((root / "arms" / a / "meta.json").read_text())["tokenizer"]["sha256"]
                     for a in ARMS}
    assert len(tokenizer_sha) == 1
    configs = {p.parent.name: json.loads(p.read_text())["config"] for p in sorted(root.glob("runs/*/run.json"))}
    assert len(configs) == 6  # what each trainer ran: one model, optimizer, schedule and step count
    seeds = {name: configs[name]["train"].pop("seed") for name in configs}
    assert all(config == configs["raw-seed0"] for config in configs.values())
    assert configs["raw-seed0"]["train"]["steps"] == 6 and configs["raw-seed0"]["model"]["vocab_size"] == 8192
    assert {arm: sorted(seeds[f"{arm}-seed{s}"] for s in (0, 1, 2)) for arm in ARMS} == dict.fromkeys(ARMS, [0, 1, 2])
    assert all(row["tokens"] >= 1537 for row in summary["arms"])
    assert all(0 <= row["multiple_choice_accuracy"]["mean"] <= 1 for row in summary["arms"])
    assert all(row["validation"]["mean"] > 0 for row in summary["arms"])

    # no arm holds an evaluation document or a near copy of one, though the raw corpus did
    heldout = _decoded(root / "eval" / "heldout" / "heldout.bin", root / "tokenizer.json")
    validation = _decoded(root / "eval" / "validation" / "validation.bin", root / "tokenizer.json")
    evaluation = [set(_shingles(t)) for t in heldout + validation]
    cfg = load_config().dedup
    for arm in ARMS:
        for text in _decoded(root / "arms" / arm / "train.bin", root / "tokenizer.json"):
            shingles = set(_shingles(text))
            assert not any(len(shingles & e) / max(1, len(shingles | e)) >= cfg.threshold for e in evaluation), arm
    raw = next(row for row in summary["arms"] if row["name"] == "raw")
    assert raw["removed_as_evaluation"] > len(heldout) + len(validation) - 5  # copies and near copies went too
    # nor half of an evaluation document's 13-token windows, nor a page copying a question of the benchmark files
    # the arms are scored on (the demo plants such pages)
    decontaminate = load_config().decontaminate
    copies = ContaminationIndex.build([EvalItem("heldout", "", row, text)
                                       for row, text in enumerate(heldout + validation)], [], decontaminate,
                                      min_window_share=COPIED_WINDOW_SHARE)
    questions = benchmark_questions(tuple(sorted((REPO / "stages" / "eval" / "samples").glob("*.csv"))),
                                    decontaminate)
    for arm in ARMS:
        texts = _decoded(root / "arms" / arm / "train.bin", root / "tokenizer.json")
        assert not any(copies.scan(texts)) and not any(questions.scan(texts)), arm

    # a rerun trains nothing again
    again = cli(*command, timeout=600)
    assert "6 of 6 runs already done" in again.stderr and "training " not in again.stderr
    assert "(unchanged)" in again.stdout
    status = cli("-m", "kiln", "status", str(data)).stdout
    assert status.count("3 of 3") == 2 and "summary:" in status


def _decoded(bin_path: Path, tokenizer_path: Path) -> list[str]:
    """The documents of a one-split token folder, decoded."""
    from common.tokenizer import load_tokenizer

    tokenizer = load_tokenizer(tokenizer_path)
    dataset = TokenDataset(bin_path)
    tokens, offsets = dataset.tokens, dataset._streams[0][1]
    return [tokenizer.decode(tokens[a:b - 1].tolist()) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


def _shingles(text: str, k: int = 5) -> list[tuple[str, ...]]:
    tokens = dedup_tokens(text)
    return [tuple(tokens[i:i + k]) for i in range(len(tokens) - k + 1)]


def test_an_ablation_of_other_inputs_is_refused_and_force_clears_it_but_not_the_extra_pipelines(tmp_path):
    from common.errors import KilnError
    from kiln.ablation.command import _open_plan

    settings = load_config().ablation
    out = tmp_path / "ablation"
    _open_plan(out, "first", settings, force=False)
    (out / "arms" / "raw").mkdir(parents=True)
    (out / "pipelines" / "mine").mkdir(parents=True)
    _open_plan(out, "first", settings, force=False)  # the same inputs resume
    assert (out / "arms" / "raw").is_dir()
    with pytest.raises(KilnError, match="add --force"):
        _open_plan(out, "second", settings, force=False)
    _open_plan(out, "second", settings, force=True)
    assert not (out / "arms").exists() and (out / "pipelines" / "mine").is_dir()
    assert json.loads((out / "plan.json").read_text())["seeds"] == [0, 1, 2]


def test_ablate_without_the_trainer_environment_says_how_to_make_it(tmp_path):
    result = cli("-m", "kiln", "ablate", "--demo", "--data-dir", str(tmp_path), "--train-python",
                 str(tmp_path / "missing"), check=False)
    assert result.returncode == 2 and "make train-venv" in result.stderr and "Traceback" not in result.stderr


def test_a_bad_trainer_config_or_held_out_file_stops_the_ablation_before_the_pipeline_runs(tmp_path):
    (tmp_path / "bad.yaml").write_text("model: {d_model: -1}\n")
    bad_config = cli("-m", "kiln", "ablate", "--demo", "--data-dir", str(tmp_path / "data"), "--set",
                     f"ablation.train_config={tmp_path / 'bad.yaml'}", check=False)
    assert bad_config.returncode == 2 and "model.d_model" in bad_config.stderr and "Traceback" not in bad_config.stderr
    no_file = cli("-m", "kiln", "ablate", "--demo", "--data-dir", str(tmp_path / "data"), "--set",
                  f"ablation.heldout_path={tmp_path / 'missing.jsonl'}", check=False)
    assert no_file.returncode == 2 and "is not a file" in no_file.stderr
    assert not (tmp_path / "data").exists()  # nothing ran


@pytest.mark.parametrize(("override", "message"), [
    ("ablation.seeds=[0,0,1]", "each once"), ("ablation.seeds=[0,1]", "at least 3"),
    ("ablation.arms=[clean,dedup]", "must include raw"), ("ablation.arms=[raw,mine]", "not built in"),
    ('ablation.extra_arms={"a/b": {"stage": "clean"}}', "letters, digits"),
])
def test_ablation_settings_that_cannot_give_an_answer_are_refused(override, message):
    from common.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_config([], [override])


@pytest.mark.slow
def test_an_extra_arm_reruns_the_pipeline_with_its_overrides_up_to_its_stage(tmp_path_factory, ray_local):
    from argparse import Namespace

    from common.config_loader import CONFIG_DIR
    from kiln.ablation.command import _sources

    shared, _ = shared_demo_run(tmp_path_factory)
    data = tmp_path_factory.mktemp("extra-arm") / "data"
    configs = [CONFIG_DIR / "demo.yaml"]
    overrides = [f"ingest.input={json.dumps([str(shared / 'demo' / 'corpus')])}", "ray.num_cpus=2",
                 'ablation.extra_arms={"no_line_filters": {"stage": "clean", '
                 '"set": ["clean.line_filters.enabled=false"]}}']
    cfg = load_config(configs, overrides)
    sources = _sources(cfg, data, data / "ablation", lambda extra: load_config(configs, [*overrides, *extra]),
                       Namespace(force=False, verbose=False))
    assert [(s.name, s.stage_dir.name, s.split) for s in sources] == [
        ("raw", "ingest", "all"), ("clean", "clean", "all"), ("dedup", "dedup", "all"), ("full", "mix", "train"),
        ("no_line_filters", "clean", "all")]
    pipeline = data / "ablation" / "pipelines" / "no_line_filters"
    manifest = json.loads((pipeline / "clean" / "_manifest.json").read_text())
    assert manifest["config"]["line_filters"]["enabled"] is False
    removed = json.loads((shared / "clean" / "_manifest.json").read_text())["outputs"]["_removed_lines"]
    assert sum(f["rows"] for f in removed) > 0  # the default run removes lines; this one, on the same input, none
    assert sum(f["rows"] for f in manifest["outputs"].get("_removed_lines", [])) == 0
    assert not (pipeline / "dedup").exists()  # the extra arm's pipeline stops at its stage

    # its documents are kept out of training by text: its ids need not mean this run's documents
    from kiln.ablation.command import _exclusions
    from kiln.ablation.evalsets import pipeline_heldout

    held = pipeline_heldout(shared / "dedup", np.zeros(0, np.int64), 20, seed=3)
    excluded = _exclusions(cfg, shared, [held], sources, data / "ablation", ())
    assert set(held.doc_ids.tolist()) <= set(excluded["raw"].tolist())
    assert excluded["no_line_filters"].size >= 20  # each held-out document is in its clean output too


def test_a_run_is_reused_only_with_the_settings_it_was_trained_with(tmp_path):
    from dataclasses import replace

    from common.files import atomic_write_json
    from kiln.ablation.layout import RESULT_FILE
    from kiln.ablation.runs import RunPlan, read_result

    plan = RunPlan(arm="raw", seed=0, run_dir=tmp_path, train_bin=tmp_path / "train.bin",
                   heldout_bin=tmp_path / "heldout.bin", heldout_tokens=640, validation_bin=None, mc_files=(),
                   overrides=("train.steps=6", "train.seed=0"), config_sha256="a", threads=1)
    assert read_result(plan) is None  # a run that never finished (or was killed) is trained, or resumed
    atomic_write_json(tmp_path / RESULT_FILE, {"identity": plan.identity(), "heldout_loss": 5.0})
    assert read_result(plan)["heldout_loss"] == 5.0
    assert read_result(replace(plan, threads=2)) is not None  # threads do not change what is trained
    assert read_result(replace(plan, overrides=("train.steps=7", "train.seed=0"))) is None
    assert read_result(replace(plan, config_sha256="b")) is None
    assert read_result(replace(plan, validation_bin=tmp_path / "validation.bin")) is None
