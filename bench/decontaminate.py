"""Benchmark decontamination: its speed against datatrove's n-gram filter, its time and memory from 100,000 to
1,000,000 documents against a CMMLU-sized evaluation set, and what it adds to `make data`.

Run from anywhere with Kiln's environment:  .venv/bin/python bench/decontaminate.py [--sizes 100000,1000000]

1. Writes a seeded evaluation set of --items items (half Chinese, half English, a CMMLU-layout CSV each; about one in
   twenty opening with shared exam phrasing) and one a tenth its size.
2. Builds the index of each in its own process: seconds and the memory the index adds (it follows the set).
3. Scans --sizes generated demo documents in batches of 4,096 in its own process per size, pinned to one core, an
   item's question planted in every 1,000th: seconds (generating not counted), docs/s, peak RSS, planted copies found,
   other documents matched.
4. On --reference-docs English demo documents (items planted the same way), times Kiln's step and datatrove 0.10.1's
   NGramsDecontFilter (13-grams, the question's n-grams indexed too) on the same texts and core: the ratio.
5. Runs `kiln run --demo` (what `make data` runs) --pipeline-runs times with decontamination and without, in turn:
   the median wall times and their ratio.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from decontaminate_kiln import generated_batches
from measure import (
    BENCH_DIR,
    REPO_DIR,
    WorkerError,
    add_core_argument,
    check_core,
    log,
    reference_python,
    run_driver,
    run_worker,
    tail,
    throughput,
)

from demo.content_docs import LANGUAGES

REF_VENV = BENCH_DIR / ".venv-datatrove"
REF_REQUIREMENTS = BENCH_DIR / "requirements-datatrove.txt"
GOAL_TIME_RATIO = 11.0  # 10 times the documents: at most 1.1 times 10 times the seconds
GOAL_MEMORY_RATIO = 1.2
GOAL_PIPELINE_SHARE = 0.10
ZH_PHRASING = ("根据我国现行法律的规定，下列说法正确的是", "关于下列历史事件的表述，不正确的是")
EN_PHRASING = ("According to the passage, which of the following statements is true about",
               "Which of the following best describes the main reason for")


def _question(rng: random.Random, lang: str) -> tuple[str, list[str]]:
    pools = LANGUAGES[lang].pools
    words = [w for key in ("n", "adj", "v", "topic", "field") if key in pools for w in pools[key]] if lang == "zh" \
        else [w for key in ("noun", "adj", "verb", "topic", "field") for w in pools[key]]
    joiner = "" if lang == "zh" else " "
    body = joiner.join(rng.choice(words) for _ in range(rng.randint(6, 14) if lang == "zh" else rng.randint(8, 18)))
    if rng.random() < 0.05:
        body = f"{rng.choice(ZH_PHRASING if lang == 'zh' else EN_PHRASING)}{joiner}{body}"
    question = body + ("？" if lang == "zh" else "?")
    return question, [joiner.join(rng.choice(words) for _ in range(rng.randint(1, 3))) for _ in range(4)]


def write_items(folder: Path, count: int, seed: int) -> Path:
    """A CMMLU-layout CSV per language with ``count`` items in all."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for lang in ("zh", "en"):
        with open(folder / f"{lang}.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["", "Question", "A", "B", "C", "D", "Answer"])
            for i in range(count // 2):
                question, options = _question(rng, lang)
                writer.writerow([i, question, *options, rng.choice("ABCD")])
    return folder


def english_items(folder: Path) -> list[tuple[str, str]]:
    """(question, gold answer) of the English file, for the datatrove worker."""
    with open(folder / "en.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return [(row[1], row[2 + "ABCD".index(row[6])]) for row in rows]


def english_texts(path: Path, docs: int, questions: list[str]) -> None:
    """``docs`` generated documents, English only, an English question planted in every 1,000th."""
    with path.open("w", encoding="utf-8") as out:
        for texts, _ in generated_batches(docs, 4096, 7, 1000, questions, langs=("en",)):
            out.writelines(json.dumps(text, ensure_ascii=False) + "\n" for text in texts)


def _pipeline_seconds(work: Path, enabled: bool, run: int) -> float:
    data = work / f"run-{'on' if enabled else 'off'}-{run}"
    command = [sys.executable, "-m", "kiln", "run", "--demo", "--data-dir", str(data),
               "--set", f"decontaminate.enabled={'true' if enabled else 'false'}"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_DIR)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise WorkerError(f"kiln run failed (exit {done.returncode}):\n{tail(done.stdout + done.stderr)}")
    subprocess.run(["rm", "-rf", str(data)], check=True)
    return seconds


def measure(args) -> dict:
    report: dict = {"items": args.items, "sizes": {}, "index": {}}
    with tempfile.TemporaryDirectory(prefix="kiln-decont-") as tmp:
        work = Path(tmp)
        full = write_items(work / "items", args.items, seed=11)
        tenth = write_items(work / "items-tenth", args.items // 10, seed=12)
        for name, folder in (("tenth", tenth), ("full", full)):
            log(f"index of {name} ({folder})")
            result, _ = run_worker("decontaminate_kiln.py", [str(folder), "--docs", "1"], work / f"index-{name}.json",
                                   core=args.core)
            report["index"][name] = {k: result[k] for k in ("items", "index_build_seconds", "index_mb", "peak_rss_mb",
                                                             "common_ngrams", "skipped")}
        for size in args.sizes:
            log(f"scanning {size:,} generated documents against {args.items:,} items")
            result, _ = run_worker("decontaminate_kiln.py", [str(full), "--docs", str(size)], work / f"scan-{size}.json",
                                   core=args.core)
            report["sizes"][str(size)] = {**{k: result[k] for k in ("seconds", "docs", "bytes", "matched", "planted",
                                                                     "planted_found", "peak_rss_mb")},
                                          **throughput(result["docs"], result["bytes"], result["seconds"])}
        texts = work / "english.jsonl"
        english_texts(texts, args.reference_docs, [q for q, _ in english_items(full)])
        (work / "english-items.json").write_text(json.dumps(english_items(full), ensure_ascii=False))
        kiln, _ = run_worker("decontaminate_kiln.py", [str(full / "en.csv"), "--texts", str(texts)],
                             work / "ref-kiln.json", core=args.core)
        planted = set(range(999, args.reference_docs, 1000))  # generated_batches plants every 1,000th
        report["reference"] = {"planted": len(planted), "kiln": {
            **{k: kiln[k] for k in ("seconds", "docs", "matched")},
            "planted_found": len(planted & set(kiln["matched_ids"]))}}
        python, why = reference_python(REF_VENV, ["-r", str(REF_REQUIREMENTS)], REF_REQUIREMENTS.read_bytes(),
                                       "from bench/requirements-datatrove.txt")
        if python is None:
            report["reference"]["datatrove"] = {"error": why}
        else:
            ref, _ = run_worker("decontaminate_datatrove.py", [str(work / "english-items.json"), str(texts)],
                                work / "ref-datatrove.json", python=python, core=args.core)
            report["reference"]["datatrove"] = {**{k: ref[k] for k in ("seconds", "docs", "matched", "hashes")},
                                                "planted_found": len(planted & set(ref["matched_ids"]))}
        on, off = [], []
        for run in range(args.pipeline_runs):
            log(f"kiln run --demo with and without decontamination, run {run + 1} of {args.pipeline_runs}")
            on.append(_pipeline_seconds(work, True, run))
            off.append(_pipeline_seconds(work, False, run))
        if on:
            report["pipeline"] = {"with": on, "without": off, "ratio": statistics.median(on) / statistics.median(off)}
    return report


def show(report: dict) -> None:
    print(f"Decontamination against {report['items']:,} generated items (CMMLU-sized), one core")
    for name, row in report["index"].items():
        print(f"  index of {row['items']:,} items ({name}): {row['index_build_seconds']:.1f} s, {row['index_mb']:.1f} MB "
              f"({row['common_ngrams']:,} n-grams ignored as phrasing, {row['skipped']} items too short)")
    print(f"  {'documents':>10}  {'seconds':>8}  {'docs/s':>8}  {'MB/s':>6}  {'peak RSS':>9}  planted found  other matched")
    for size, row in report["sizes"].items():
        print(f"  {int(size):>10,}  {row['seconds']:>8.1f}  {row['docs_per_s']:>8,.0f}  {row['mb_per_s']:>6.1f}  "
              f"{row['peak_rss_mb']:>6.0f} MB  {row['planted_found']:>6,}/{row['planted']:<6,}  "
              f"{row['matched'] - row['planted_found']:>6,}")
    sizes = list(report["sizes"].values())
    if len(sizes) >= 2:
        time_ratio = sizes[-1]["seconds"] / sizes[0]["seconds"]
        memory_ratio = sizes[-1]["peak_rss_mb"] / sizes[0]["peak_rss_mb"]
        docs_ratio = sizes[-1]["docs"] / sizes[0]["docs"]
        print(f"  time ratio {time_ratio:.2f} for {docs_ratio:.0f}x the documents (goal <= {GOAL_TIME_RATIO * docs_ratio / 10:.1f}): "
              f"{'met' if time_ratio <= GOAL_TIME_RATIO * docs_ratio / 10 else 'NOT met'}")
        print(f"  peak memory ratio {memory_ratio:.2f} (goal <= {GOAL_MEMORY_RATIO}): "
              f"{'met' if memory_ratio <= GOAL_MEMORY_RATIO else 'NOT met'}")
    ref = report["reference"]
    kiln = ref["kiln"]
    print(f"  reference, {kiln['docs']:,} English documents, {ref['planted']} with a planted question: Kiln "
          f"{kiln['docs'] / kiln['seconds']:,.0f} docs/s, found {kiln['planted_found']} (+{kiln['matched'] - kiln['planted_found']} "
          "other)", end="")
    if "error" in ref["datatrove"]:
        print(f"; datatrove not run: {ref['datatrove']['error']}")
    else:
        dt = ref["datatrove"]
        print(f"; datatrove NGramsDecontFilter {dt['docs'] / dt['seconds']:,.0f} docs/s, found {dt['planted_found']} "
              f"(+{dt['matched'] - dt['planted_found']} other; questions under 13 words give it no n-gram); "
              f"Kiln {dt['seconds'] / kiln['seconds']:.1f}x faster")
    if "pipeline" in report:
        pipe = report["pipeline"]
        print(f"  kiln run --demo: median {statistics.median(pipe['with']):.1f} s with, "
              f"{statistics.median(pipe['without']):.1f} s without decontamination: ratio {pipe['ratio']:.3f} "
              f"(goal <= {1 + GOAL_PIPELINE_SHARE:.2f}): {'met' if pipe['ratio'] <= 1 + GOAL_PIPELINE_SHARE else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[100_000, 1_000_000],
                        help="generated documents to scan, comma-separated (default 100000,1000000)")
    parser.add_argument("--items", type=int, default=12_000, help="items in the evaluation set (default 12000)")
    parser.add_argument("--reference-docs", type=int, default=20_000,
                        help="English documents both Kiln and datatrove scan (default 20000)")
    parser.add_argument("--pipeline-runs", type=int, default=3,
                        help="kiln run --demo runs with and without decontamination (default 3; 0 skips)")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results", help="folder for decontaminate.json")
    add_core_argument(parser)
    args = parser.parse_args()
    check_core(parser, args.core)
    run_driver(lambda: measure(args), show, args.out, "decontaminate.json", "decontamination bench failed")


if __name__ == "__main__":
    main()
