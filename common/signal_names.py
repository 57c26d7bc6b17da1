"""The clean stage's quality signals: one float32 column each after the document columns of a clean shard.

Rules (``clean.rules.*.signal``), ``dedup.quality_signal`` and ``mix.token_column`` name them, and the
configuration checks those names when it loads; this module has no dependencies, so the trainer's
environment can load the configuration too.
"""

from __future__ import annotations

SCALAR_SIGNALS = (
    "q_chars", "q_tokens", "q_han_frac", "q_latin_words", "q_mean_word_len", "q_symbol_word_ratio",
    "q_alpha_token_frac", "q_stop_words", "q_newline_token_ratio", "q_symbol_run_frac", "q_decorative_frac",
    "q_mojibake_frac", "q_mojibake_marks", "q_rare_han_frac", "q_stub_frac", "q_spam_line_frac",
    "q_lines", "q_dup_line_frac", "q_dup_line_char_frac", "q_bullet_line_frac", "q_ellipsis_line_frac",
    "q_terminal_punct_line_frac", "q_short_line_frac", "q_nav_line_frac", "q_lost_char_frac", "q_licence_sentence_frac",
)
REPETITION_SIGNALS = (*(f"q_top{n}gram_frac" for n in (2, 3, 4)), *(f"q_dup{n}gram_frac" for n in range(5, 11)))
SIGNAL_NAMES = (*SCALAR_SIGNALS, *REPETITION_SIGNALS)
