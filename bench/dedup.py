"""Dedup per core: Kiln's MinHash kernel against datasketch, the whole dedup stage, and its global step at 1M and 5M documents.

Run from anywhere with Kiln's environment:
  .venv/bin/python bench/dedup.py [--docs N] [--synthetic-docs N,N] [--partitions P] [--out DIR] [--core N]

1. Builds a data folder with the demo corpus's clean output (``python -m kiln run --demo``) and times,
   each in its own process pinned to one core, Kiln's ``shingle_hashes`` + ``signatures`` and
   datasketch's ``MinHash.update_batch`` on the same clean texts; compares their Jaccard estimates
   on the demo's planted near-duplicate pairs.
2. Times ``python -m stages.dedup --set ray.num_cpus=1 --force`` on that folder under taskset, a
   command that only starts Ray the same way, and the stage's steps in one process without Ray.
   Every timing of parts 1 and 2 is repeated (``--runs``) and the fastest run is reported.
3. For each synthetic corpus size: writes its signature outputs with the real
   ``write_signature_outputs`` (``dedup_synth.py``), runs ``decide_clusters`` task by task in one
   pinned process (time, peak memory, bytes and files read per task), then on Ray with one CPU
   (the driver's own peak), and deletes the corpus.
4. Derives the plan for 1 billion documents. Prints the tables and the goals and writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import measure
import pyarrow as pa
from dedup_synth import EXACT_RATE, NEAR_RATE
from measure import driver_args, driver_parser, log, run_command, run_driver, throughput

from common.config import load_config
from common.manifest import require_manifest
from common.text import dedup_tokens, jaccard, shingles

DEFAULT_DOCS = 10000
DEFAULT_SYNTHETIC_DOCS = "1000000,5000000"
DEFAULT_SHARD_DOCS = 40_000
NUM_PERM = 128
GOAL_RATIO = 10
GOAL_DOCS_PER_S = 5000
DATA_JUICER_GB_PER_CORE_HOUR = 1.4
TARGET_DOCS = 1_000_000_000
TASK_MEMORY_GB = 8
JACCARD_TOLERANCE = 1.5
READ_GOAL_FACTOR = 2
FLAT_BYTES_PER_DOC = 8
CLUSTER_NODES = 64
CORES_PER_NODE = 32


def parse_args() -> argparse.Namespace:
    parser = driver_parser(__doc__, DEFAULT_DOCS)
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each signature side, of the stage, of Ray start-up alone and of the steps "
                             "without Ray; the fastest of each is reported (default 3)")
    parser.add_argument("--synthetic-docs", type=doc_counts, default=DEFAULT_SYNTHETIC_DOCS,
                        help=f"documents of each synthetic corpus, comma-separated (default {DEFAULT_SYNTHETIC_DOCS})")
    parser.add_argument("--shard-docs", type=int, default=DEFAULT_SHARD_DOCS,
                        help=f"documents per synthetic shard (default {DEFAULT_SHARD_DOCS:,}, a 64 MB clean shard of "
                             "1.5 KB documents)")
    parser.add_argument("--partitions", type=int, default=load_config().dedup.partitions,
                        help="partitions P of the synthetic corpora's global step (default: the config's)")
    return driver_args(parser, "dedup.json")


def doc_counts(text: str) -> list[int]:
    """``--synthetic-docs``: comma-separated document counts, in increasing order."""
    counts = sorted(int(part.replace("_", "")) for part in text.split(","))
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: positive document counts, comma-separated")
    return counts


def run_worker(script: str, args: list[str], result: Path, core: int) -> dict:
    """Run one measured bench worker under taskset and return the figures it wrote (plus its command wall)."""
    figures, seconds = measure.run_worker(script, args, result, core=core)
    return figures | {"command_s": seconds}


def build_data(data_dir: Path, docs: int, seed: int, core: int) -> None:
    """Run ingest, clean (and dedup once) on the demo corpus into ``data_dir``, on one core."""
    log(f"building {data_dir} from the demo corpus ({docs:,} records, seed {seed}) on CPU {core}")
    run_command([sys.executable, "-m", "kiln", "run", "--demo", "--demo-docs", str(docs), "--data-dir", str(data_dir),
                 "--set", f"demo.seed={seed}", "--set", "ray.num_cpus=1"], core)


def read_clean(data_dir: Path) -> tuple[list[str], list[str]]:
    """Texts and source ids of the clean stage's output, in its manifest's shard order."""
    clean_dir = data_dir / "clean"
    texts, source_ids = [], []
    for info in require_manifest(clean_dir).shards:
        with pa.memory_map(str(clean_dir / info.path)) as source:
            table = pa.ipc.open_file(source).read_all()
        texts += table.column("text").to_pylist()
        source_ids += table.column("source_id").to_pylist()
    return texts, source_ids


def near_pairs(truth_path: Path, source_ids: list[str]) -> list[dict]:
    """Planted near-duplicate pairs (truth rows with dup_of and jaccard, exact copies left out) that survived clean."""
    row_of = {sid: i for i, sid in enumerate(source_ids)}
    pairs = []
    with truth_path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            near = record["dup_of"] and record["jaccard"] is not None and "exact_dup" not in record["defects"]
            if near and {record["source_id"], record["dup_of"]} <= row_of.keys():
                pairs.append({"rows": [row_of[record["dup_of"]], row_of[record["source_id"]]],
                              "kind": "+".join(record["defects"]), "planted_jaccard": record["jaccard"]})
    return pairs


def jaccard_check(texts: list[str], pairs: list[dict], kiln: list[float], ref: list[float]) -> dict:
    """How far the two sides' estimates are apart, against each other and against the exact shingle Jaccard."""
    exact = [jaccard(*(shingles(dedup_tokens(texts[r])) for r in p["rows"])) for p in pairs]
    expected = [math.sqrt(2 / math.pi) * math.sqrt(2 * j * (1 - j) / NUM_PERM) for j in exact]
    by_kind: dict[str, dict] = {}
    for pair, j, k, d in zip(pairs, exact, kiln, ref, strict=True):
        kind = by_kind.setdefault(pair["kind"], {"pairs": 0, "exact": 0.0, "kiln": 0.0, "datasketch": 0.0,
                                                  "abs_diff": 0.0})
        kind["pairs"] += 1
        for name, value in (("exact", j), ("kiln", k), ("datasketch", d), ("abs_diff", abs(k - d))):
            kind[name] += value
    for kind in by_kind.values():
        for name in ("exact", "kiln", "datasketch", "abs_diff"):
            kind[name] /= kind["pairs"]
    n = len(pairs)
    return {
        "pairs": n,
        "mean_abs_diff": sum(abs(k - d) for k, d in zip(kiln, ref, strict=True)) / n,
        "max_abs_diff": max(abs(k - d) for k, d in zip(kiln, ref, strict=True)),
        "expected_abs_diff": sum(expected) / n,
        "kiln_mean_abs_error": sum(abs(k - j) for k, j in zip(kiln, exact, strict=True)) / n,
        "datasketch_mean_abs_error": sum(abs(d - j) for d, j in zip(ref, exact, strict=True)) / n,
        "by_kind": by_kind,
    }


def measure_kernels(texts: list[str], pairs: list[dict], runs: int, core: int, work: Path) -> dict:
    """Kiln's shingle_hashes + signatures against datasketch, same texts, each run in its own pinned process.

    The sides alternate ``runs`` times; the fastest run of each is reported.
    """
    texts_path, pairs_path = work / "texts.jsonl", work / "pairs.json"
    with texts_path.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(text, ensure_ascii=False) + "\n" for text in texts)
    pairs_path.write_text(json.dumps([p["rows"] for p in pairs]), encoding="utf-8")
    total_bytes = sum(len(t.encode("utf-8")) for t in texts)
    results: dict[str, list[dict]] = {"kiln": [], "datasketch": []}
    for run in range(runs):
        for side, done in results.items():
            log(f"timing {side} MinHash signatures on {len(texts):,} documents, run {run + 1} of {runs} (CPU {core})")
            done.append(run_worker("dedup_kernels.py", [side, str(texts_path), str(pairs_path)],
                                   work / f"{side}-{run}.json", core))
    sides = {}
    for side, done in results.items():
        best = min(done, key=lambda r: r["seconds"])
        sides[side] = best | {"runs_s": [r["seconds"] for r in done]} | throughput(len(texts), total_bytes, best["seconds"])
    check = jaccard_check(texts, pairs, sides["kiln"].pop("estimates"), sides["datasketch"].pop("estimates"))
    return sides | {"ratio": sides["kiln"]["docs_per_s"] / sides["datasketch"]["docs_per_s"], "jaccard": check}


def measure_stage(data_dir: Path, total_bytes: int, runs: int, core: int, work: Path) -> dict:
    """The stage command (timed by its wall and by its _stats.json), Ray start-up alone, and the steps without Ray.

    Each is run ``runs`` times, interleaved; the fastest run of each (the least disturbed by other
    work on the machine) is the one reported.
    """
    command = [sys.executable, "-m", "stages.dedup", "--data-dir", str(data_dir), "--set", "ray.num_cpus=1", "--force"]
    probes, stage_runs, steps_runs = [], [], []
    for run in range(runs):
        log(f"timing Ray start-up alone, the dedup stage and its steps without Ray, run {run + 1} of {runs} (CPU {core})")
        probes.append(run_worker("dedup_ray.py", [], work / f"ray-{run}.json", core))
        wall = run_command(command, core)
        stats = json.loads((data_dir / "dedup" / "_stats.json").read_text(encoding="utf-8"))
        stage_runs.append({"command_s": wall, "wall_seconds": stats["wall_seconds"],
                           "unit_seconds": stats["unit_seconds"], "docs": stats["accounting"]["in"],
                           "kept": stats["accounting"]["out"], "dropped": stats["accounting"]["dropped"],
                           "peak_rss_mb_per_worker": stats["peak_rss_mb_per_worker"]})
        steps = run_worker("dedup_global.py", ["steps", str(data_dir), str(work / f"steps-{run}")],
                           work / f"steps-{run}.json", core)
        steps_runs.append(steps | {"seconds": sum(steps["parts_s"].values())})
    docs = stage_runs[0]["docs"]
    best = min(stage_runs, key=lambda r: r["command_s"])
    probe = min(probes, key=lambda p: p["command_s"])
    steps = min(steps_runs, key=lambda r: r["seconds"])
    net = best["command_s"] - probe["command_s"]
    return {
        "docs": docs, "total_bytes": total_bytes, "runs": stage_runs, "ray_probes": probes,
        "steps_runs_s": [r["seconds"] for r in steps_runs], "command_s": best["command_s"],
        "ray_startup_s": probe["command_s"], "ray_startup_parts_s": probe["parts_s"], "net_s": net,
        "wall_seconds": best["wall_seconds"], "unit_seconds": best["unit_seconds"],
        "net": throughput(docs, total_bytes, net),
        "stats_wall": throughput(docs, total_bytes, best["wall_seconds"]),
        "stats_units": throughput(docs, total_bytes, best["unit_seconds"]),
        "steps": steps | throughput(docs, total_bytes, steps["seconds"]),
    }


STEP_LABELS = {"dedup.partition": "LSH partition", "dedup.large_star": "large-star",
               "dedup.small_star": "small-star", "dedup.members": "members", "dedup.keepers": "keepers"}
ALL_LABELS = {"dedup.signature": "signature", **STEP_LABELS}


def link_copy(source: Path, target: Path) -> Path:
    """``target``, a copy of the folder ``source`` made of hard links (the files are written once, never changed)."""
    shutil.copytree(source, target, copy_function=os.link)
    return target


def summarize_steps(tasks: list[dict]) -> dict[str, dict]:
    """Per step kind (the runner's ``point``): task count, seconds, bytes read, files read and peak memory."""
    steps = {}
    for point in STEP_LABELS:
        done = [t for t in tasks if t["step"] == point]
        steps[point] = {
            "tasks": len(done), "mean_s": statistics.mean(t["seconds"] for t in done),
            "max_s": max(t["seconds"] for t in done), "total_s": sum(t["seconds"] for t in done),
            "cpu_s": sum(t["cpu_s"] for t in done),
            "read_bytes": statistics.mean(t["read_bytes"] for t in done),
            "max_read_bytes": max(t["read_bytes"] for t in done),
            "mapped_bytes": statistics.mean(t["mapped_bytes"] for t in done),
            "files": statistics.mean(t["files"] for t in done),
            "peak_bytes": statistics.mean(t["peak_bytes"] for t in done),
            "max_peak_bytes": max(t["peak_bytes"] for t in done),
            "baseline_bytes": statistics.mean(t["baseline_bytes"] for t in done),
        }
    return steps


def measure_corpus(docs: int, shard_docs: int, partitions: int, core: int, work: Path) -> dict:
    """One synthetic corpus: its signature outputs, ``decide_clusters`` task by task, then on Ray."""
    corpus = work / "corpus"
    log(f"writing the signature outputs of {docs:,} synthetic documents ({shard_docs:,} per shard, P = {partitions})")
    synth = run_worker("dedup_synth.py", [str(corpus), "--docs", str(docs), "--shard-docs", str(shard_docs),
                                          "--partitions", str(partitions)], work / "synth.json", core)
    shards = ["--shards", str(synth["shards"]), "--partitions", str(partitions)]
    log(f"timing decide_clusters task by task in one process on {docs:,} documents (CPU {core})")
    tasks = run_worker("dedup_global.py", ["tasks", str(link_copy(corpus, work / "tasks")), *shards],
                       work / "tasks.json", core)
    log(f"timing decide_clusters on Ray (ray.num_cpus=1) on {docs:,} documents (CPU {core})")
    on_ray = run_worker("dedup_global.py", ["ray", str(link_copy(corpus, work / "ray")), *shards],
                        work / "ray.json", core)
    if on_ray["summary"] != tasks["summary"]:
        raise measure.WorkerError(f"decide_clusters on Ray found {on_ray['summary']}, task by task {tasks['summary']}")
    written = synth["written"]
    routed = sum(written[name]["bytes"] for name in ("bands", "exact", "nodes"))
    return {"docs": docs, "partitions": partitions, "synth": synth, "routed_bytes": routed,
            "corpus_bytes": routed + written["signatures"]["bytes"], "summary": tasks["summary"],
            "tasks_s": sum(t["seconds"] for t in tasks["tasks"]), "tasks_cpu_s": sum(t["cpu_s"] for t in tasks["tasks"]),
            "steps": summarize_steps(tasks["tasks"]), "written": tasks["written"],
            "ray": {key: on_ray[key] for key in ("seconds", "driver_baseline_bytes", "driver_peak_bytes",
                                                 "driver_end_bytes", "summary")}}


def measure_global(docs: list[int], shard_docs: int, partitions: int, core: int, work: Path) -> list[dict]:
    """Every synthetic corpus in turn, each deleted once measured (the largest are several GB)."""
    corpora = []
    for n in docs:
        here = work / f"synthetic-{n}"
        corpora.append(measure_corpus(n, shard_docs, partitions, core, here))
        shutil.rmtree(here)
    return corpora


def _memory_fit(small: dict, large: dict, step: str) -> tuple[float, float]:
    """(fixed bytes, bytes per corpus document / P) of a task's peak: y = fixed + per_doc * N / P."""
    x0, y0 = small["docs"] / small["partitions"], small["steps"][step]["max_peak_bytes"]
    x1, y1 = large["docs"] / large["partitions"], large["steps"][step]["max_peak_bytes"]
    per_doc = (y1 - y0) / (x1 - x0) if x1 > x0 else y1 / x1
    if per_doc <= 0:
        return y1, 0.0
    return max(y1 - per_doc * x1, 0.0), per_doc


def stage_seconds_per_doc(kernels: dict, stage: dict, corpus: dict) -> dict[str, float]:
    """Seconds per document of each part of the stage on one core: signatures, routing, global step, filtering."""
    n = corpus["docs"]
    return {"signature_kernel": 1 / kernels["kiln"]["docs_per_s"], "routing": corpus["synth"]["write_s"] / n,
            "global_step": corpus["tasks_s"] / n, "filtering": 1 / stage["stats_units"]["docs_per_s"]}


def file_counts(shards: int, partitions: int, rounds: int) -> dict[str, int]:
    """Files each step writes for ``shards`` input shards and P ``partitions`` (at most: a target partition
    with no rows gets no file), done markers included."""
    p, square = partitions, partitions**2
    return {"signature": shards * (3 * p + 2), "LSH partition": square + p,
            "components": (2 * rounds + 1) * (square + p), "members": square + p, "keepers": p * shards + p}


def plan_billion(kernels: dict, stage: dict, corpora: list[dict], shard_docs: int) -> dict:
    """The 1-billion-document plan from the smallest and the largest measured corpus."""
    small, large = corpora[0], corpora[-1]
    n, target, p_measured = large["docs"], TARGET_DOCS, large["partitions"]
    fits = {step: _memory_fit(small, large, step) for step in STEP_LABELS}
    baseline = max(large["steps"][step]["baseline_bytes"] for step in STEP_LABELS)
    budget = TASK_MEMORY_GB * 2**30 - baseline
    needed = {step: max(math.ceil(per_doc * target / (budget - fixed)), 1) for step, (fixed, per_doc) in fits.items()}
    partitions = max(max(needed.values()), p_measured)
    shards = math.ceil(target / shard_docs)
    rounds = large["summary"]["rounds"]
    runs = {"dedup.partition": 1, "dedup.large_star": rounds + 1, "dedup.small_star": rounds,
            "dedup.members": 1, "dedup.keepers": 1}
    per_task = {}
    for step, figures in large["steps"].items():
        fixed, per_doc = fits[step]
        scale = (target / partitions) / (n / p_measured)
        per_task[step] = {"memory_bytes": baseline + fixed + per_doc * target / partitions,
                          "read_bytes": figures["read_bytes"] * scale, "seconds": figures["mean_s"] * scale}
    lsh = large["steps"]["dedup.partition"]
    seconds = stage_seconds_per_doc(kernels, stage, large)
    cores = CLUSTER_NODES * CORES_PER_NODE
    waves = math.ceil(partitions / cores)
    global_wall = sum(per_task[step]["seconds"] * waves * count for step, count in runs.items())
    map_wall = (seconds["signature_kernel"] + seconds["routing"] + seconds["filtering"]) * target / cores
    written = large["written"]
    return {
        "docs": target, "from_docs": n, "partitions": partitions, "partitions_needed": needed,
        "task_memory_gb": TASK_MEMORY_GB, "task_baseline_bytes": baseline,
        "memory_fit": {step: {"fixed_bytes": f, "bytes_per_doc_over_p": d} for step, (f, d) in fits.items()},
        "per_task": per_task, "shards": shards, "shard_docs": shard_docs, "rounds": rounds,
        "routed_bytes_per_doc": large["routed_bytes"] / n,
        "signature_bytes_per_doc": written["signatures"]["bytes"] / n,
        "global_written_bytes_per_doc": sum(written[k]["bytes"] for k in ("graph", "members", "decisions")) / n,
        "files": file_counts(shards, partitions, rounds),
        "lsh_files_per_task": lsh["files"] / large["synth"]["shards"] * shards,
        "measured_files": sum(f["files"] for f in written.values()),
        "formula_files_at_measured": sum(file_counts(large["synth"]["shards"], p_measured, rounds).values()),
        "core_hours": {part: s * target / 3600 for part, s in seconds.items()},
        "cluster": {"nodes": CLUSTER_NODES, "cores_per_node": CORES_PER_NODE, "map_wall_h": map_wall / 3600,
                    "global_wall_h": global_wall / 3600, "waves": waves},
    }


def goals(kernels: dict, stage: dict, corpora: list[dict]) -> list[dict]:
    """The issue's goals, each with the measured value and whether it is met."""
    mean_bytes = stage["total_bytes"] / stage["docs"]
    check = kernels["jaccard"]
    out = [{"goal": f"Kiln signatures >= {GOAL_RATIO}x datasketch per core",
            "measured": f"{kernels['ratio']:.1f}x ({kernels['kiln']['docs_per_s']:,.0f} vs "
                        f"{kernels['datasketch']['docs_per_s']:,.0f} docs/s)",
            "met": kernels["ratio"] >= GOAL_RATIO},
           {"goal": f"same estimate: mean |Kiln - datasketch| <= {JACCARD_TOLERANCE}x two independent "
                    f"{NUM_PERM}-permutation estimates' spread",
            "measured": f"{check['mean_abs_diff']:.4f} vs {check['expected_abs_diff']:.4f} expected "
                        f"({check['pairs']} pairs)",
            "met": check["mean_abs_diff"] <= JACCARD_TOLERANCE * check["expected_abs_diff"]}]
    for key, label in (("net", "command wall less Ray start-up"), ("stats_wall", "_stats.json wall_seconds")):
        figures = stage[key]
        out.append({"goal": f"whole stage >= {GOAL_DOCS_PER_S:,} docs/s per core on ~1.5 KB docs ({label})",
                    "measured": f"{figures['docs_per_s']:,.0f} docs/s on {mean_bytes:,.0f}-byte docs = "
                                f"{figures['gb_per_core_hour']:.1f} GB per core-hour",
                    "met": figures["docs_per_s"] >= GOAL_DOCS_PER_S})
    first = corpora[0]
    parts = stage_seconds_per_doc(kernels, stage, first)
    rate = 1 / sum(parts.values())
    out.append({"goal": f"whole stage >= {GOAL_DOCS_PER_S:,} docs/s per core at {first['docs']:,} documents "
                        "(signature kernel + routing + global step + filtering, per document)",
                "measured": f"{rate:,.0f} docs/s = 1 / (" + " + ".join(f"{s * 1e6:.0f}" for s in parts.values())
                            + " us: " + ", ".join(parts) + ")",
                "met": rate >= GOAL_DOCS_PER_S})
    worst = [max(((f["read_bytes"] / (c["corpus_bytes"] / c["partitions"]), STEP_LABELS[step])
                  for step, f in c["steps"].items()), key=lambda x: x[0]) for c in corpora]
    out.append({"goal": f"bytes read per partition task ~ corpus / P (within {READ_GOAL_FACTOR}x), not the corpus",
                "measured": "; ".join(f"{c['docs']:,} docs: at most {ratio:.2f}x corpus/P ({label}), "
                                      f"{c['steps']['dedup.partition']['read_bytes'] / c['corpus_bytes']:.3f}x corpus"
                                      for c, (ratio, label) in zip(corpora, worst, strict=True)),
                "met": all(ratio <= READ_GOAL_FACTOR for ratio, _ in worst)})
    small, large = corpora[0], corpora[-1]
    growth = large["ray"]["driver_peak_bytes"] - small["ray"]["driver_peak_bytes"]
    added = large["docs"] - small["docs"]
    out.append({"goal": f"driver flat in N: its peak grows by < {FLAT_BYTES_PER_DOC} bytes (one int64) per added "
                        "document",
                "measured": ", ".join(f"{c['ray']['driver_peak_bytes'] / 2**20:.1f} MiB at {c['docs']:,}"
                                      for c in corpora)
                            + (f" = {growth / added:+.3f} bytes per added document" if added else ""),
                "met": bool(added) and growth < FLAT_BYTES_PER_DOC * added})
    return out


def _row(label: str, *cells: str, width: int = 34) -> str:
    return f"  {label:<{width}}" + "".join(f"{c:>20}" for c in cells)


def print_kernels(kernels: dict) -> None:
    kiln, ref = kernels["kiln"], kernels["datasketch"]
    print(_row("per core", "Kiln kernel", "datasketch", "Kiln / datasketch"))
    for key, label, fmt in (("docs_per_s", "docs/s", ",.0f"), ("mb_per_s", "MB/s", ".2f"),
                            ("gb_per_core_hour", "GB per core-hour", ".2f")):
        print(_row(label, format(kiln[key], fmt), format(ref[key], fmt), f"{kiln[key] / ref[key]:.1f}x"))
    print(_row("peak RSS (MiB)", f"{kiln['peak_rss_mb']:,.0f}", f"{ref['peak_rss_mb']:,.0f}"))
    print(_row("warm-up, s (untimed)", f"{kiln['warmup_s']:.2f}", f"{ref['warmup_s']:.2f}"))
    parts = kiln["parts_s"]
    print(f"  Kiln's time: shingle_hashes {parts['shingle_hashes']:.2f} s, signatures {parts['signatures']:.2f} s; "
          f"fastest of {len(kiln['runs_s'])} runs each (Kiln " + ", ".join(f"{x:.2f}" for x in kiln["runs_s"])
          + " s; datasketch " + ", ".join(f"{x:.2f}" for x in ref["runs_s"]) + " s)")
    check = kernels["jaccard"]
    print(f"\n  Jaccard estimates on {check['pairs']} planted near-duplicate pairs (exact = Jaccard of the shingle sets):")
    print(f"  {'kind':<16}{'pairs':>7}{'exact':>8}{'Kiln':>8}{'datasketch':>12}{'|K - d|':>9}")
    for kind, figures in sorted(check["by_kind"].items()):
        print(f"  {kind:<16}{figures['pairs']:>7}{figures['exact']:>8.3f}{figures['kiln']:>8.3f}"
              f"{figures['datasketch']:>12.3f}{figures['abs_diff']:>9.4f}")
    print(f"  mean |Kiln - datasketch| {check['mean_abs_diff']:.4f} (max {check['max_abs_diff']:.3f}); two independent "
          f"{NUM_PERM}-permutation estimates differ by {check['expected_abs_diff']:.4f} on average")
    print(f"  mean |estimate - exact|: Kiln {check['kiln_mean_abs_error']:.4f}, "
          f"datasketch {check['datasketch_mean_abs_error']:.4f}")


def print_stage(stage: dict) -> None:
    print(_row("whole stage, one core", "seconds", "docs/s", "GB per core-hour", width=44))
    rows = (("command wall less Ray start-up", stage["net_s"], stage["net"]),
            ("_stats.json wall_seconds (Ray start-up in)", stage["wall_seconds"], stage["stats_wall"]),
            ("_stats.json unit_seconds (filtering only)", stage["unit_seconds"], stage["stats_units"]),
            ("steps in one process, no Ray", stage["steps"]["seconds"], stage["steps"]))
    for label, seconds, figures in rows:
        print(_row(label, f"{seconds:.2f}", f"{figures['docs_per_s']:,.0f}", f"{figures['gb_per_core_hour']:.1f}",
                   width=44))
    probe = stage["ray_startup_parts_s"]
    walls = ", ".join(f"{r['command_s']:.2f}" for r in stage["runs"])
    probes = ", ".join(f"{p['command_s']:.2f}" for p in stage["ray_probes"])
    print(f"  fastest of {len(stage['runs'])} runs each: command wall {stage['command_s']:.2f} s (runs: {walls}); "
          f"Ray start-up {stage['ray_startup_s']:.2f} s (runs: {probes}) = wall of a pinned command that starts Ray "
          f"as the stage does (ray.num_cpus=1), runs one no-op task and exits: import {probe['import']:.2f} s, "
          f"init {probe['init']:.2f} s, first task {probe['first_task']:.2f} s, the rest interpreter start and "
          f"Ray shut-down")
    run = stage["runs"][0]
    print(f"  {stage['docs']:,} documents in, {run['kept']:,} kept, dropped {run['dropped']}; peak RSS per Ray worker "
          f"{run['peak_rss_mb_per_worker']:,.0f} MiB")
    steps, found = stage["steps"], stage["steps"]["summary"]
    print(f"  the steps without Ray ({steps['shards']} shards, {steps['partitions']} partitions, {steps['tasks']} tasks "
          "one after the other; fastest of " + ", ".join(f"{s:.2f}" for s in stage["steps_runs_s"]) + " s): "
          + ", ".join(f"{ALL_LABELS[k]} {v:.2f} s" for k, v in steps["parts_s"].items()))
    print(f"  {found['candidates']:,} candidates, {found['near_edges']:,} verified near and {found['exact_edges']:,} "
          f"exact edges, {found['rounds']} component round(s), {found['clustered']:,} documents in clusters; "
          f"data-juicer's best published Ray MinHash: {DATA_JUICER_GB_PER_CORE_HOUR} GB per core-hour "
          f"(Kiln {stage['net']['gb_per_core_hour'] / DATA_JUICER_GB_PER_CORE_HOUR:.0f}x)")


def _mb(value: float) -> str:
    return f"{value / 2**20:,.1f}"


def print_global(corpora: list[dict]) -> None:
    for corpus in corpora:
        n, synth, summary, steps = corpus["docs"], corpus["synth"], corpus["summary"], corpus["steps"]
        written, planted, p = synth["written"], synth["planted"], corpus["partitions"]
        share = corpus["corpus_bytes"] / p
        print(f"\n  N = {n:,} documents in {synth['shards']} shards of {synth['shard_docs']:,}, P = {p} (planted "
              f"{planted['near_dup']:,} near ({NEAR_RATE:.0%}) and {planted['exact_dup']:,} exact ({EXACT_RATE:.0%}) "
              f"duplicates of the same or the previous shard, {planted['no_shingles']:,} without shingles)")
        print(f"  signature-step outputs (the corpus): {corpus['corpus_bytes'] / 1e9:.2f} GB = "
              f"{corpus['corpus_bytes'] / n:,.0f} bytes per document: routed {corpus['routed_bytes'] / 1e9:.3f} GB "
              f"(band keys {written['bands']['bytes'] / 1e9:.3f}, exact keys {written['exact']['bytes'] / 1e9:.3f}, "
              f"keep-rule columns {written['nodes']['bytes'] / 1e9:.3f}) + signature matrices "
              f"{written['signatures']['bytes'] / 1e9:.3f} GB; write_signature_outputs {synth['write_s']:.1f} s; "
              f"corpus/P = {_mb(share)} MiB")
        print(f"  {'step':<15}{'tasks':>6}{'s mean':>8}{'s max':>7}{'s total':>9}{'read/task MiB':>15}"
              f"{'max':>8}{'/ (corpus/P)':>13}{'files/task':>11}{'peak MiB/task':>14}{'max':>7}")
        for step, f in steps.items():
            print(f"  {STEP_LABELS[step]:<15}{f['tasks']:>6}{f['mean_s']:>8.2f}{f['max_s']:>7.2f}{f['total_s']:>9.1f}"
                  f"{_mb(f['read_bytes']):>15}{_mb(f['max_read_bytes']):>8}{f['read_bytes'] / share:>13.3f}"
                  f"{f['files']:>11.1f}{_mb(f['peak_bytes']):>14}{_mb(f['max_peak_bytes']):>7}")
        lsh = steps["dedup.partition"]
        ray = corpus["ray"]
        print(f"  LSH partition read = {_mb(lsh['read_bytes'] - lsh['mapped_bytes'])} MiB of routed files "
              f"(routed/P = {_mb(corpus['routed_bytes'] / p)} MiB) + {_mb(lsh['mapped_bytes'])} MiB of memory-mapped "
              f"signature rows ({summary['candidates'] / p:,.0f} candidates x 2 x {NUM_PERM} x 8 bytes)")
        print(f"  {summary['candidates']:,} candidates, {summary['near_edges']:,} verified near and "
              f"{summary['exact_edges']:,} exact edges; a star forest after {summary['rounds']} large-star/small-star "
              f"round(s); {summary['clustered']:,} documents in clusters, {summary['exact_dup']:,} exact and "
              f"{summary['near_dup']:,} near duplicates removed")
        print(f"  global step, task by task on one core: {corpus['tasks_s']:.1f} s wall ({corpus['tasks_cpu_s']:.1f} s "
              f"CPU) -> {n / corpus['tasks_s']:,.0f} docs/s per core; on Ray (ray.num_cpus=1): {ray['seconds']:.1f} s "
              f"-> {n / ray['seconds']:,.0f} docs/s; the driver's peak {_mb(ray['driver_peak_bytes'])} MiB over its "
              f"{_mb(ray['driver_baseline_bytes'])} MiB after Ray's start")
    print("\n  driver's peak over its baseline (real decide_clusters on Ray): "
          + ", ".join(f"{_mb(c['ray']['driver_peak_bytes'])} MiB at {c['docs']:,}" for c in corpora))
    print("  read/task: rchar of /proc/self/io (plus the LSH tasks' memory-mapped signature rows); files/task: files "
          "opened for reading; peak: VmHWM over the RSS before the task (reset by /proc/self/clear_refs)")


def plan_lines(plan: dict) -> list[str]:
    """The 1-billion-document plan as printable lines (also what bench/README.md summarizes)."""
    p, per_task, files, hours, cluster = (plan["partitions"], plan["per_task"], plan["files"], plan["core_hours"],
                                          plan["cluster"])
    widest = max(per_task, key=lambda step: per_task[step]["memory_bytes"])
    fits = ", ".join(f"{STEP_LABELS[step]} {f['fixed_bytes'] / 2**20:,.0f} MiB + {f['bytes_per_doc_over_p']:,.0f} B"
                     for step, f in plan["memory_fit"].items())
    total_files = sum(files.values())
    return [
        f"tasks: P >= {max(plan['partitions_needed'].values()):,} keeps every partition task within "
        f"{plan['task_memory_gb']} GB (a task's peak = fixed + bytes per corpus document / P, fitted on the measured "
        f"corpora: {fits}; plus {plan['task_baseline_bytes'] / 2**20:,.0f} MiB of a worker's imports) -> P = {p:,} "
        f"tasks per step, {cluster['waves']} wave(s) on {cluster['nodes']} nodes x {cluster['cores_per_node']} cores",
        "memory per task at P = " + f"{p:,}: " + ", ".join(
            f"{STEP_LABELS[step]} {t['memory_bytes'] / 2**30:.2f} GB" for step, t in per_task.items())
        + f" (the largest: {STEP_LABELS[widest]})",
        "read per task at P = " + f"{p:,}: " + ", ".join(
            f"{STEP_LABELS[step]} {t['read_bytes'] / 1e9:.2f} GB" for step, t in per_task.items())
        + f"; an LSH partition task opens {plan['lsh_files_per_task']:,.0f} files (one band-key, one exact-key and "
        f"one signature file per shard)",
        f"shuffle: {plan['routed_bytes_per_doc']:,.0f} routed bytes per document x 1e9 = "
        f"{plan['routed_bytes_per_doc'] / 1e3:.2f} TB of band keys, exact keys and keep-rule columns; signature "
        f"matrices {plan['signature_bytes_per_doc'] / 1e3:.2f} TB (they stay per shard, read by memory map); graph, "
        f"members and decisions {plan['global_written_bytes_per_doc']:,.1f} bytes per document = "
        f"{plan['global_written_bytes_per_doc'] / 1e3:.2f} TB",
        f"files ({plan['shards']:,} shards of {plan['shard_docs']:,} x P = {p:,}, at most): "
        + ", ".join(f"{step} {count:,}" for step, count in files.items())
        + f" = {total_files:,} ({total_files / 1e6:.1f} M; at the measured size the formula gives "
        f"{plan['formula_files_at_measured']:,}, the run wrote {plan['measured_files']:,}); component rounds: "
        f"{plan['rounds']}, as measured at {plan['from_docs']:,} documents",
        "core-hours: " + ", ".join(f"{part.replace('_', ' ')} {h:,.0f}" for part, h in hours.items())
        + f" = {sum(hours.values()):,.0f}",
        f"wall on {cluster['nodes']} nodes x {cluster['cores_per_node']} cores: signatures, routing and filtering "
        f"{cluster['map_wall_h']:.2f} h ({plan['shards']:,} shard tasks), global step {cluster['global_wall_h']:.2f} h "
        f"({p:,} tasks per step in {cluster['waves']} wave(s), {plan['rounds']} component round(s)) = "
        f"{cluster['map_wall_h'] + cluster['global_wall_h']:.2f} h; 8 GB per task is "
        f"{plan['task_memory_gb'] * cluster['cores_per_node']} GB per node with every core busy",
    ]


def print_report(report: dict) -> None:
    bench, kernels, stage, corpora = report["input"], report["kernels"], report["stage"], report["global"]
    print(f"\nDedup per core: {bench['docs']:,} clean demo documents ({bench['demo_records']:,} records, seed "
          f"{bench['seed']}), mean {bench['mean_doc_bytes']:,.0f} bytes, {bench['total_bytes'] / 1e6:.2f} MB; "
          f"every measured process on CPU {report['core']}\n")
    print(f"1. MinHash signatures ({NUM_PERM} permutations, 5-token shingles), each side in its own process:")
    print_kernels(kernels)
    print("\n2. The whole dedup stage (signatures, LSH, components, filtering, I/O), "
          "python -m stages.dedup --set ray.num_cpus=1 under taskset:")
    print_stage(stage)
    print("\n3. The global step (decide_clusters) on synthetic corpora written by the real write_signature_outputs, "
          "each task in one process one after the other, then on Ray:")
    print_global(corpora)
    print(f"\n4. Plan for {report['plan']['docs']:,} documents (from the {report['plan']['from_docs']:,}-document "
          "corpus):")
    for line in report["plan"]["lines"]:
        print(f"  - {line}")
    print("\nGoals:")
    for goal in report["goals"]:
        print(f"  [{'met' if goal['met'] else 'NOT met'}] {goal['goal']}: {goal['measured']}")


def run_bench(args: argparse.Namespace) -> dict:
    """Build the input, measure every part, and gather every figure of the report."""
    with tempfile.TemporaryDirectory(prefix="kiln-bench-dedup-") as tmp:
        work = Path(tmp)
        data_dir = work / "data"
        build_data(data_dir, args.docs, args.seed, args.core)
        texts, source_ids = read_clean(data_dir)
        pairs = near_pairs(data_dir / "demo" / "truth.jsonl", source_ids)
        total_bytes = sum(len(t.encode("utf-8")) for t in texts)
        kernels = measure_kernels(texts, pairs, args.runs, args.core, work)
        stage = measure_stage(data_dir, total_bytes, args.runs, args.core, work)
        corpora = measure_global(args.synthetic_docs, args.shard_docs, args.partitions, args.core, work)
    plan = plan_billion(kernels, stage, corpora, args.shard_docs)
    return {
        "input": {"demo_records": args.docs, "seed": args.seed, "docs": len(texts), "total_bytes": total_bytes,
                  "mean_doc_bytes": total_bytes / len(texts)},
        "core": args.core, "kernels": kernels, "stage": stage, "global": corpora,
        "plan": plan | {"lines": plan_lines(plan)}, "goals": goals(kernels, stage, corpora),
    }


def main() -> None:
    args = parse_args()
    run_driver(lambda: run_bench(args), print_report, args.out, "dedup.json",
               "bench/dedup.py: a measured process failed")


if __name__ == "__main__":
    main()
