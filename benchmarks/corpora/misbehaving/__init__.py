"""A misbehaving-provider corpus: failures produced directly, the way real providers and tools fail.

A loopback OpenAI-compatible server and a set of tools return failures themselves (no injector,
``plan=None``), in the error formats providers, gateways and web APIs document; a small generic
agent loop written against the official ``openai`` SDK drives them; ground truth is written to a
label file (JSONL, keyed by task id) in the catalog's taxonomy. Nothing here reads the
diagnosers' code or the product's signal functions: it is evidence kept apart from the rules.
Every episode is SIMULATED.
"""
