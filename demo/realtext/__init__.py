"""A development set of real Chinese and English text, cut from Debian packages and PyPI distributions."""
