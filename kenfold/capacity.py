"""How much one server process takes on at once: the admission gate (edge.backpressure) lets this many
requests run, and the database pool (settings.DATABASES) holds enough connections for all of them. Here on
the floor so that the settings read it without importing the edge.
"""

import os

# Requests are mostly CPU (embedding the text, ranking) on the machine's cores plus short queries. Two per
# core per process keep the cores busy while some wait for PostgreSQL without crowding them. Three per core
# won on 2026-12-02 (bench.load --compare: 74.3 against 67.0 ops/s at 32 clients); at 32 clients on
# 2026-12-03, two per core against three: 62.4 / 60.3 and 64.7 / 68.3 ops/s in the morning's two runs,
# then 96.9 / 66.6, 83.7 / 78.6 and 76.7 / 73.0 in the evening's three (interleaved; recall p95 at 16
# clients lower or equal in each of those three; docs/benchmarks.md). Unbounded concurrency thrashed (the
# collapse issue 14 found at 32). At least three, so that a one-core machine still has a slot for a read
# beside the writes' share.
ACTIVE_PER_PROCESS = max(3, 2 * (os.cpu_count() or 1))
# The pool holds more connections than can be in use, so that a running request never waits for one; the
# extra ones serve what runs outside the gate (dashboard pages, the readiness probe's schema check).
POOL_SIZE = ACTIVE_PER_PROCESS + 4
# What a 503 asks a client to wait before it retries (the gate's refusals, the API's, its OpenAPI document).
RETRY_AFTER_S = 2
