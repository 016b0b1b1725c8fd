"""The Kenfold client that runs next to a git checkout: `kenfold refs sync` (spec §1.9, sync client) and
`kenfold hook`, the session hook of Claude Code and Codex (spec §1.10).

The server cannot read repositories, so this client resolves the files and symbols that memories mention
against the checkout, anchors them to content hashes and later reports whether that content changed. The
hook loads a project's memory when a session starts and sends a summary of the session when it ends. Both
talk to the server only over HTTP and never import Django, so they stay light enough for a hook's budget
of a few seconds.
"""
