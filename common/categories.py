"""The six content categories Kiln mixes (kept free of heavy imports: the trainer reads it too)."""

CATEGORIES = ("academic", "tech_docs", "encyclopedia", "news", "literature", "dialogue")
UNKNOWN_CATEGORY = "unknown"
