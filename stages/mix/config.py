"""The mix stage's configuration section: category weights, budget, validation split, category classifier."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from common.categories import CATEGORIES
from common.config_loader import Fraction, Section, known_signal
from common.signal_names import SIGNAL_NAMES


class CategoryClassifierConfig(Section):
    """The fastText classifier that gives documents of unknown category a category."""

    enabled: bool = False
    """Train and apply the classifier."""
    threshold: Fraction = 0.5
    """Probability the top label needs for a document to take it (Kiln's default model, below, brings the threshold
    chosen for it)."""
    held_out_fraction: float = Field(default=0.1, gt=0.0, lt=1.0)
    """Seeded share of the labelled documents held out to measure accuracy."""
    labelled_sample: str | None = None
    """A JSONL file of extra labelled examples ({"text": ..., "category": ...}); null for none."""
    default_model: str | None = None
    """Folder of Kiln's default category model (`make category-model` builds it), used when the training split has
    no categorized document and no labelled_sample is given; its threshold is the one chosen on held-out text
    (docs/data-stages.md, The mix stage, "Categories without labels"). null: the folder `make category-model` writes
    ($XDG_CACHE_HOME/kiln/category-model, else ~/.cache/kiln/category-model)."""
    min_labelled_per_category: int = Field(default=20, ge=1)
    """The least training examples a category needs (else a clear error: map more sources)."""
    max_examples_per_category: int = Field(default=5000, ge=1)
    """Most documents per category trained on: a seeded uniform sample beyond that."""
    max_chars: int = Field(default=2000, ge=16)
    """Characters of each document the classifier reads."""
    epochs: int = Field(default=25, ge=1)
    """fastText training: epochs, learning rate, word n-grams (a Han character is a word) and vector size."""
    learning_rate: float = Field(default=0.5, gt=0.0)
    """See `epochs`."""
    word_ngrams: int = Field(default=2, ge=1, le=5)
    """See `epochs`."""
    dim: int = Field(default=32, ge=2)
    """See `epochs`."""
    seed: int = 1234
    """Seed of the sample, the held-out split and fastText's training (one thread: reproducible)."""


class MixConfig(Section):
    """The mix stage: the validation split and category-balanced sampling of the training split."""

    category_weights: dict[str, Annotated[float, Field(ge=0.0)]] = Field(default_factory=lambda: {
        "academic": 3.0, "tech_docs": 2.0, "encyclopedia": 2.0, "news": 1.0, "literature": 1.0, "dialogue": 1.0})
    """Share of the training budget per category (normalized; a category with no data gets a warning and its share
    goes to the others)."""
    alpha: float = Field(default=0.7, gt=0.0, le=1.0)
    """Inside a category, source s with token share p_s gets p_s^alpha / Σ p^alpha of the category's budget (the
    mBERT/XLM exponent; equal to temperature T = 1/alpha in the p^(1/T) convention). alpha < 1 flattens toward
    small sources; 1 keeps natural shares."""
    max_epochs: float = Field(default=4.0, gt=0.0)
    """No source is repeated more than this many times; the excess goes to the other sources of its category
    (UniMax-style), and what no source can absorb is reported."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """Training budget in tokens (token_column summed); null with budget_documents null means the tokens available
    (the data resampled to the category weights)."""
    budget_documents: int | None = Field(default=None, ge=1)
    """Training budget in documents instead of tokens (set one budget at most)."""
    unknown_category: str = "drop"
    """Documents whose category is unknown: "drop" (counted as unknown_category) or a category to put them in."""
    max_unknown_fraction: Fraction = 0.5
    """With unknown_category "drop": the stage stops, saying what to set, when more than this share of the input
    documents has category unknown (a corpus without categories would otherwise train on the few documents that
    have one). 1 never stops."""
    classifier: CategoryClassifierConfig = CategoryClassifierConfig()
    """A fastText classifier that gives documents of category unknown a category: trained in mix's first step on the
    training split's documents whose category is known (source mappings, a category field, URL rules) and on
    labelled_sample, with held_out_fraction of them kept apart to measure its accuracy (printed, written to
    mix_summary.json, shown by kiln status), then applied to every shard's unknown documents before the plan
    counts categories. A document gets the predicted category when its probability reaches threshold, else it
    stays unknown; the probability goes into the category_score column (NaN where nothing was predicted)."""
    validation_fraction: float = Field(default=0.01, ge=0.0, lt=1.0)
    """Share of documents held out for validation, chosen by a seeded hash of the document id (after dedup one
    document stands for its whole duplicate cluster, so near duplicates never straddle the split)."""
    token_column: str = "q_tokens"
    """Column holding a document's token count before tokenization (clean's q_tokens: a Han character or a word is
    one token)."""
    seed: int = 1234
    """Seed of the validation split and of the repeat draws."""

    @field_validator("token_column")
    @classmethod
    def _known_token_column(cls, column: str) -> str:
        return known_signal(column, SIGNAL_NAMES)

    @field_validator("category_weights")
    @classmethod
    def _some_weight(cls, weights: dict[str, float]) -> dict[str, float]:
        if not any(weights.values()):
            raise ValueError("at least one category needs a weight above 0")
        return weights

    @model_validator(mode="after")
    def _consistent(self) -> MixConfig:
        unknown = set(self.category_weights) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"category_weights has unknown categories {sorted(unknown)}")
        if self.unknown_category not in (*CATEGORIES, "drop"):
            raise ValueError(f"unknown_category must be 'drop' or one of {list(CATEGORIES)}")
        if self.budget_tokens is not None and self.budget_documents is not None:
            raise ValueError("set budget_tokens or budget_documents, not both")
        return self
