"""Kenfold over MCP: the six tools (server.py) and their HTTP and stdio transports (transports.py)."""
