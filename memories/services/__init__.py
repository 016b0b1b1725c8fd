"""memories' writes, one module per use case: remember (remember and supersede), handoff (handoff and
resume), review (forget and the owner's review), delivery (get_context and recall as agents are served
them, recorded as usage); writes holds what remember and handoff share (input checks, the insert with the
review rule and the quota, the embedding after commit), classification the chat model's type for
remember.

Every surface (MCP tools, REST, dashboard, commands) calls these functions; the rules of the contract
(seeds/000) and of spec §1.4–§1.5 live here and nowhere else. Each function validates everything before
it writes, so bad input changes nothing, and owns its transaction.

Callers import from the use case's module: this package re-exports nothing, so an import names where a
rule lives.
"""
