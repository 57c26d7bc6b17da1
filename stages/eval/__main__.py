"""`python -m stages.eval`: perplexity, multiple-choice accuracy and sample generations of a trained checkpoint."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.errors import KilnError
from common.files import file_sha256
from common.questions import read_question_set
from common.tokens import META_NAME, TokenDataset, TokenFileError, read_meta
from stages.eval.codec import Codec, load_codec
from stages.eval.errors import EvalError
from stages.eval.summary import render

# Modules that import MindSpore are imported in _run, after the arguments parse: --help stays instant.
if TYPE_CHECKING:
    from stages.eval.multiple_choice import FileResult, MultipleChoiceResult

SAMPLES_DIR = Path(__file__).resolve().parent / "samples"
DEFAULT_PROMPTS = ("The history of", "中国的首都是")

DESCRIPTION = """Evaluate the model in RUN_DIR/checkpoints (latest/, or best/ when latest is unusable; weights only).

- perplexity: mean next-token loss over the windows of --tokens, in order (default: the
  validation.bin beside the training tokens recorded in the checkpoint);
- multiple choice: accuracy on CSV files in the CMMLU (,Question,A,B,C,D,Answer) or C-Eval
  (id,question,A,B,C,D,answer) layout. Each option's text is scored by its log-likelihood as the
  answer to a zero-shot prompt; acc_norm divides that by the option's length in characters. The
  default is the small sample set shipped in stages/eval/samples/; pass the real CMMLU or C-Eval
  files (one CSV per subject) to --mc;
- generations: continuations of each --prompt, greedy by default (--temperature > 0 samples from
  the --top-k most likely tokens with a numpy RNG seeded by --seed).

--mc or --prompt with no values skips that part. The tokenizer defaults to the one meta.json
names beside the token files. A checkpoint written rank by rank under a model/pipeline-parallel
layout is merged into its merged/model.safetensors first (once; MindSpore's unified_safetensors).
The device is chosen as the trainer chooses it (--device-target auto: Ascend when usable here);
the line saying which goes to stderr."""


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stages.eval", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, required=True, metavar="DIR",
                        help="RUN_DIR/checkpoints (holding latest/ and best/), or RUN_DIR")
    parser.add_argument("--tokens", type=Path, default=None, metavar="BIN",
                        help="packed split for perplexity (default: validation.bin beside the training tokens)")
    parser.add_argument("--seq-len", type=_positive, default=None,
                        help="perplexity window length (default: meta.json's, capped at the model's max_seq_len)")
    parser.add_argument("--batch-size", type=_positive, default=8, help="windows per perplexity batch (default 8)")
    parser.add_argument("--max-batches", type=_positive, default=None,
                        help="read at most this many batches (default all)")
    parser.add_argument("--mc", type=Path, nargs="*", default=None, metavar="CSV",
                        help="multiple-choice CSV files (default: the shipped samples)")
    parser.add_argument("--prompt", nargs="*", default=None, metavar="TEXT",
                        help=f"prompts to continue (default: {' / '.join(DEFAULT_PROMPTS)})")
    parser.add_argument("--max-new-tokens", type=_positive, default=48, help="tokens per generation (default 48)")
    parser.add_argument("--temperature", type=float, default=0.0, help="0 is greedy (default 0)")
    parser.add_argument("--top-k", type=int, default=0, help="sample from the k most likely tokens (default 0: all)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--tokenizer", type=Path, default=None, metavar="JSON",
                        help="HF tokenizer.json (default: the one meta.json names beside the token files)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--threads", type=_positive, default=2, help="MindSpore CPU operator threads (default 2)")
    parser.add_argument("--device-target", choices=("auto", "cpu", "ascend"), default="auto",
                        help="back end, chosen as the trainer chooses it (default auto: Ascend when usable here)")
    parser.add_argument("--device-id", type=int, default=None, help="NPU to use (default: DEVICE_ID, else 0)")
    return parser


def _training_tokens(state: dict[str, Any]) -> Path | None:
    """The training split the checkpoint records."""
    return Path(state["tokens"]) if state.get("tokens") else None


def _open_tokens(args: argparse.Namespace, state: dict[str, Any], max_seq_len: int) -> TokenDataset | None:
    """--tokens, or validation.bin beside the training tokens when it exists; windows fit the model's context."""
    path = args.tokens
    training = _training_tokens(state)
    if path is None and training is not None and (training.parent / "validation.bin").is_file():
        path = training.parent / "validation.bin"
    if path is None:
        return None
    tokens = TokenDataset(path, seq_len=args.seq_len)
    if args.seq_len is None and tokens.seq_len > max_seq_len:
        tokens = TokenDataset(path, seq_len=max_seq_len)
    return tokens


def _tokenizer_path(args: argparse.Namespace, token_file: Path | None) -> Path:
    """--tokenizer, or the tokenizer file meta.json names beside ``token_file``."""
    if args.tokenizer is not None:
        return args.tokenizer
    if token_file is None:
        raise EvalError("no tokenizer: the checkpoint records no token file; pass --tokenizer or --tokens")
    meta_path = token_file.parent / META_NAME
    try:
        meta = read_meta(meta_path)
    except TokenFileError as err:
        raise EvalError(f"{err}; pass --tokenizer") from None
    entry = meta.get("tokenizer")
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        raise EvalError(f"{meta_path}: names no tokenizer file; pass --tokenizer")
    return meta_path.parent / entry["file"]


def _load_codec(path: Path, vocab_size: int) -> Codec:
    """The tokenizer at ``path``, refused when it produces ids the model has no embedding for."""
    codec = load_codec(path)
    if codec.vocab_size > vocab_size:
        raise EvalError(f"{path}: ids up to {codec.vocab_size - 1} do not fit the model's vocabulary of {vocab_size}")
    return codec


def _not_decontaminated(files: list[Path], training: Path | None) -> list[str]:
    """A warning for each benchmark file the training text was not decontaminated against: its sha256 is not among
    the evaluation files the meta.json beside the training tokens names (the evaluation still runs)."""
    meta_path = training.parent / META_NAME if training is not None else None
    try:
        meta = read_meta(meta_path) if meta_path is not None else {}
    except TokenFileError:
        meta = {}
    files_checked = (meta.get("decontamination") or {}).get("files", [])
    checked = {f["sha256"] for f in files_checked}
    if meta_path is None:
        record = "the checkpoint names no training tokens to check"
    elif not files_checked:
        record = f"{meta_path} records no decontamination"
    else:
        record = f"its sha256 is not among the {len(files_checked)} evaluation files {meta_path} names"
    return [f"the training data was not decontaminated against {path} ({record}): its questions may be in the "
            "training text and its accuracy overstated" for path in files if file_sha256(path) not in checked]


def _mc_section(result: MultipleChoiceResult) -> dict[str, Any]:
    def counts(c: FileResult | MultipleChoiceResult) -> dict[str, Any]:
        return {"questions": c.questions, "correct": c.correct, "accuracy": c.accuracy,
                "correct_norm": c.correct_norm, "accuracy_norm": c.accuracy_norm}

    return {"scoring": "log-likelihood of the option text; acc_norm per character",
            "files": [{"file": str(f.path), **counts(f)} for f in result.files], "overall": counts(result)}


def _run(args: argparse.Namespace) -> dict[str, Any]:
    """Check every input, then load the model and evaluate it; return the report."""
    from stages.eval.checkpoint_model import checkpoint_root, load_model, model_config, read_state
    from stages.eval.forward import forward_of
    from stages.eval.generate import check_sampling, generate
    from stages.eval.multiple_choice import evaluate_multiple_choice
    from stages.train.device import resolve_device, setup_device
    from stages.train.model import count_parameters
    from stages.train.validation import validation_loss

    root = checkpoint_root(args.checkpoint)
    state = read_state(root)
    cfg = model_config(state, root)
    tokens = _open_tokens(args, state, cfg.max_seq_len)
    question_sets = [read_question_set(path) for path in
                     (sorted(SAMPLES_DIR.glob("*.csv")) if args.mc is None else args.mc)]
    prompts = list(DEFAULT_PROMPTS) if args.prompt is None else args.prompt
    check_sampling(args.max_new_tokens, args.temperature, args.top_k)
    codec = None
    if question_sets or prompts:
        token_file = tokens.bin_path if tokens is not None else _training_tokens(state)
        codec = _load_codec(_tokenizer_path(args, token_file), cfg.vocab_size)

    unchecked = _not_decontaminated([q.path for q in question_sets], _training_tokens(state))
    for warning in unchecked:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    device = resolve_device(args.device_target, args.device_id, setting="--device-target")
    print(device.describe(args.threads), file=sys.stderr, flush=True)
    setup_device(device, args.threads)
    model, loaded = load_model(root, state)
    forward = forward_of(model)
    report: dict[str, Any] = {
        "checkpoint": str(root), "step": loaded.get("step"), "parameters": count_parameters(model),
        "device": device.target,
        "perplexity": None, "multiple_choice": None, "generations": [],
        "sampling": {"max_new_tokens": args.max_new_tokens, "temperature": args.temperature, "top_k": args.top_k,
                     "seed": args.seed},
        "notes": unchecked + ([] if tokens is not None else
                              ["perplexity skipped: no validation.bin beside the training tokens; pass --tokens"]),
    }
    if tokens is not None:
        result = validation_loss(model, tokens, args.batch_size, args.max_batches)
        report["perplexity"] = {"tokens_file": str(tokens.bin_path), "seq_len": tokens.seq_len, "loss": result.loss,
                                "perplexity": result.perplexity, "tokens": result.tokens, "windows": result.windows}
    if question_sets:
        report["multiple_choice"] = _mc_section(evaluate_multiple_choice(forward, codec, question_sets))
    for prompt in prompts:
        generation = generate(forward, codec.encode_prompt(prompt), max_new_tokens=args.max_new_tokens,
                              eos_id=codec.eos_id, temperature=args.temperature, top_k=args.top_k, seed=args.seed)
        report["generations"].append({"prompt": prompt, "text": codec.decode(generation.tokens),
                                      "new_tokens": len(generation.tokens),
                                      "stopped_at_eos": generation.stopped_at_eos})
    return report


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        report = _run(args)
    except KilnError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
