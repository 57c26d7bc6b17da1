"""Kiln's user commands: `kiln run` (the pipeline), status, report, the demo corpus and its scoring."""
