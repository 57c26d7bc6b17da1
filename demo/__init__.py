"""The built-in demo corpus: demo.generator writes it, demo.truth scores a stage against it."""
