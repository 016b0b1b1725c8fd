"""Kenfold's edge: the ASGI router, the HTTP guard, the admission gate, authentication, the REST API, the MCP
server and the `serve` and `mcp` commands. It imports the apps; nothing below it imports the edge."""
