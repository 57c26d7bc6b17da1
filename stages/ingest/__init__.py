"""Ingest: JSONL (.gz/.zst), Parquet and folders of .txt files into Arrow document shards."""
