"""Blind round 4: an incident-response agent on Anthropic's Messages API with MCP tools (SIMULATED model).

``python -m benchmarks.blind.round4 --db D --labels L --seed S`` builds the corpus and its labels;
``--check`` verifies every labelled step against the store. See README.md.
"""
