"""Bundled sample data of the math env family (a package so that setuptools ships its *.jsonl files)."""
