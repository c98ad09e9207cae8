"""Blind evaluation corpus, round 1: failure forms written independently of the diagnosers.

Build with ``python -m benchmarks.blind.round1 --db OUT.duckdb --labels OUT.jsonl --seed N``;
see README.md in this directory for the forms, the scripted model and the composition.
"""
