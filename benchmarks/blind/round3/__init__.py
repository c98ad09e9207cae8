"""Blind round 3: a pydantic-ai shop agent on a loopback OpenAI-compatible model, with failure forms
taken from the public documentation of real systems, labelled by docs/taxonomy.md (see README.md)."""
