"""The dedup stage's configuration section."""

from __future__ import annotations

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
