"""`kiln ablate` / `make ablation`: does each data stage make the model better, and by how much?

The same small model is trained on token streams sampled, to one token budget, from the output of
successive stages of one pipeline run (raw = ingest, clean, dedup, full = mix, and arms of one's own),
with one tokenizer, one configuration and the same seeds, then scored in bits per byte on held-out
sets that were removed, with their near-duplicates, from every arm before any arm was built.

Modules: ``documents`` (reading a stage's documents), ``evalsets`` (the held-out sets and the matcher
that keeps them out of training), ``streams`` (token files and byte accounting), ``arms`` (one arm's
training stream), ``runs`` (the training and evaluation processes), ``results`` (statistics and
summary.json), ``report`` (the report section), ``command`` (the command itself), ``config`` (its configuration
section), ``arguments`` (its options), ``layout`` (the names of its files).
"""
