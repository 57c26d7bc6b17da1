"""`kiln ablate`: run (or resume) the pipeline, build the evaluation sets, the tokenizer and every arm's stream,
train each arm once per seed, and write DATA_DIR/ablation/summary.json and the report."""

from __future__ import annotations

import argparse
import io
import json
import math
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.config import KilnConfig, load_config
from common.config_loader import REPO_ROOT, fingerprint
from common.errors import KilnError
from common.files import atomic_write_bytes, atomic_write_json, file_sha256
from common.hashing import unit_interval
from common.manifest import manifest_sha256
from kiln import pipeline
from kiln.ablation.arms import TRAIN_SPLIT, Arm, ArmSource, build_arm
from kiln.ablation.config import BUILT_IN_ARMS, AblationConfig
from kiln.ablation.documents import document_index, read_texts
from kiln.ablation.evalsets import (
    HELDOUT,
    VALIDATION,
    EvalMatcher,
    EvalSet,
    benchmark_questions,
    pipeline_heldout,
    user_heldout,
    validation_split,
)
from kiln.ablation.layout import ABLATION_DIR, SUMMARY_FILE
from kiln.ablation.results import BASELINE, format_table, summarize
from kiln.ablation.runs import RunPlan, run_all
from kiln.ablation.streams import SharedTokenizer, predicted_bytes, write_split, write_tokenizer
from kiln.report import REPORT_DIR, write_report
from stages.tokenize.bpe import train_tokenizer
from stages.train.config import TrainerConfig, load_trainer_config

PLAN_FILE = "plan.json"
TOKENIZER_FILE = "tokenizer.json"
EVAL_DIR, ARMS_DIR, RUNS_DIR, PIPELINES_DIR = "eval", "arms", "runs", "pipelines"

Reload = Callable[[list[str]], KilnConfig]


def run(args: argparse.Namespace) -> int:
    """Check the ablation's inputs, run the pipeline, then the ablation under the same lock."""
    if not Path(args.train_python).is_file():
        raise KilnError(f"{args.train_python}: no trainer environment; create it with `make train-venv` (or pass "
                        "--train-python)")
    check_inputs(load_config(list(args.config), list(args.overrides)).ablation)  # before the pipeline runs
    return pipeline.run(args, then=lambda cfg, data_dir, reload: ablate(cfg, data_dir, reload, args))


def say(line: str) -> None:
    """A progress line on stderr."""
    print(f"ablation: {line}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Inputs:
    """The files an ablation reads besides the pipeline's output, checked before anything runs."""

    train_config: Path
    trainer: TrainerConfig
    heldout: Path | None
    mc_files: tuple[Path, ...]

    @property
    def seq_len(self) -> int:
        """Tokens per training window (and per evaluation window)."""
        return self.trainer.train.seq_len or self.trainer.model.max_seq_len


def check_inputs(ab: AblationConfig) -> Inputs:
    """The trainer YAML (validated as the trainer validates it), the held-out file and the multiple-choice files;
    relative paths are read from the working directory, then (for the trainer YAML) from the repository."""
    train_config = Path(ab.train_config)
    if not train_config.is_absolute() and not train_config.is_file():
        train_config = REPO_ROOT / train_config
    trainer = load_trainer_config(train_config)
    heldout = Path(ab.heldout_path) if ab.heldout_path else None
    if heldout is not None and not heldout.is_file():
        raise KilnError(f"ablation.heldout_path: {heldout} is not a file")
    mc_files: tuple[Path, ...] = ()
    if ab.mc_path is not None:
        root = Path(ab.mc_path)
        mc_files = tuple(sorted(root.glob("*.csv"))) if root.is_dir() else (root,)
        if not mc_files or not all(f.is_file() for f in mc_files):
            raise KilnError(f"ablation.mc_path: {root} is neither a CSV file nor a folder holding CSV files")
    return Inputs(train_config.resolve(), trainer, heldout, tuple(f.resolve() for f in mc_files))


def _sources(cfg: KilnConfig, data_dir: Path, out: Path, reload: Reload, args: argparse.Namespace) -> list[ArmSource]:
    """Every arm's documents: built-in arms read this run's stages; an extra arm reruns the pipeline under
    ablation/pipelines/<name> with its overrides, up to its stage."""
    sources = [ArmSource(name, data_dir / stage, "train" if stage == "mix" else "all")
               for name, stage in BUILT_IN_ARMS.items() if name in cfg.ablation.arms]
    for name, extra in cfg.ablation.extra_arms.items():
        arm_dir = out / PIPELINES_DIR / name
        say(f"arm {name}: the pipeline with {' '.join(extra.set) or 'no override'}, up to {extra.stage}")
        pipeline.run_stages(reload(list(extra.set)), arm_dir, args.force, args.verbose, last=extra.stage)
        sources.append(ArmSource(name, arm_dir / extra.stage, "train" if extra.stage == "mix" else "all"))
    return sources


def _plan_key(cfg: KilnConfig, inputs: Inputs, data_dir: Path) -> str:
    """What the evaluation sets, their exclusions and the tokenizer depend on: the pipeline's outputs, the held-out
    and tokenizer settings, the dedup settings that find near-duplicates, and the window length."""
    ab = cfg.ablation
    return fingerprint({
        "stages": {stage: manifest_sha256(data_dir / stage) for stage in BUILT_IN_ARMS.values()},
        "heldout": [ab.heldout_documents, ab.seed, file_sha256(inputs.heldout) if inputs.heldout else None],
        "tokenizer": [ab.vocab_size, ab.tokenizer_sample_bytes], "dedup": cfg.dedup.model_dump(mode="json"),
        "seq_len": inputs.seq_len, "benchmarks": [file_sha256(f) for f in inputs.mc_files],
        "decontaminate": cfg.decontaminate.model_dump(mode="json"),
    })


def _open_plan(out: Path, key: str, ab: AblationConfig, force: bool) -> None:
    """Start or resume the ablation in ``out``: refuse one built from other inputs unless ``force`` (which
    clears it), and record the arms and seeds for `kiln status`."""
    path = out / PLAN_FILE
    recorded = None
    if path.is_file():
        try:
            recorded = json.loads(path.read_text())["key"]
        except (ValueError, KeyError, TypeError):
            recorded = "unreadable"
    built = out.is_dir() and any(child.name != PIPELINES_DIR for child in out.iterdir())
    if built and recorded != key and not force:
        raise KilnError(f"{out} holds an ablation of other held-out or tokenizer settings or of another pipeline "
                        "output: add --force to rebuild it (or delete that folder), or use another --data-dir")
    if built and (force or recorded != key):
        path.unlink(missing_ok=True)  # first: a clear cut short leaves no plan that vouches for what is left
        for child in out.iterdir():
            if child.name != PIPELINES_DIR:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"key": key, "arms": [*ab.arms, *ab.extra_arms], "seeds": list(ab.seeds)})


def _evaluation_sets(cfg: KilnConfig, data_dir: Path, inputs: Inputs) -> list[EvalSet]:
    ab = cfg.ablation
    validation = validation_split(data_dir / "mix")
    heldout = user_heldout(inputs.heldout) if inputs.heldout else \
        pipeline_heldout(data_dir / "dedup", validation.doc_ids, ab.heldout_documents, ab.seed)
    return [heldout, validation] if validation.texts else [heldout]


def _excluded_ids(matcher: EvalMatcher, stage_dirs: list[Path], by_id: bool, path: Path) -> np.ndarray:
    """Ids of every document of ``stage_dirs`` that is, copies or nearly copies an evaluation document (cached in
    ``path``)."""
    if path.is_file():
        return np.load(path)
    ids = np.unique(np.concatenate([matcher.ids if by_id else np.zeros(0, np.int64),
                                    *(matcher.matching_ids(d, by_id) for d in stage_dirs)]))
    buffer = io.BytesIO()
    np.save(buffer, ids)
    atomic_write_bytes(path, buffer.getvalue())
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
    write_tokenizer(path, train_tokenizer((texts[int(i)] for i in chosen), ab.vocab_size))
    say(f"tokenizer: {ab.vocab_size:,} ids trained on {len(chosen):,} documents of dedup's output in "
        f"{time.perf_counter() - start:.1f} s")
    return path


def _write_eval_streams(sets: list[EvalSet], shared: SharedTokenizer, seq_len: int, out: Path) -> dict[str, dict]:
    """Each evaluation set as a token folder; per set the tokens its windows predict and their UTF-8 bytes. A
    validation split shorter than one window is left out, with a note; a held-out set that short is an error."""
    info = {}
    for eval_set in sets:
        tokens, lengths = shared.encode(eval_set.texts)
        predicted, text_bytes = predicted_bytes(tokens, shared.byte_lengths, seq_len)
        if predicted == 0:
            if eval_set.name == HELDOUT:
                raise KilnError(f"the held-out set holds {tokens.size:,} tokens, less than one window of "
                                f"{seq_len + 1}: give it more documents (ablation.heldout_documents)")
            say(f"the {eval_set.name} set holds {tokens.size:,} tokens, less than one window of {seq_len + 1}: left "
                "out (raise mix.validation_fraction to evaluate on it)")
            continue
        write_split(out / EVAL_DIR / eval_set.name, eval_set.name, tokens, lengths, shared, seq_len)
        info[eval_set.name] = {"origin": eval_set.origin, "documents": len(eval_set.texts), "tokens": predicted,
                               "bytes": text_bytes, "windows": predicted // seq_len}
    return info


def _exclusions(cfg: KilnConfig, data_dir: Path, sets: list[EvalSet], sources: list[ArmSource], out: Path,
                mc_files: tuple[Path, ...]) -> dict[str, np.ndarray]:
    """Per arm, the ids it must not train on. This run's arms: the evaluation documents and every document of
    ingest's or clean's output matching them (by id, copy or near copy), or copying a question of ``mc_files``. An
    extra arm's pipeline: matches of its own outputs by text (its ids may mean other documents)."""
    ids = np.concatenate([s.doc_ids for s in sets])
    raw_forms = read_texts(data_dir / "ingest", ids)
    matcher = EvalMatcher([t for s in sets for t in s.texts] + list(raw_forms.values()), ids, cfg.dedup,
                          cfg.decontaminate, benchmark_questions(mc_files, cfg.decontaminate))
    main = _excluded_ids(matcher, [data_dir / "ingest", data_dir / "clean"], True,
                         out / EVAL_DIR / "excluded_ids.npy")
    say(f"{main.size:,} documents are, copy or nearly copy an evaluation document, or copy a benchmark question: no "
        "arm trains on them")
    excluded = {}
    for source in sources:
        if source.name in BUILT_IN_ARMS:
            excluded[source.name] = main
            continue
        dirs = [d for d in ("ingest", "clean") if (source.stage_dir.parent / d).is_dir()]  # the raw and clean forms
        dirs = sorted({*(source.stage_dir.parent / d for d in dirs), source.stage_dir})
        cache = out / EVAL_DIR / f"excluded_ids-{source.name}-{manifest_sha256(source.stage_dir)[:16]}.npy"
        excluded[source.name] = _excluded_ids(matcher, dirs, False, cache)
    return excluded


def ablate(cfg: KilnConfig, data_dir: Path, reload: Reload, args: argparse.Namespace) -> None:
    """Build the evaluation sets, the tokenizer and the arms, train every run, write summary.json and the report."""
    ab = cfg.ablation
    out = data_dir / ABLATION_DIR
    inputs = check_inputs(ab)
    sources = _sources(cfg, data_dir, out, reload, args)
    _open_plan(out, _plan_key(cfg, inputs, data_dir), ab, args.force)

    sets = _evaluation_sets(cfg, data_dir, inputs)
    say("evaluation sets: " + "; ".join(f"{s.name}: {s.origin}" for s in sets))
    excluded = _exclusions(cfg, data_dir, sets, sources, out, inputs.mc_files)
    shared = SharedTokenizer.load(_tokenizer(cfg, data_dir, excluded[BASELINE], out), sets[0].texts[:200])
    seq_len, batch = inputs.seq_len, inputs.trainer.train.global_batch
    eval_sets = _write_eval_streams(sets, shared, seq_len, out)

    steps = math.ceil(ab.tokens_per_run / (batch * seq_len))
    budget = steps * batch * seq_len
    arms: dict[str, Arm] = {}
    for source in sources:
        arm = build_arm(source, shared, excluded[source.name], budget, seq_len, ab.seed, out / ARMS_DIR / source.name)
        arms[source.name] = arm
        say(f"arm {arm.name}: {arm.tokens:,} tokens from {arm.documents:,} documents of {arm.stage}'s "
            f"{arm.source_documents:,} ({arm.removed_as_evaluation:,} removed as evaluation text)")

    eval_every = max(1, steps // ab.eval_points)
    threads = max(1, inputs.trainer.train.threads // ab.jobs)
    common = (f"train.steps={steps}", f"train.seq_len={seq_len}", f"train.eval_every={eval_every}",
              f"train.checkpoint_every={eval_every}",
              f"train.eval_batches={math.ceil(eval_sets[HELDOUT]['windows'] / batch)}")
    config_sha = file_sha256(inputs.train_config)
    plans = [RunPlan(arm=name, seed=seed, run_dir=out / RUNS_DIR / f"{name}-seed{seed}",
                     train_bin=out / ARMS_DIR / name / f"{TRAIN_SPLIT}.bin",
                     heldout_bin=out / EVAL_DIR / HELDOUT / f"{HELDOUT}.bin",
                     heldout_tokens=eval_sets[HELDOUT]["tokens"],
                     validation_bin=out / EVAL_DIR / VALIDATION / f"{VALIDATION}.bin"
                     if VALIDATION in eval_sets else None,
                     mc_files=inputs.mc_files, overrides=(*common, f"train.seed={seed}"), config_sha256=config_sha,
                     threads=threads)
             for name in arms for seed in ab.seeds]
    say(f"{len(plans)} runs of {steps} steps ({budget:,} tokens each), {ab.jobs} at a time")
    results = run_all(plans, Path(args.train_python), inputs.train_config, ab.jobs, say)

    setup = {"steps": steps, "global_batch": batch, "seq_len": seq_len, "tokens_per_run": budget,
             "seeds": list(ab.seeds), "train_config": str(inputs.train_config), "overrides": list(common),
             "tokenizer": {"file": str(shared.path), "vocab_size": shared.vocab_size,
                           "sha256": file_sha256(shared.path)}}
    summary = summarize(arms, results, eval_sets, setup)
    previous = json.loads((out / SUMMARY_FILE).read_text()) if (out / SUMMARY_FILE).is_file() else None
    atomic_write_json(out / SUMMARY_FILE, summary)
    print(format_table(summary))
    page = data_dir / REPORT_DIR / "index.html"
    if previous == json.loads(json.dumps(summary)) and page.is_file():
        print(f"summary: {out / SUMMARY_FILE} (unchanged)\nreport:  {page}")
    else:
        print(f"summary: {out / SUMMARY_FILE}\nreport:  {write_report(data_dir)}")
