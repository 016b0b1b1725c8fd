"""What the benchmarks and the tests share to drive Kenfold from outside: its processes, an MCP client, the
OAuth flow, and the data sets both measure. Here, not in tests/, so that bench/ never imports the tests."""
