"""Agent adapters that campaigns run, registered in the ``agentchaos_otel.agents`` entry-point group.

This is the top layer beside the CLI: adapters may use everything below; nothing below imports
them (the campaign finds them through their entry points).
"""
