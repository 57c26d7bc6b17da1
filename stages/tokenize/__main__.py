"""`python -m stages.tokenize`: train a byte-level BPE, encode the mix output and pack the token streams."""

import sys

from common.stage_cli import run_from_args, stage_parser
from stages.tokenize.stage import STAGE

DESCRIPTION = """Tokenize <data_dir>/mix into <data_dir>/tokenize.

Trains a byte-level BPE of tokenize.vocab_size ids (HF tokenizers; <|endoftext|> and <|pad|>
are ids 0 and 1) on the documents of the training split with the lowest seeded hash, up to
tokenize.sample_bytes, or uses tokenize.tokenizer_path; either way it is saved as
tokenizer.json and refused if an id does not fit uint16. Every mix shard is encoded (tiktoken
built from the same vocabulary when it reproduces the HF ids, see tokenize.encoder), each
document ending with <|endoftext|>. Then each split is packed: documents in a seeded order,
each as many times as its `repeat`, into train.bin / validation.bin (flat uint16), .idx
(int64 document offsets) and meta.json, read by common.tokens.TokenDataset."""


def main(argv: list[str] | None = None) -> int:
    return run_from_args(STAGE, stage_parser("tokenize", DESCRIPTION).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
