"""The Kenfold client that runs next to a git checkout: `kenfold refs sync` (spec §1.9, sync client).

The server cannot read repositories, so this client resolves the files and symbols that memories mention
against the checkout, anchors them to content hashes and later reports whether that content changed. It
talks to the server only over HTTP and never imports Django, so it stays light enough for a session hook
with a 2 s budget.
"""
