"""Evaluate trained checkpoints: validation perplexity, multiple-choice accuracy (CMMLU/C-Eval CSVs), sample text."""
