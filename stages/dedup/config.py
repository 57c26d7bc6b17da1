"""The dedup stage's configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from common.categories import CATEGORIES, UNKNOWN_CATEGORY
from common.config_loader import Section, known_signal
from common.signal_names import SIGNAL_NAMES


class DedupConfig(Section):
    """The dedup stage: exact and MinHash-LSH near-duplicate removal, one document kept per cluster."""

    num_perm: int = Field(default=128, ge=16)
    """MinHash permutations per document."""
    shingle_size: int = Field(default=5, ge=1)
    """Tokens per shingle (a Han character or a Latin word is one token, after NFKC, lowercasing, digits -> 0 and
    dropping punctuation). Shorter documents are deduplicated exactly only."""
    bands: int = Field(default=16, ge=1)
    """LSH bands and rows per band (bands × rows <= num_perm). 16 × 8 puts the S-curve's midpoint near Jaccard 0.71:
    94.7 % of pairs at 0.8 become candidates, 0.6 % at 0.5."""
    rows: int = Field(default=8, ge=1)
    """See `bands`."""
    threshold: float = Field(default=0.7, ge=0.0, le=1.0)
    """A candidate pair is a duplicate when its signature Jaccard estimate reaches this."""
    partitions: int = Field(default=16, ge=1)
    """Partitions of every distributed step: band and exact keys, the duplicate graph's nodes (large-star/small-star
    rounds) and the keep decisions; one Ray task each per step."""
    category_priority: list[str] = Field(default_factory=lambda: [*CATEGORIES, UNKNOWN_CATEGORY])
    """Keep rule inside a duplicate cluster: the first category in this list wins, then the highest quality_signal,
    then the lowest doc_id."""
    quality_signal: str = "lang_score"
    """Column of the input compared (higher is better) when categories tie."""
    seed: int = 1
    """Seed of the MinHash permutations."""

    @field_validator("quality_signal")
    @classmethod
    def _known_quality_signal(cls, signal: str) -> str:
        return known_signal(signal, ("lang_score", *SIGNAL_NAMES))

    @model_validator(mode="after")
    def _bands_fit(self) -> DedupConfig:
        if self.bands * self.rows > self.num_perm:
            raise ValueError(f"bands × rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}")
        unknown = set(self.category_priority) - {*CATEGORIES, UNKNOWN_CATEGORY}
        if unknown:
            raise ValueError(f"category_priority has unknown categories {sorted(unknown)}")
        return self


class DecontaminateConfig(Section):
    """Benchmark decontamination, the dedup stage's last step: a document that shares text with an evaluation item
    is removed (or the shared text cut out of it) before any training split is drawn."""

    enabled: bool = True
    """Remove evaluation items from the corpus (off: the tokens record that no set was checked)."""
    eval_sets: list[str] | None = None
    """Evaluation sets: files or folders of CMMLU- or C-Eval-layout CSV, JSONL (decontaminate.text_field) or plain
    text (an item per line). Default: the sample sets Kiln ships for evaluation (stages/eval/samples/). `make data
    EVAL_SETS="PATH ..."` and `kiln run --eval-sets PATH ...` set it."""
    text_field: str = "text"
    """The field holding an item's text in a JSONL set."""
    ngram: int = Field(default=13, ge=4)
    """Tokens an item and a document must share in a row to match (a word of an alphabetic script, or a Han or kana
    character, is one token, after NFKC and lowercasing; punctuation and line breaks are not tokens)."""
    min_item_tokens: int = Field(default=8, ge=2)
    """An item whose question has fewer tokens than `ngram` matches where its whole question occurs; a question
    shorter than this says too little to be told apart from ordinary text, and is skipped (and counted)."""
    max_items_per_ngram: int = Field(default=5, ge=1)
    """An n-gram found in more items than this is the exams' common phrasing ("which of the following statements
    is true"), not an item's content, and is ignored."""
    mode: Literal["drop", "excise"] = "drop"
    """drop: remove every matching document (reason `contaminated`). excise: cut each matched span and keep the
    pieces that stay long enough (decontaminate.min_piece_tokens)."""
    excise_margin_chars: int = Field(default=200, ge=0)
    """With mode excise: characters cut on either side of a matched span (an item's options and answer follow it)."""
    min_piece_tokens: int = Field(default=20, ge=1)
    """With mode excise: a piece left between cuts is kept when it has at least this many tokens; a document with no
    such piece is removed."""

    @model_validator(mode="after")
    def _lengths_fit(self) -> DecontaminateConfig:
        if self.min_item_tokens > self.ngram:
            raise ValueError(f"min_item_tokens ({self.min_item_tokens}) exceeds ngram ({self.ngram})")
        return self
