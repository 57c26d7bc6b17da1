"""The evaluator's user-facing error."""

from common.errors import KilnError


class EvalError(KilnError):
    """An evaluation input (checkpoint, token file, tokenizer, benchmark CSV, option) is missing or invalid."""
