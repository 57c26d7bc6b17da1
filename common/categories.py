"""The six content categories Kiln mixes, and the label of a document in none of them."""

CATEGORIES = ("academic", "tech_docs", "encyclopedia", "news", "literature", "dialogue")
UNKNOWN_CATEGORY = "unknown"
