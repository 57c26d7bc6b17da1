"""The six content categories Kiln mixes, and the label of a document in none of them."""

import os
from pathlib import Path

CATEGORIES = ("academic", "tech_docs", "encyclopedia", "news", "literature", "dialogue")
UNKNOWN_CATEGORY = "unknown"


def held_out_summary(accuracy: float, documents: int) -> str:
    """How the classifier did on its held-out documents, or that none were held out."""
    if documents == 0:
        return "held-out accuracy n/a (no labelled documents held out)"
    return f"held-out accuracy {accuracy:.3f} on {documents:,} documents"


def default_model_dir() -> Path:
    """Where `make category-model` writes Kiln's default category model: ``$XDG_CACHE_HOME/kiln/category-model``
    (``~/.cache/kiln/category-model`` when XDG_CACHE_HOME is unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kiln" / "category-model"
