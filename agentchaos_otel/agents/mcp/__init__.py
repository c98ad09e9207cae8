"""The reference agent with its tools over MCP (entry point ``mcp``): what a campaign measures when
the same tools come through an MCP server instead of ``wrap_tools``."""
