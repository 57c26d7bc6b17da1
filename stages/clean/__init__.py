"""Clean: text repair, timestamp scrubbing, language ID and quality rules."""
