"""Blind round 6: a travel-desk agent on the async OpenAI SDK and MCP tools.

Failure forms come from public documentation; the model is SIMULATED (see README.md).
"""
