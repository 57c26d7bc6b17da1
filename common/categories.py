"""The six content categories Kiln mixes, and the label of a document in none of them."""

CATEGORIES = ("academic", "tech_docs", "encyclopedia", "news", "literature", "dialogue")
UNKNOWN_CATEGORY = "unknown"


def held_out_summary(accuracy: float, documents: int) -> str:
    """How the classifier did on its held-out documents, or that none were held out."""
    if documents == 0:
        return "held-out accuracy n/a (no labelled documents held out)"
    return f"held-out accuracy {accuracy:.3f} on {documents:,} documents"
