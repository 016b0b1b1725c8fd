"""The load benchmark (issue 14): N agents, each with its own API key and MCP session, against
`manage.py serve --migrate`; see __main__.py."""
