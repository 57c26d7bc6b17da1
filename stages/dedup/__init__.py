"""Dedup: exact and MinHash-LSH near-duplicate removal."""
