"""The rules the Kenfold server and its agent-side client share, importable without Django.

Project identity and scopes (identity), code-reference paths, symbols, commit ids and state names
(coderefs), the secret filter (secrets), the error hierarchy (errors) and the KENFOLD_* readers (env). The
server imports these from here and nothing here imports the server or the client (an import contract in
pyproject.toml, checked by `make lint`).
"""
