"""Worker of bench/decontaminate.py: Kiln's decontamination step on one core.

    decontaminate_kiln.py ITEMS_DIR (--docs N | --texts FILE) RESULT --core N

Builds the index of the evaluation sets in ITEMS_DIR (timed, with the memory it adds), then scans documents in batches
of --batch as the dedup stage's units do: --docs N demo documents generated here (a copy of an item planted in every
--plant-every-th; generating is not timed), or the texts of FILE. Writes seconds, documents, bytes, the documents
matched and which of them were planted, and the peak RSS.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import pyarrow as pa
from measure import read_texts, status_bytes, worker_args, write_result

from common.eval_sets import read_eval_sets
from demo.content_docs import clean_document
from stages.dedup.config import DecontaminateConfig
from stages.dedup.decontaminate import ContaminationIndex, decontaminate

CATEGORIES = ("academic", "tech_docs", "encyclopedia", "news", "literature", "dialogue")


def planted_copy(rng: random.Random, text: str, item_question: str) -> str:
    """``text`` with an item's question as a paragraph of its own."""
    paragraphs = text.split("\n\n")
    at = rng.randint(1, len(paragraphs))
    return "\n\n".join([*paragraphs[:at], item_question, *paragraphs[at:]])


def generated_batches(docs: int, batch: int, seed: int, plant_every: int, questions: list[str],
                      langs: tuple[str, ...] = ("en", "zh")):
    """Batches of demo documents in ``langs`` (texts, planted flags); every ``plant_every``-th holds an item's
    question."""
    rng = random.Random(seed)
    made = 0
    while made < docs:
        texts, planted = [], []
        for index in range(made, min(made + batch, docs)):
            text = clean_document(rng, rng.choice(CATEGORIES), rng.choice(langs), "wire_like")
            plant = index % plant_every == plant_every - 1
            texts.append(planted_copy(rng, text, rng.choice(questions)) if plant else text)
            planted.append(plant)
        made += len(texts)
        yield texts, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("items", type=Path)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--docs", type=int)
    source.add_argument("--texts", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plant-every", type=int, default=1000)
    args = worker_args(parser)
    cfg = DecontaminateConfig()
    items, files = read_eval_sets([args.items])
    ContaminationIndex.build(items[:1], files, cfg).scan(["warm-up"])  # imports and compiled code, not the index
    before = status_bytes("VmRSS")
    start = time.perf_counter()
    index = ContaminationIndex.build(items, files, cfg)
    build_seconds = time.perf_counter() - start
    index_mb = (status_bytes("VmRSS") - before) / 2**20
    questions = [item.question for item in items]
    if args.texts:
        given = read_texts(args.texts)
        batches = ((given[i:i + args.batch], [False] * len(given[i:i + args.batch]))
                   for i in range(0, len(given), args.batch))
    else:
        batches = generated_batches(args.docs, args.batch, args.seed, args.plant_every, questions)
    seconds = 0.0
    docs = chars = planted_found = planted_total = 0
    matched: list[int] = []
    for texts, planted in batches:
        table = pa.table({"doc_id": pa.array(range(docs, docs + len(texts)), pa.int64()),
                          "source_id": pa.array([str(i) for i in range(len(texts))]),
                          "text": pa.array(texts, pa.large_string())})
        start = time.perf_counter()
        done = decontaminate(table, index, cfg)
        seconds += time.perf_counter() - start
        removed = set(done.removed.column("doc_id").to_pylist())
        planted_total += sum(planted)
        planted_found += sum(1 for i, p in enumerate(planted) if p and docs + i in removed)
        matched += sorted(removed)
        docs += len(texts)
        chars += sum(len(t.encode("utf-8")) for t in texts)
    write_result(args.result, {"seconds": seconds, "docs": docs, "bytes": chars, "matched": len(matched),
                               "planted": planted_total, "planted_found": planted_found, "items": len(items),
                               "index_build_seconds": build_seconds, "index_mb": index_mb,
                               "common_ngrams": index.common_ngrams, "skipped": sum(index.skipped.values()),
                               "matched_ids": matched if args.texts else []})


if __name__ == "__main__":
    main()
