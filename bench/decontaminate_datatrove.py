"""Worker of bench/decontaminate.py, run in the datatrove environment: datatrove's n-gram decontamination on one core.

    decontaminate_datatrove.py ITEMS_JSON TEXTS RESULT --core N

Indexes the items (question and gold answer) with NGramsDecontIndexer's own hashing (the query's n-grams included,
as Kiln matches questions; the indexer's step itself needs lighteval and its task registry, so its compute_hashes is
called on an object holding what it reads), writes the hashes where NGramsDecontFilter reads them, then times the
filter over the texts (English: datatrove's word tokenizers read Chinese without spaces as one word).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from datatrove.data import Document
from datatrove.pipeline.decont.n_grams import NGramsDecontConfig, NGramsDecontFilter, NGramsDecontIndexer
from datatrove.utils.hashing import create_hash_func
from datatrove.utils.typeshelper import Languages
from datatrove.utils.word_tokenizers import load_word_tokenizer
from measure import read_texts, worker_args, write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("items", type=Path)
    parser.add_argument("texts", type=Path)
    parser.add_argument("result", type=Path)
    parser.add_argument("--ngram", type=int, default=13)
    args = worker_args(parser)
    config = NGramsDecontConfig(n_grams=args.ngram, find_query_ngrams=True)
    items = json.loads(args.items.read_text(encoding="utf-8"))
    texts = read_texts(args.texts)
    with tempfile.TemporaryDirectory() as index_dir:
        indexer = SimpleNamespace(config=config, tokenizer=load_word_tokenizer(Languages.english),
                                  hash_func=create_hash_func(config.hash_config))
        start = time.perf_counter()
        hashes = {h for question, answer in items
                  for h in NGramsDecontIndexer.compute_hashes(indexer, answer, question)}
        np.array(sorted(hashes), dtype=config.hash_config.np_descr).tofile(Path(index_dir) / "bench.index.hashes")
        build_seconds = time.perf_counter() - start
        decont = NGramsDecontFilter(index_dir, config=config)
        decont.load_index_hashes()
        start = time.perf_counter()
        matched = [i for i, text in enumerate(texts) if decont.filter(Document(text=text, id=str(i))) is not True]
        seconds = time.perf_counter() - start
    write_result(args.result, {"seconds": seconds, "docs": len(texts), "bytes": sum(len(t.encode()) for t in texts),
                               "matched": len(matched), "matched_ids": matched, "index_build_seconds": build_seconds,
                               "hashes": len(hashes)})


if __name__ == "__main__":
    main()
