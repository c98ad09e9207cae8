"""Blind round 8: a customer-support desk agent on the sync ``openai`` client, tools over MCP and local.

The model is SIMULATED (a scripted policy on a loopback OpenAI-compatible server); the faults are
injected by this package's own server and tool wrappers. See README.md.
"""
