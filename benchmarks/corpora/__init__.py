"""Corpora the accuracy and speed benchmarks are measured on, reused by the tests.

``synthetic`` builds hand-shaped episodes, ``spans`` writes them into a trace store as spans, and
``misbehaving`` runs a loopback provider and tools that fail by themselves (no injector). None of
them is part of the installed package, and none uses the diagnosers' own signal functions.
"""
