"""Dedup per core: Kiln's MinHash kernel against datasketch, the whole dedup stage, and its global step at 1M documents.

Run from anywhere with Kiln's environment:  .venv/bin/python bench/dedup.py [--docs N] [--synthetic-docs N] [--out DIR] [--core N]

1. Builds a data folder with the demo corpus's clean output (``python -m kiln run --demo``) and times,
   each in its own process pinned to one core, Kiln's ``shingle_hashes`` + ``signatures`` and
   datasketch's ``MinHash.update_batch`` on the same clean texts; compares their Jaccard estimates
   on the demo's planted near-duplicate pairs.
2. Times ``python -m stages.dedup --set ray.num_cpus=1 --force`` on that folder under taskset, a
   command that only starts Ray the same way, and the stage's steps in one process without Ray.
   Every timing of parts 1 and 2 is repeated (``--runs``) and the fastest run is reported.
3. Synthesizes signature files for 1M documents and measures each ``partition_task`` and the
   driver's ``decide`` (time, peak RSS, bytes read), each in its own pinned process.
4. Derives the plan for 1 billion documents. Prints a table and writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

import measure
import pyarrow as pa
from dedup_synth import EXACT_RATE, NEAR_RATE
from measure import driver_args, driver_parser, log, run_command, run_driver, throughput

from common.config import KilnConfig, load_config
from common.manifest import require_manifest
from common.text import dedup_tokens, jaccard, shingles

DEFAULT_DOCS = 10000
DEFAULT_SYNTHETIC_DOCS = 1_000_000
DEFAULT_SHARD_DOCS = 40_000
WARMUP_DOCS = 64
NUM_PERM = 128
GOAL_RATIO = 10
GOAL_DOCS_PER_S = 5000
DATA_JUICER_GB_PER_CORE_HOUR = 1.4
FIT_FACTOR = 4
FIT_TASKS = 4
TARGET_DOCS = 1_000_000_000
TASK_MEMORY_GB = 8
JACCARD_TOLERANCE = 1.5


def parse_args() -> argparse.Namespace:
    parser = driver_parser(__doc__, DEFAULT_DOCS)
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of each signature side, of the stage, of Ray start-up alone and of the steps "
                             "without Ray; the fastest of each is reported (default 3)")
    parser.add_argument("--synthetic-docs", type=int, default=DEFAULT_SYNTHETIC_DOCS,
                        help=f"documents of the synthetic signature files (default {DEFAULT_SYNTHETIC_DOCS:,})")
    parser.add_argument("--shard-docs", type=int, default=DEFAULT_SHARD_DOCS,
                        help=f"documents per synthetic signature file (default {DEFAULT_SHARD_DOCS:,}, "
                             "a 64 MB clean shard of 1.5 KB documents)")
    return driver_args(parser, "dedup.json")


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


def measure_partitions(sig_dir: Path, edge_dir: Path, partitions: list[int], count: int, core: int,
                       work: Path) -> list[dict]:
    """One pinned process per partition_task (of ``count`` partitions), each over every signature file."""
    results = []
    for p in partitions:
        args = ["partition", str(sig_dir), str(edge_dir), "--partition", str(p), "--partitions", str(count)]
        results.append(run_worker("dedup_global.py", args, work / f"partition-{count}-{p}.json", core))
    return results


def summarize_tasks(tasks: list[dict]) -> dict:
    """Max peak RSS, baseline, and mean/max time and bytes read over partition tasks."""
    return {"tasks": len(tasks), "peak_rss_mb": max(t["peak_rss_mb"] for t in tasks),
            "baseline_rss_mb": min(t["baseline_rss_mb"] for t in tasks),
            "mean_s": statistics.mean(t["seconds"] for t in tasks), "max_s": max(t["seconds"] for t in tasks),
            "total_s": sum(t["seconds"] for t in tasks),
            "read_bytes": statistics.mean(t["read_bytes"] for t in tasks),
            "edges": sum(t["edges"] for t in tasks)}


def measure_global(cfg: KilnConfig, docs: int, shard_docs: int, core: int, work: Path) -> dict:
    """Synthetic signature files for ``docs`` documents, then every partition_task and decide, each pinned."""
    sig_dir = work / "signatures"
    log(f"writing synthetic signature files for {docs:,} documents ({shard_docs:,} per file)")
    synth = run_worker("dedup_synth.py", [str(sig_dir), "--docs", str(docs), "--shard-docs", str(shard_docs)],
                       work / "synth.json", core)
    count = cfg.dedup.partitions
    log(f"timing {count} partition tasks, one process each (CPU {core})")
    tasks = measure_partitions(sig_dir, work / "edges", list(range(count)), count, core, work)
    fit_count = count * FIT_FACTOR
    log(f"timing {FIT_TASKS} of {fit_count} partition tasks, to separate fixed and per-document costs")
    fit_tasks = measure_partitions(sig_dir, work / "edges-fit", list(range(FIT_TASKS)), fit_count, core, work)
    decides = {}
    for method in ("union_find", "star_contraction"):
        log(f"timing decide ({method}) on {docs:,} documents (CPU {core})")
        decides[method] = run_worker("dedup_global.py", ["decide", str(sig_dir), str(work / "edges"), "--method", method],
                                     work / f"decide-{method}.json", core)
    return {"docs": docs, "synth": synth, "bytes_per_doc": synth["bytes"] / docs,
            "partitions": {"count": count, **summarize_tasks(tasks), "per_task": tasks},
            "partitions_fit": {"count": fit_count, **summarize_tasks(fit_tasks), "per_task": fit_tasks},
            "decide": decides, "configured_components": cfg.dedup.components}


def _per_doc_fit(n: int, first: tuple[int, float], second: tuple[int, float]) -> tuple[float, float]:
    """(fixed, per document of the corpus) of y = fixed + per_doc * n / P, from y at two partition counts P."""
    (p0, y0), (p1, y1) = first, second
    per_doc = max((y0 - y1) / (n / p0 - n / p1), 0.0)
    return max(y0 - per_doc * n / p0, 0.0), per_doc


def plan_billion(cfg: KilnConfig, stage: dict, kernels: dict, global_step: dict) -> dict:
    """The 1-billion-document plan: storage, shuffle, partitions, edges, driver memory, core-hours."""
    n, target = global_step["docs"], TARGET_DOCS
    d = cfg.dedup
    parts, fit = global_step["partitions"], global_step["partitions_fit"]
    mem_fixed, mem_per_doc = _per_doc_fit(n, (parts["count"], (parts["peak_rss_mb"] - parts["baseline_rss_mb"]) * 2**20),
                                          (fit["count"], (fit["peak_rss_mb"] - fit["baseline_rss_mb"]) * 2**20))
    budget = TASK_MEMORY_GB * 2**30 - parts["baseline_rss_mb"] * 2**20 - mem_fixed
    needed = max(math.ceil(mem_per_doc * target / budget), 1) if mem_per_doc else 1
    scan_s, own_per_doc = _per_doc_fit(n, (parts["count"], parts["mean_s"]), (fit["count"], fit["mean_s"]))
    own_s = own_per_doc * n
    read_per_doc = parts["read_bytes"] / n
    uf, sc = global_step["decide"]["union_find"], global_step["decide"]["star_contraction"]
    edges_per_doc = uf["near_edges"] / n
    unique_per_doc = uf["unique_near_edges"] / n
    decide_bytes = {m: (r["peak_rss_mb"] - r["baseline_rss_mb"]) * 2**20 / n for m, r in global_step["decide"].items()}
    band_bytes = d.bands * 16
    scale = target / n
    return {
        "docs": target,
        "signature_storage_tb": global_step["bytes_per_doc"] * target / 1e12,
        "band_shuffle_tb": band_bytes * target / 1e12,
        "band_shuffle_bytes_per_doc": band_bytes,
        "partition_read_per_task_tb": read_per_doc * target / 1e12,
        "partition_read_total_pb": read_per_doc * target * needed / 1e15,
        "partition_memory_fixed_mb": mem_fixed / 2**20,
        "partition_memory_per_doc_bytes": mem_per_doc,
        "partitions_for_task_memory": needed,
        "task_memory_gb": TASK_MEMORY_GB,
        "edges_per_doc": edges_per_doc,
        "unique_edges_per_doc": unique_per_doc,
        "edges": edges_per_doc * target,
        "unique_edges": unique_per_doc * target,
        "edge_list_gb": unique_per_doc * target * 16 / 1e9,
        "clustered_fraction": uf["clustered_docs"] / n,
        "decide_bytes_per_doc": decide_bytes,
        "decide_arrays_per_doc": decide_bytes["union_find"] / 8,
        "decide_memory_gb": {m: b * target / 1e9 for m, b in decide_bytes.items()},
        "decide_hours": {m: r["parts_s"]["decide"] * scale / 3600 for m, r in (("union_find", uf), ("star_contraction", sc))},
        "core_hours": {
            "whole_stage_at_measured_rate": target / stage["net"]["docs_per_s"] / 3600,
            "kiln_signatures": target / kernels["kiln"]["docs_per_s"] / 3600,
            "datasketch_signatures": target / kernels["datasketch"]["docs_per_s"] / 3600,
            "partition_step_as_implemented": (scan_s * needed + own_s) * scale / 3600,
            "partition_step_own_work": own_s * scale / 3600,
        },
        "partition_scan_s_per_task_at_measured_n": scan_s,
        "partition_own_s_total_at_measured_n": own_s,
    }


def goals(kernels: dict, stage: dict) -> list[dict]:
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
    steps = stage["steps"]
    print(f"  the steps without Ray ({steps['shards']} shards, {steps['partitions']} partitions; fastest of "
          + ", ".join(f"{s:.2f}" for s in stage["steps_runs_s"]) + " s): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in steps["parts_s"].items()))
    print(f"  verified near-duplicate edges: {steps['near_edges']:,} from the partitions, "
          f"{steps['unique_near_edges']:,} distinct; data-juicer's best published Ray MinHash: "
          f"{DATA_JUICER_GB_PER_CORE_HOUR} GB per core-hour "
          f"(Kiln {stage['net']['gb_per_core_hour'] / DATA_JUICER_GB_PER_CORE_HOUR:.0f}x)")


def print_global(global_step: dict) -> None:
    synth, parts, fit = global_step["synth"], global_step["partitions"], global_step["partitions_fit"]
    n = global_step["docs"]
    planted = synth["planted"]
    print(f"  {n:,} synthetic documents in {synth['files']} files of {synth['shard_docs']:,}: "
          f"{synth['bytes'] / 1e9:.2f} GB = {global_step['bytes_per_doc']:,.0f} bytes per document "
          f"(planted: {planted['near_dup']:,} near, {planted['exact_dup']:,} exact duplicates, "
          f"{planted['no_shingles']:,} without shingles)")
    print(f"  {'step (one process each)':<40}{'tasks':>6}{'s each':>9}{'s total':>9}{'read/task':>11}"
          f"{'peak RSS':>10}{'after imports':>14}{'MB per M docs':>14}")
    for label, figures in ((f"partition_task, P = {parts['count']}", parts),
                           (f"partition_task, P = {fit['count']} (first {fit['tasks']})", fit)):
        per_m = (figures["peak_rss_mb"] - figures["baseline_rss_mb"]) * 1e6 / n
        print(f"  {label:<40}{figures['tasks']:>6}{figures['mean_s']:>9.2f}{figures['total_s']:>9.1f}"
              f"{figures['read_bytes'] / 1e9:>9.2f}GB{figures['peak_rss_mb']:>8,.0f}MB"
              f"{figures['baseline_rss_mb']:>12,.0f}MB{per_m:>14,.0f}")
    for method, figures in global_step["decide"].items():
        per_m = (figures["peak_rss_mb"] - figures["baseline_rss_mb"]) * 1e6 / n
        label = f"driver decide, {method}*"
        print(f"  {label:<40}{1:>6}{figures['seconds']:>9.2f}{figures['seconds']:>9.1f}"
              f"{figures['read_bytes'] / 1e9:>9.2f}GB{figures['peak_rss_mb']:>8,.0f}MB"
              f"{figures['baseline_rss_mb']:>12,.0f}MB{per_m:>14,.0f}")
    uf = global_step["decide"]["union_find"]
    print("  MB per M docs: (peak RSS - RSS after imports) per million corpus documents; a partition task holds "
          "1/P of them")
    print("  * what prepare() does once the edges exist: load the edges and the columns, decide, save")
    print(f"  decide (union_find): load {uf['parts_s']['load']:.2f} s, decide {uf['parts_s']['decide']:.2f} s, "
          f"save {uf['parts_s']['save']:.2f} s; {uf['near_edges']:,} verified edges from the partitions, "
          f"{uf['unique_near_edges']:,} distinct; removes {uf['reasons'].get('1', 0):,} exact and "
          f"{uf['reasons'].get('2', 0):,} near duplicates")


def plan_lines(plan: dict, cfg: KilnConfig) -> list[str]:
    """The 1-billion-document plan as printable lines (also what bench/README.md summarizes)."""
    d, hours = cfg.dedup, plan["core_hours"]
    mem = plan["decide_memory_gb"]
    return [
        f"signatures: {plan['signature_storage_tb']:.2f} TB of signature files "
        f"({plan['signature_storage_tb'] * 1e12 / plan['docs']:,.0f} bytes per document, {d.num_perm} uint64 + "
        f"{d.bands} band keys + exact key + columns)",
        f"band-key shuffle: {d.bands} bands x (8-byte key + 8-byte doc id) = {plan['band_shuffle_bytes_per_doc']} bytes "
        f"per document = {plan['band_shuffle_tb']:.2f} TB moved once, if the band keys were shuffled to their partitions",
        f"as implemented there is no shuffle: every partition task reads every file's bands and, to verify, the "
        f"signatures of every file with an edge endpoint, twice: {plan['partition_read_per_task_tb']:.2f} TB per task, "
        f"{plan['partition_read_total_pb']:.1f} PB over {plan['partitions_for_task_memory']:,} tasks",
        f"partitions: a partition task holds {plan['partition_memory_fixed_mb']:,.0f} MiB fixed + "
        f"{plan['partition_memory_per_doc_bytes']:.0f} bytes per corpus document / P -> P >= "
        f"{plan['partitions_for_task_memory']:,} for {plan['task_memory_gb']} GB per task",
        f"edges: {plan['edges_per_doc']:.3f} verified edges per document from the partitions "
        f"({plan['unique_edges_per_doc']:.3f} distinct) at {NEAR_RATE:.0%} near + {EXACT_RATE:.0%} exact "
        f"duplicates -> "
        f"{plan['edges'] / 1e9:.2f} B edges ({plan['unique_edges'] / 1e9:.2f} B distinct, "
        f"{plan['edge_list_gb']:.1f} GB as int64 pairs)",
        f"driver decide: {plan['decide_bytes_per_doc']['union_find']:.0f} bytes per document at its peak "
        f"(~{plan['decide_arrays_per_doc']:.0f} 8-byte values per document) -> 8 B x 1e9 x "
        f"{plan['decide_arrays_per_doc']:.0f} = {mem['union_find']:,.0f} GB with union_find "
        f"({mem['star_contraction']:,.0f} GB with star_contraction in one process); union_find time "
        f"{plan['decide_hours']['union_find']:.1f} h on one core, extrapolated linearly (star_contraction "
        f"{plan['decide_hours']['star_contraction']:.1f} h)",
        "beyond one node: star_contraction (components: star_contraction) works on the edge list alone; each "
        f"large-star/small-star round is a group-by on edges, hash-partitionable over Ray tasks; only the "
        f"{plan['clustered_fraction']:.0%} of documents in a duplicate cluster ever need a label; union_find keeps "
        f"one parent per document in one process and walks every edge (one per document for exact keys, plus the "
        f"near ones) in a Python loop",
        f"core-hours: {hours['whole_stage_at_measured_rate']:,.0f} at the measured whole-stage rate "
        f"(signatures alone {hours['kiln_signatures']:,.0f}; datasketch's would be {hours['datasketch_signatures']:,.0f}); "
        f"the partition step as implemented adds {hours['partition_step_as_implemented']:,.0f} core-hours because "
        f"each task rescans everything (its own work: {hours['partition_step_own_work']:,.1f})",
    ]


def print_report(report: dict, cfg: KilnConfig) -> None:
    bench, kernels, stage, global_step = report["input"], report["kernels"], report["stage"], report["global"]
    print(f"\nDedup per core: {bench['docs']:,} clean demo documents ({bench['demo_records']:,} records, seed "
          f"{bench['seed']}), mean {bench['mean_doc_bytes']:,.0f} bytes, {bench['total_bytes'] / 1e6:.2f} MB; "
          f"every measured process on CPU {report['core']}\n")
    print(f"1. MinHash signatures ({NUM_PERM} permutations, 5-token shingles), each side in its own process:")
    print_kernels(kernels)
    print("\n2. The whole dedup stage (signatures, LSH, components, filtering, I/O), "
          "python -m stages.dedup --set ray.num_cpus=1 under taskset:")
    print_stage(stage)
    print(f"\n3. The global step at {global_step['docs']:,} documents (synthetic signature files, the real "
          "partition_task and decide):")
    print_global(global_step)
    print(f"\n4. Plan for {report['plan']['docs']:,} documents:")
    for line in plan_lines(report["plan"], cfg):
        print(f"  - {line}")
    print("\nGoals:")
    for goal in report["goals"]:
        print(f"  [{'met' if goal['met'] else 'NOT met'}] {goal['goal']}: {goal['measured']}")


def run_bench(args: argparse.Namespace, cfg: KilnConfig) -> dict:
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
        global_step = measure_global(cfg, args.synthetic_docs, args.shard_docs, args.core, work / "synthetic")
    report = {
        "input": {"demo_records": args.docs, "seed": args.seed, "docs": len(texts), "total_bytes": total_bytes,
                  "mean_doc_bytes": total_bytes / len(texts)},
        "core": args.core, "kernels": kernels, "stage": stage, "global": global_step,
        "plan": plan_billion(cfg, stage, kernels, global_step), "goals": goals(kernels, stage),
    }
    report["plan"]["lines"] = plan_lines(report["plan"], cfg)
    return report


def main() -> None:
    args = parse_args()
    cfg = load_config()
    run_driver(lambda: run_bench(args, cfg), lambda report: print_report(report, cfg), args.out, "dedup.json",
               "bench/dedup.py: a measured process failed")


if __name__ == "__main__":
    main()
