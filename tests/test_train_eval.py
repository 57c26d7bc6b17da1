"""The evaluator: validation perplexity, multiple-choice scoring of CMMLU/C-Eval CSVs, sampling, and its CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from common.files import file_sha256
from common.questions import Question, QuestionFileError, QuestionSet, read_question_set
from common.tokenizer import special_ids
from common.tokens import TokenDataset
from stages.eval.__main__ import main
from stages.eval.codec import Codec
from stages.eval.errors import EvalError
from stages.eval.forward import CompiledForward, forward_of
from stages.eval.generate import Generation, generate, next_token
from stages.eval.multiple_choice import (
    continuation_logliks,
    evaluate_multiple_choice,
    option_logliks,
    predictions,
    prompt_and_answers,
)
from stages.tokenize.bpe import train_tokenizer
from stages.train.checkpoint import save_checkpoint
from stages.train.config import ModelConfig, OptimConfig
from stages.train.model import GPT
from stages.train.optim import build_optimizer
from stages.train.step import make_train_step, setup_cpu
from stages.train.validation import SplitMismatchError, validation_loss

setup_cpu(1)

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted((REPO / "stages" / "eval" / "samples").glob("*.csv"))
HEADER = ",Question,A,B,C,D,Answer\n"
TINY = ModelConfig(vocab_size=300, d_model=16, n_layers=1, n_heads=2, max_seq_len=32)


class Bigram(nn.Cell):
    """Logits of the next token from a fixed table indexed by the current token: likelihoods a test controls."""

    def __init__(self, table: np.ndarray):
        super().__init__()
        self.table = Tensor(table, ms.float32)

    def construct(self, tokens: Tensor) -> Tensor:
        return ops.gather(self.table, tokens, 0)


def chain_table(vocab: int, chain: list[int], strength: float = 12.0) -> np.ndarray:
    """A bigram table under which each token of ``chain`` is by far the likeliest successor of the one before."""
    table = np.zeros((vocab, vocab), np.float32)
    for current, following in zip(chain, chain[1:], strict=False):
        table[current, following] = strength
    return table


def log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits.astype(np.float64)
    top = logits.max(-1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))


def reference_nll(model: nn.Cell, inputs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-token negative log-likelihood (batch, seq) from the model's logits, in float64."""
    log_probs = log_softmax(model(Tensor(inputs)).asnumpy())
    return -np.take_along_axis(log_probs, labels[..., None].astype(np.int64), -1)[..., 0]


def reference_rows(codec: Codec, question: Question, max_seq_len: int) -> tuple[list[list[int]], list[int]]:
    """Each option's scored row, EOS + prompt ids + option ids cut to its last max_seq_len + 1 ids, and how many of
    its last ids are the option's: the documented scoring, rebuilt here without stages.eval's code."""
    if any("\u4e00" <= ch <= "\u9fff" for ch in question.question):  # a Chinese question
        prompt = f"以下是单项选择题，请直接给出正确答案。\n\n{question.question}\n答案："
        texts = list(question.options)
    else:
        prompt = ("The following is a multiple choice question. Give the correct answer directly.\n\n"
                  f"{question.question}\nAnswer:")
        texts = [f" {option}" for option in question.options]
    context = [codec.eos_id, *codec.tokenizer.encode(prompt, add_special_tokens=False).ids]
    rows, scored = [], []
    for text in texts:
        option = codec.tokenizer.encode(text, add_special_tokens=False).ids
        row = (context + option)[-(max_seq_len + 1):]
        rows.append(row)
        scored.append(min(len(option), len(row) - 1))
    return rows, scored


def reference_logliks(model: nn.Cell, codec: Codec, questions: list[Question], max_seq_len: int) -> np.ndarray:
    """(questions, 4) option log-likelihoods from one forward pass of ``model`` over every zero-padded row, summed
    in float64 over each option's tokens with a numpy log-softmax."""
    rows, scored = [], []
    for question in questions:
        question_rows, question_scored = reference_rows(codec, question, max_seq_len)
        rows += question_rows
        scored += question_scored
    inputs = np.zeros((len(rows), max_seq_len), np.int32)
    for i, row in enumerate(rows):
        inputs[i, :len(row) - 1] = row[:-1]
    log_probs = log_softmax(model(Tensor(inputs)).asnumpy())
    values = [sum(log_probs[i, t - 1, row[t]] for t in range(len(row) - n, len(row)))
              for i, (row, n) in enumerate(zip(rows, scored, strict=True))]
    return np.array(values).reshape(len(questions), 4)


def reference_counts(logliks: np.ndarray, questions: list[Question]) -> tuple[int, int]:
    """(questions whose highest-scoring option is the answer, the same per character of the stripped option)."""
    lengths = np.array([[len(option.strip()) for option in q.options] for q in questions], np.float64)
    answers = np.array([q.answer for q in questions])
    return int((logliks.argmax(1) == answers).sum()), int(((logliks / lengths).argmax(1) == answers).sum())


def runner_up_gap(scores: np.ndarray) -> float:
    """The smallest margin between a row's best and second-best score: how far float32 noise is from a tie."""
    ordered = np.sort(scores, axis=1)
    return float((ordered[:, -1] - ordered[:, -2]).min())


def write_split(folder: Path, name: str, stream: np.ndarray, seq_len: int) -> Path:
    """A packed split as the tokenize stage writes it, with meta.json naming tokenizer.json."""
    folder.mkdir(parents=True, exist_ok=True)
    stream.astype(np.uint16).tofile(folder / f"{name}.bin")
    np.array([0, stream.size], np.int64).tofile(folder / f"{name}.idx")
    meta = {"format": "kiln-tokens/1", "dtype": "uint16", "vocab_size": TINY.vocab_size, "eos_id": 0, "pad_id": 1,
            "seq_len": seq_len, "tokenizer": {"file": "tokenizer.json"},
            "splits": {name: {"bin": f"{name}.bin", "idx": f"{name}.idx", "tokens": int(stream.size), "documents": 1}}}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder / f"{name}.bin"


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def codec() -> Codec:
    texts = [path.read_text(encoding="utf-8") for path in SAMPLES] * 3
    tokenizer = train_tokenizer(texts, TINY.vocab_size)
    return Codec(tokenizer, special_ids(tokenizer)[0])


@pytest.fixture(scope="module")
def model() -> GPT:
    return GPT(TINY)


def snapshot(cell: nn.Cell) -> dict[str, bytes]:
    return {name: p.asnumpy().tobytes() for name, p in cell.parameters_dict().items()}


# Perplexity


def test_validation_loss_matches_a_numpy_reference_whatever_the_batching(tmp_path: Path, model: GPT) -> None:
    stream = np.random.default_rng(0).integers(0, TINY.vocab_size, 5 * 8 + 1)
    tokens = TokenDataset(write_split(tmp_path, "validation", stream, seq_len=8))
    before = snapshot(model)

    result = validation_loss(model, tokens, batch_size=2)

    inputs, labels = tokens.batch(range(5))
    nll = reference_nll(model, inputs, labels)
    assert (result.windows, result.tokens) == (5, 40)
    assert result.loss == pytest.approx(nll.mean(), rel=1e-5)
    assert result.perplexity == pytest.approx(math.exp(result.loss), rel=1e-12)
    for batch_size in (5, 8):
        assert validation_loss(model, tokens, batch_size).loss == pytest.approx(result.loss, rel=1e-6)
    partial = validation_loss(model, tokens, batch_size=2, max_batches=1)
    assert (partial.windows, partial.tokens) == (2, 16)
    assert partial.loss == pytest.approx(nll[:2].mean(), rel=1e-5)
    assert snapshot(model) == before


def test_validation_loss_follows_the_weights_as_training_updates_them(tmp_path: Path) -> None:
    net = GPT(TINY)
    tokens = TokenDataset(write_split(tmp_path, "validation", np.arange(4 * 8 + 1) % 5, seq_len=8))
    before = validation_loss(net, tokens, batch_size=4)
    step = make_train_step(net, build_optimizer(net, OptimConfig(lr=1e-2, warmup_ratio=0.0), 10), clip_norm=1.0)
    inputs, labels = tokens.batch(range(4))
    for _ in range(3):
        step(Tensor(inputs), Tensor(labels))
    after = validation_loss(net, tokens, batch_size=4)
    nll = reference_nll(net, inputs, labels)
    assert after.loss < before.loss
    assert after.loss == pytest.approx(nll.mean(), rel=1e-5)


def test_validation_loss_refuses_windows_longer_than_the_model(tmp_path: Path, model: GPT) -> None:
    tokens = TokenDataset(write_split(tmp_path, "validation", np.zeros(100), seq_len=64))
    with pytest.raises(SplitMismatchError, match="exceed the model's max_seq_len 32"):
        validation_loss(model, tokens, batch_size=2)


# Multiple choice


def test_sample_files_are_scored_like_an_independent_numpy_scorer(run_dir: tuple[Path, GPT, Path],
                                                                   codec: Codec) -> None:
    _, net, _ = run_dir
    sets = [read_question_set(path) for path in SAMPLES]
    result = evaluate_multiple_choice(forward_of(net), codec, sets)
    assert [f.path.name for f in result.files] == ["ceval_sample.csv", "cmmlu_sample.csv", "english_sample.csv"]
    assert [f.questions for f in result.files] == [6, 8, 6]
    assert result.questions == 20

    logliks = [reference_logliks(net, codec, list(s.questions), TINY.max_seq_len) for s in sets]
    lengths = [np.array([[len(o.strip()) for o in q.options] for q in s.questions]) for s in sets]
    # The seeded weights keep every question's best option clear of a float32 tie, with and without normalising.
    assert min(min(runner_up_gap(x), runner_up_gap(x / n)) for x, n in zip(logliks, lengths, strict=True)) > 1e-3
    expected = [reference_counts(x, list(s.questions)) for x, s in zip(logliks, sets, strict=True)]
    assert [(f.correct, f.correct_norm) for f in result.files] == expected
    assert (result.correct, result.correct_norm) == tuple(map(sum, zip(*expected, strict=True)))
    assert result.accuracy == sum(c for c, _ in expected) / 20
    assert result.accuracy_norm == sum(c for _, c in expected) / 20
    for f, (correct, correct_norm) in zip(result.files, expected, strict=True):
        assert (f.accuracy, f.accuracy_norm) == (correct / f.questions, correct_norm / f.questions)

    # Relabelled so that the model's choice is the answer, every question is right; relabelled to an option it
    # ranks neither first nor first per character, every question is wrong.
    def relabelled(pick) -> list[QuestionSet]:
        return [QuestionSet(s.path, tuple(replace(q, answer=int(pick(x[i], n[i]))) for i, q in enumerate(s.questions)))
                for s, x, n in zip(sets, logliks, lengths, strict=True)]

    best = evaluate_multiple_choice(forward_of(net), codec, relabelled(lambda x, n: x.argmax()))
    assert [f.correct for f in best.files] == [6, 8, 6]
    best_norm = evaluate_multiple_choice(forward_of(net), codec, relabelled(lambda x, n: (x / n).argmax()))
    assert [f.correct_norm for f in best_norm.files] == [6, 8, 6]
    neither = evaluate_multiple_choice(forward_of(net), codec, relabelled(
        lambda x, n: min({0, 1, 2, 3} - {x.argmax(), (x / n).argmax()})))
    assert (neither.correct, neither.correct_norm, neither.accuracy, neither.accuracy_norm) == (0, 0, 0.0, 0.0)


def test_the_option_the_model_prefers_is_chosen(tmp_path: Path, codec: Codec) -> None:
    path = write_csv(tmp_path / "colours.csv", HEADER + "0,Which colour is the sky?,green,red,blue,pink,C\n")
    question_set = read_question_set(path)
    prompt, answers = prompt_and_answers(question_set.questions[0])
    table = chain_table(TINY.vocab_size, [codec.encode_prompt(prompt)[-1], *codec.encode(answers[2])])
    forward = CompiledForward(Bigram(table), max_seq_len=64)

    right = evaluate_multiple_choice(forward, codec, [question_set])
    assert (right.correct, right.correct_norm, right.accuracy) == (1, 1, 1.0)
    relabelled = QuestionSet(path, (replace(question_set.questions[0], answer=1),))
    wrong = evaluate_multiple_choice(forward, codec, [relabelled])
    assert (wrong.correct, wrong.correct_norm, wrong.accuracy) == (0, 0, 0.0)


def test_length_normalisation_favours_the_better_score_per_character() -> None:
    assert predictions([-3.0, -4.0, -9.0, -9.5], ["no", " yes indeed", "x", "y"]) == (0, 1)


def test_loglikelihoods_equal_the_model_logits(model: GPT) -> None:
    forward = forward_of(model)
    context = [0, 5, 6]
    continuations = [[7], [8, 9], [10, 11, 12]]
    long_context = list(range(2, 42))
    rows = [context + c for c in continuations] + [(long_context + [7, 8])[-33:]]
    inputs = np.zeros((4, 32), np.int32)
    for i, row in enumerate(rows):
        inputs[i, :len(row) - 1] = row[:-1]
    log_probs = log_softmax(model(Tensor(inputs)).asnumpy())

    def reference(i: int, scored: int) -> float:
        row = rows[i]
        return sum(log_probs[i, t - 1, row[t]] for t in range(len(row) - scored, len(row)))

    expected = [reference(i, len(c)) for i, c in enumerate(continuations)]
    assert continuation_logliks(forward, context, continuations) == pytest.approx(expected, rel=1e-5)
    assert continuation_logliks(forward, long_context, [[7, 8]]) == pytest.approx([reference(3, 2)], rel=1e-5)


def test_option_logliks_equal_the_models_log_probs_of_the_option_tokens(model: GPT, codec: Codec) -> None:
    questions = [read_question_set(SAMPLES[2]).questions[0], read_question_set(SAMPLES[1]).questions[0]]
    for question in questions:  # English, then Chinese (another prompt, options without a leading space)
        logliks = option_logliks(forward_of(model), codec, question)
        expected = reference_logliks(model, codec, [question], TINY.max_seq_len)[0]
        assert logliks == pytest.approx(expected.tolist(), rel=1e-5, abs=1e-5)


def test_option_logliks_equal_a_bigram_tables_log_probs(tmp_path: Path, codec: Codec) -> None:
    """A model whose log-probabilities are known without running it: log_softmax(table)[previous, next]."""
    table = np.random.default_rng(3).normal(0, 2, (TINY.vocab_size, TINY.vocab_size)).astype(np.float32)
    forward = CompiledForward(Bigram(table), max_seq_len=64)
    log_probs = log_softmax(table)
    text = HEADER + "0,What is the largest planet in the Solar System?,Mars,Jupiter,Earth,Venus,B\n"
    question = read_question_set(write_csv(tmp_path / "planets.csv", text)).questions[0]
    rows, scored = reference_rows(codec, question, 64)
    expected = [sum(log_probs[row[t - 1], row[t]] for t in range(len(row) - n, len(row)))
                for row, n in zip(rows, scored, strict=True)]
    assert len({round(value, 3) for value in expected}) == 4  # the options' scores differ: the test can tell them apart
    assert option_logliks(forward, codec, question) == pytest.approx(expected, rel=1e-5)
    uniform = CompiledForward(Bigram(np.zeros_like(table)), max_seq_len=64)
    assert option_logliks(uniform, codec, question) == pytest.approx(
        [-n * math.log(TINY.vocab_size) for n in scored], rel=1e-6)


def test_both_layouts_and_any_case_of_column_names_are_read(tmp_path: Path) -> None:
    cmmlu = read_question_set(SAMPLES[1])
    assert cmmlu.questions[0].question == "中国的首都是哪座城市？" and cmmlu.questions[0].answer == 1
    assert read_question_set(SAMPLES[0]).questions[2].options[0] == "应用层"
    shouting = write_csv(tmp_path / "shout.csv", "ID,QUESTION,a,b,c,d,ANSWER\n1,q?,w,x,y,z, d \n\n")
    [question] = read_question_set(shouting).questions
    assert (question.question, question.options, question.answer) == ("q?", ("w", "x", "y", "z"), 3)



@pytest.mark.parametrize(("text", "message"), [
    (",Question,A,B,C,Answer\n0,q,a,b,c,A\n", r"bad\.csv: missing column\(s\) \['d'\]"),
    (HEADER + "0,q,a,b,c,d,A\n1,q,a,b,c,d,E\n", r"bad\.csv: row 2 \(line 3\): answer 'E' is not one of A, B, C, D"),
    (HEADER + "0,q,a,b, ,d,A\n", r"bad\.csv: row 1 \(line 2\): option C is empty"),
    (HEADER + "0,,a,b,c,d,A\n", r"bad\.csv: row 1 \(line 2\): the question is empty"),
    (HEADER + "0,q,a,b,c,A\n", r"bad\.csv: row 1 \(line 2\): 6 fields, the header has 7"),
    (HEADER, r"bad\.csv: no questions"),
    ("", r"bad\.csv: empty file"),
])
def test_bad_csvs_name_the_file_and_row(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(QuestionFileError, match=message):
        read_question_set(write_csv(tmp_path / "bad.csv", text))


def test_unreadable_csvs_are_refused(tmp_path: Path) -> None:
    latin = tmp_path / "latin.csv"
    latin.write_bytes(HEADER.encode() + "0,caf\xe9,a,b,c,d,A\n".encode("latin-1"))
    with pytest.raises(QuestionFileError, match=r"latin\.csv: not UTF-8"):
        read_question_set(latin)
    with pytest.raises(QuestionFileError, match=r"missing\.csv: benchmark file not found"):
        read_question_set(tmp_path / "missing.csv")


# Generation


def test_greedy_generation_is_deterministic_and_stops_at_eos() -> None:
    forward = CompiledForward(Bigram(chain_table(16, [3, 5, 7, 9, 0])), max_seq_len=8)
    first = generate(forward, [3], max_new_tokens=10, eos_id=0)
    assert first == Generation(tokens=(5, 7, 9), stopped_at_eos=True)
    assert generate(forward, [3], max_new_tokens=10, eos_id=0) == first
    assert generate(forward, [3], max_new_tokens=2, eos_id=0) == Generation(tokens=(5, 7), stopped_at_eos=False)
    longer_than_the_context = [11] * 20 + [5]
    assert generate(forward, longer_than_the_context, max_new_tokens=10, eos_id=0) == Generation((7, 9), True)


def test_sampling_is_seeded_and_top_k_limits_the_choice() -> None:
    forward = CompiledForward(Bigram(np.zeros((16, 16), np.float32)), max_seq_len=8)
    runs = [generate(forward, [3], max_new_tokens=6, eos_id=99, temperature=1.0, seed=seed) for seed in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]
    rng = np.random.default_rng(0)
    drawn = {next_token(np.arange(10, dtype=np.float32), rng, temperature=2.0, top_k=3) for _ in range(60)}
    assert drawn == {7, 8, 9}
    with pytest.raises(EvalError, match="temperature"):
        generate(forward, [3], max_new_tokens=2, eos_id=0, temperature=-1.0)


# CLI


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, codec: Codec) -> tuple[Path, GPT, Path]:
    """A run folder with one checkpoint of a tiny model, and the validation split and tokenizer beside its tokens."""
    root = tmp_path_factory.mktemp("run")
    text = " ".join(path.read_text(encoding="utf-8") for path in SAMPLES)
    validation = write_split(root / "tokens", "validation", np.array(codec.encode(text)[:200]), seq_len=16)
    codec.tokenizer.save(str(root / "tokens" / "tokenizer.json"))
    ms.set_seed(1)
    net = GPT(TINY)
    net.wte.embedding_table.set_data(Tensor(np.random.default_rng(1).normal(0, 0.5, (300, 16)), ms.float32))
    optimizer = build_optimizer(net, OptimConfig(), total_steps=10)
    save_checkpoint(root / "checkpoints", "latest", net, optimizer,
                    {"step": 7, "model": TINY.model_dump(), "tokens": str(root / "tokens" / "train.bin")})
    return root, net, validation


def test_cli_reports_the_saved_model_as_json(run_dir: tuple[Path, GPT, Path], codec: Codec,
                                             capsys: pytest.CaptureFixture) -> None:
    root, net, validation = run_dir
    code = main(["--checkpoint", str(root / "checkpoints"), "--threads", "1", "--json", "--batch-size", "4",
                 "--prompt", "hello", "--max-new-tokens", "3"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["step"] == 7
    expected = validation_loss(net, TokenDataset(validation), batch_size=4)
    assert report["perplexity"]["loss"] == pytest.approx(expected.loss, rel=1e-6)
    assert report["perplexity"]["windows"] == expected.windows == 12
    files = report["multiple_choice"]["files"]
    assert [(Path(f["file"]).name, f["questions"]) for f in files] == [
        ("ceval_sample.csv", 6), ("cmmlu_sample.csv", 8), ("english_sample.csv", 6)]
    assert report["multiple_choice"]["overall"]["questions"] == 20
    expected = [reference_counts(reference_logliks(net, codec, list(s.questions), TINY.max_seq_len), list(s.questions))
                for s in map(read_question_set, SAMPLES)]
    assert [(f["correct"], f["correct_norm"]) for f in files] == expected
    overall = report["multiple_choice"]["overall"]
    assert (overall["correct"], overall["correct_norm"]) == tuple(map(sum, zip(*expected, strict=True)))
    assert overall["accuracy"] == overall["correct"] / 20 and overall["accuracy_norm"] == overall["correct_norm"] / 20
    [generation] = report["generations"]
    assert generation["prompt"] == "hello" and generation["new_tokens"] <= 3


def test_cli_prints_a_readable_summary(run_dir: tuple[Path, GPT, Path], capsys: pytest.CaptureFixture) -> None:
    root, _, _ = run_dir
    argv = ["--checkpoint", str(root), "--threads", "1", "--mc", str(SAMPLES[1]), "--prompt", "--max-batches", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "perplexity" in out and "step 7" in out
    assert "cmmlu_sample.csv" in out and "overall" in out and "generations" not in out


def test_cli_warns_on_each_benchmark_the_training_text_was_not_decontaminated_against(
        run_dir: tuple[Path, GPT, Path], capsys: pytest.CaptureFixture) -> None:
    root, _, _ = run_dir
    meta_path = root / "tokens" / "meta.json"
    original = meta_path.read_text()
    checked = [{"set": "samples", "path": str(p), "sha256": file_sha256(p)} for p in SAMPLES[:2]]
    meta_path.write_text(json.dumps({**json.loads(original), "decontamination": {"mode": "drop", "files": checked}}))
    try:
        code = main(["--checkpoint", str(root), "--threads", "1", "--json", "--max-batches", "1", "--prompt",
                     "--mc", *map(str, SAMPLES)])
    finally:
        meta_path.write_text(original)
    captured = capsys.readouterr()
    warnings = [line.removeprefix("warning: ") for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert code == 0 and len(warnings) == 1, captured.err
    assert str(SAMPLES[2]) in warnings[0] and "not among the 2 evaluation files" in warnings[0]
    report = json.loads(captured.out)
    assert report["notes"] == warnings and report["multiple_choice"]["overall"]["questions"] == 20


def test_cli_errors_are_one_line_with_exit_code_2(run_dir: tuple[Path, GPT, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    root, _, _ = run_dir
    bad = write_csv(tmp_path / "bad.csv", HEADER + "0,q,a,b,c,d,F\n")
    cases = [
        (["--checkpoint", str(tmp_path / "nowhere")], "nowhere: checkpoint folder not found"),
        (["--checkpoint", str(tmp_path)], "holds no checkpoint"),
        (["--checkpoint", str(root), "--mc", str(bad)], "bad.csv: row 1 (line 2): answer 'F'"),
        (["--checkpoint", str(root), "--tokenizer", str(tmp_path / "none.json")],
         "none.json: tokenizer file not found"),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_cli_help_explains_the_options() -> None:
    done = subprocess.run([sys.executable, "-m", "stages.eval", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    for option in ("--checkpoint", "--tokens", "--mc", "--prompt", "--top-k", "--temperature", "--json", "CMMLU"):
        assert option in done.stdout
