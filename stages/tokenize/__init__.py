"""Tokenize: a byte-level BPE tokenizer and the packed uint16 token streams the trainer reads."""
