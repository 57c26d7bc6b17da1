"""`kiln ablate`: run (or resume) the pipeline, build the evaluation sets, the tokenizer and every arm's stream,
train each arm once per seed, and write DATA_DIR/ablation/summary.json and the report."""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from common.config import BUILT_IN_ARMS, REPO_ROOT, AblationConfig, KilnConfig, fingerprint
from common.errors import KilnError
from common.files import atomic_write_json
from common.hashing import unit_interval
from common.manifest import manifest_sha256
from kiln import pipeline
from kiln.ablation.arms import TRAIN_SPLIT, Arm, ArmSource, build_arm
from kiln.ablation.documents import document_index, read_texts
from kiln.ablation.evalsets import (
    HELDOUT,
    VALIDATION,
    EvalMatcher,
    EvalSet,
    pipeline_heldout,
    user_heldout,
    validation_split,
)
from kiln.ablation.results import ABLATION_DIR, SUMMARY_FILE, format_table, summarize
from kiln.ablation.runs import RunPlan, run_all
from kiln.ablation.streams import SharedTokenizer, predicted_bytes, write_split, write_tokenizer
from kiln.report import write_report
from stages.tokenize.bpe import train_tokenizer

PLAN_FILE = "plan.json"
TOKENIZER_FILE = "tokenizer.json"
DEFAULT_TRAIN_PYTHON = REPO_ROOT / ".venv-train" / "bin" / "python"

DESCRIPTION = """Train the same small model on the output of successive stages of one pipeline run and report
held-out bits per byte: does this configuration of filters make the model better, and which stage buys how much?

Runs (or resumes) the pipeline as `kiln run` does, on --input or the demo corpus, then under DATA_DIR/ablation:
  1. evaluation sets: the clean held-out set (ablation.heldout_documents documents the pipeline keeps, or
     ablation.heldout_path) and the mix's validation split, removed from every arm with their copies and
     near-duplicates (the dedup stage's MinHash settings, on raw and cleaned text);
  2. one byte-level BPE tokenizer (ablation.vocab_size) trained on the dedup stage's output without them;
  3. the arms: raw (ingest), clean, dedup, full (mix's training split, repeats included) and
     ablation.extra_arms, each sampled (seeded) to the same token budget, ablation.tokens_per_run;
  4. one run per arm and seed (ablation.seeds) of ablation.train_config in the trainer's environment: the
     same model, steps, schedule and seeds everywhere; held-out loss logged ablation.eval_points times;
  5. summary.json (bits per byte and loss per token per arm, mean and 95 % interval over the seeds, the
     paired delta against raw, which intervals overlap) and the report's ablation section (DATA_DIR/report).
A killed ablation resumes: finished arms and runs are reused, an unfinished run resumes from its last
checkpoint. --force rebuilds the ablation (and reruns the pipeline)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln ablate`: those of `kiln run`, and the trainer's Python."""
    pipeline.add_arguments(parser)
    parser.description = DESCRIPTION
    parser.add_argument("--train-python", type=Path, default=DEFAULT_TRAIN_PYTHON, metavar="PYTHON",
                        help="Python of the trainer's environment, with MindSpore (default .venv-train/bin/python, "
                             "which `make train-venv` creates)")


def run(args: argparse.Namespace) -> int:
    """The pipeline, then the ablation under the same lock."""
    if not Path(args.train_python).is_file():
        raise KilnError(f"{args.train_python}: no trainer environment; create it with `make train-venv` (or pass "
                        "--train-python)")
    return pipeline.run(args, then=lambda cfg, data_dir, reload: ablate(cfg, data_dir, reload, args))


def say(line: str) -> None:
    print(f"ablation: {line}", file=sys.stderr, flush=True)


def _trainer_settings(path: Path) -> dict:
    try:
        train = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("train") or {}
    except (OSError, yaml.YAMLError) as err:
        raise KilnError(f"ablation.train_config: cannot read {path}: {err}") from None
    missing = [k for k in ("global_batch", "seq_len") if not isinstance(train.get(k), int)]
    if missing:
        raise KilnError(f"{path}: the ablation needs train.{' and train.'.join(missing)} set to an integer")
    return {"global_batch": train["global_batch"], "seq_len": train["seq_len"], "threads": train.get("threads", 2)}


def _sources(cfg: KilnConfig, data_dir: Path, out: Path, reload, args: argparse.Namespace) -> list[ArmSource]:
    """Every arm's documents: built-in arms read this run's stages; an extra arm reruns the pipeline under
    ablation/pipelines/<name> with its overrides, up to its stage."""
    sources = [ArmSource(name, data_dir / stage, "train" if stage == "mix" else "all")
               for name, stage in BUILT_IN_ARMS.items() if name in cfg.ablation.arms]
    for name, extra in cfg.ablation.extra_arms.items():
        arm_dir = out / "pipelines" / name
        say(f"arm {name}: the pipeline with {' '.join(extra.set) or 'no override'}, up to {extra.stage}")
        pipeline.run_stages(reload(list(extra.set)), arm_dir, args.force, args.verbose, last=extra.stage)
        sources.append(ArmSource(name, arm_dir / extra.stage, "train" if extra.stage == "mix" else "all"))
    return sources


def _plan_key(ab: AblationConfig, sources: list[ArmSource], data_dir: Path, train_config: Path) -> str:
    """What the built files depend on: the ablation's settings (not jobs), the trainer YAML, the stages' outputs."""
    settings = ab.model_dump(exclude={"jobs"})
    stages = {s.name: manifest_sha256(s.stage_dir) for s in sources}
    for stage in ("ingest", "clean", "dedup", "mix"):
        stages[stage] = manifest_sha256(data_dir / stage)
    return fingerprint({"settings": settings, "stages": stages, "train_config": train_config.read_text()})


def _open_plan(out: Path, key: str, force: bool) -> None:
    path = out / PLAN_FILE
    if force and out.exists():
        for child in out.iterdir():
            if child.name != "pipelines":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    elif path.is_file() and json.loads(path.read_text())["key"] != key:
        raise KilnError(f"{out} holds an ablation of other settings or of another pipeline output: add --force to "
                        "rebuild it, or use another --data-dir")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"key": key})


def _evaluation_sets(cfg: KilnConfig, data_dir: Path) -> list[EvalSet]:
    ab = cfg.ablation
    validation = validation_split(data_dir / "mix")
    heldout = user_heldout(Path(ab.heldout_path)) if ab.heldout_path else \
        pipeline_heldout(data_dir / "dedup", validation.doc_ids, ab.heldout_documents, ab.seed)
    return [heldout, validation] if validation.texts else [heldout]


def _excluded_ids(sets: list[EvalSet], cfg: KilnConfig, stage_dirs: list[Path], out: Path) -> np.ndarray:
    """Ids of every document of ``stage_dirs`` that is, copies or nearly copies an evaluation document."""
    path = out / "eval" / "excluded_ids.npy"
    if path.is_file():
        return np.load(path)
    matcher = EvalMatcher(sets, cfg.dedup)
    ids = np.unique(np.concatenate([matcher.ids, *(matcher.matching_ids(d) for d in stage_dirs)]))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, ids)
    return ids


def _tokenizer(cfg: KilnConfig, data_dir: Path, excluded: np.ndarray, out: Path) -> Path:
    """The shared tokenizer, trained once on the dedup stage's output without the evaluation documents."""
    path = out / TOKENIZER_FILE
    if path.is_file():
        return path
    ab = cfg.ablation
    index = document_index(data_dir / "dedup")
    usable = ~np.isin(index.doc_ids, excluded)
    ids, sizes = index.doc_ids[usable], index.sizes[usable]
    order = np.argsort(unit_interval(ids, ab.seed), kind="stable")
    chosen = ids[order][np.cumsum(sizes[order]) - sizes[order] < ab.tokenizer_sample_bytes]
    texts = read_texts(data_dir / "dedup", chosen)
    start = time.perf_counter()
    tokenizer = train_tokenizer((texts[int(i)] for i in chosen), ab.vocab_size)
    write_tokenizer(path, tokenizer)
    say(f"tokenizer: {ab.vocab_size:,} ids trained on {len(chosen):,} documents of dedup's output in "
        f"{time.perf_counter() - start:.1f} s")
    return path


def _write_eval_streams(sets: list[EvalSet], shared: SharedTokenizer, seq_len: int, out: Path) -> dict[str, dict]:
    info = {}
    for eval_set in sets:
        tokens, lengths = shared.encode(eval_set.texts)
        write_split(out / "eval" / eval_set.name, eval_set.name, tokens, lengths, shared, seq_len)
        predicted, text_bytes = predicted_bytes(tokens, shared.byte_lengths, seq_len)
        if predicted == 0:
            raise KilnError(f"the {eval_set.name} set holds {tokens.size:,} tokens, less than one window of "
                            f"{seq_len + 1}: give it more documents (ablation.heldout_documents)")
        info[eval_set.name] = {"origin": eval_set.origin, "documents": len(eval_set.texts), "tokens": predicted,
                               "bytes": text_bytes, "windows": predicted // seq_len}
    return info


def _mc_files(path: str | None) -> tuple[Path, ...]:
    if path is None:
        return ()
    root = Path(path)
    files = tuple(sorted(root.glob("*.csv"))) if root.is_dir() else (root,)
    if not files or not all(f.is_file() for f in files):
        raise KilnError(f"ablation.mc_path: {root} is neither a CSV file nor a folder holding CSV files")
    return files


def ablate(cfg: KilnConfig, data_dir: Path, reload, args: argparse.Namespace) -> None:
    """Build the evaluation sets, the tokenizer and the arms, train every run, write summary.json and the report."""
    ab = cfg.ablation
    out = data_dir / ABLATION_DIR
    train_config = (REPO_ROOT / ab.train_config).resolve()
    trainer = _trainer_settings(train_config)
    sources = _sources(cfg, data_dir, out, reload, args)
    _open_plan(out, _plan_key(ab, sources, data_dir, train_config), args.force)

    sets = _evaluation_sets(cfg, data_dir)
    say("evaluation sets: " + "; ".join(f"{s.name}: {s.origin}" for s in sets))
    scanned = sorted({data_dir / "ingest", data_dir / "clean", *(s.stage_dir for s in sources)})
    excluded = _excluded_ids(sets, cfg, scanned, out)
    say(f"{excluded.size:,} documents are, copy or nearly copy an evaluation document: no arm trains on them")
    shared = SharedTokenizer.load(_tokenizer(cfg, data_dir, excluded, out), sets[0].texts[:200])
    seq_len, batch = trainer["seq_len"], trainer["global_batch"]
    eval_sets = _write_eval_streams(sets, shared, seq_len, out)

    steps = math.ceil(ab.tokens_per_run / (batch * seq_len))
    budget = steps * batch * seq_len
    arms: dict[str, Arm] = {}
    for source in sources:
        arms[source.name] = build_arm(source, shared, excluded, budget, seq_len, ab.seed, out / "arms" / source.name)
        arm = arms[source.name]
        say(f"arm {arm.name}: {arm.tokens:,} tokens from {arm.documents:,} of {arm.source_documents:,} documents of "
            f"{arm.stage} ({arm.removed_as_evaluation:,} removed as evaluation text)")

    eval_every = max(1, steps // ab.eval_points)
    threads = max(1, trainer["threads"] // ab.jobs)
    common = [f"train.steps={steps}", f"train.eval_every={eval_every}", f"train.checkpoint_every={eval_every}",
              f"train.eval_batches={math.ceil(eval_sets[HELDOUT]['windows'] / batch)}", f"train.threads={threads}"]
    mc_files = _mc_files(ab.mc_path)
    plans = [RunPlan(arm=name, seed=seed, run_dir=out / "runs" / f"{name}-seed{seed}",
                     train_bin=out / "arms" / name / f"{TRAIN_SPLIT}.bin",
                     heldout_bin=out / "eval" / HELDOUT / f"{HELDOUT}.bin",
                     validation_bin=out / "eval" / VALIDATION / f"{VALIDATION}.bin" if VALIDATION in eval_sets else None,
                     mc_files=mc_files, overrides=(*common, f"train.seed={seed}"), threads=threads)
             for name in arms for seed in ab.seeds]
    say(f"{len(plans)} runs of {steps} steps ({budget:,} tokens each), {ab.jobs} at a time")
    results = run_all(plans, Path(args.train_python), train_config, ab.jobs, say)

    setup = {"steps": steps, "global_batch": batch, "seq_len": seq_len, "tokens_per_run": budget,
             "seeds": list(ab.seeds), "train_config": str(train_config), "overrides": common,
             "tokenizer": {"file": str(shared.path), "vocab_size": shared.vocab_size,
                           "sha256": next(iter(arms.values())).tokenizer_sha256}}
    summary = summarize(arms, results, eval_sets, setup)
    atomic_write_json(out / SUMMARY_FILE, summary)
    print(format_table(summary))
    print(f"summary: {out / SUMMARY_FILE}\nreport:  {write_report(data_dir)}")
