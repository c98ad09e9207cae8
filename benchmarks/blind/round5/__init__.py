"""Blind round 5: an accounts-payable agent (SIMULATED model) on OpenAI-compatible providers, ERP tools over MCP."""
