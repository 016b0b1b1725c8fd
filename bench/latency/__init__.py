"""Latency and scale benchmark: `recall`, `get_context` and `remember` through the real MCP endpoint.

    .venv/bin/python -m bench.latency --sizes 10000,100000 [--clients 4] [--duration 30] [--repeats 3]
        [--max-calls 5000] [--remember-count 300] [--embed MODE] [--json OUT]
        [--docs docs/benchmarks.md | --no-docs] [--explain-out FILE] [--keep]
        [--phases stages,reads,remember,explain] [--repo DIR ...] [--with-worker]

Run it from the repository root (it imports bench/support/processes.py, the process helpers it shares with the
tests). --embed is the server's KENFOLD_EMBED (default: the variable's value here, else unset, the
product's default: MiniLM plus the multilingual Universal Sentence Encoder); `local-english` measures
MiniLM alone. Every process started here (manage commands, the in-process tasks, the server) gets the
same value, and the corpus carries vectors of every model that configuration embeds with.

--repo DIR runs the server, the manage commands and the in-process tasks from another checkout of Kenfold
(its code first on PYTHONPATH) while the benchmark itself stays this one; given several times, every
checkout gets a home loaded with the same corpus, all servers run side by side, and each repeat of each
phase goes through every checkout in turn (the order alternating between repeats), so a noisy neighbour
hurts them alike. With --paired, the one-client read phases send every call to each checkout's server in
turn instead (the first changing from call to call) and report the median per-call difference against the
first --repo: on a shared machine whose speed drifts within minutes, phases run one after another differ
by more than a change of a few milliseconds, and paired calls do not. --phases picks what runs: `stages`
(the in-process breakdown), `reads` (tools/list, recall, get_context), `remember`, `explain`; e.g. remember
latency before and after a change:

    .venv/bin/python -m bench.latency --phases remember --sizes 1000 --remember-count 300 --repeats 3 \
        --repo /tmp/kf-before --repo . --with-worker --json bench/out/remember.json

--with-worker serves with the job worker beside gunicorn (`manage.py serve --with-worker`, as `make run`
does), so work a remember queues competes for the cores as it would in production; after each remember
phase the benchmark waits until every new memory has a vector of every model (reported as drain_s), so one
checkout's backlog never runs during another's phase. Without it, a remember phase reports how many new
memories still lack a vector (unembedded).

For each size N, in a fresh throwaway KENFOLD_HOME per checkout (embedded cluster,
KENFOLD_EMBEDDED_DURABLE=false: fsync and synchronous_commit off, for loading speed; the tests run the same
way):

1. `manage.py migrate` and `manage.py key create bench`.
2. N synthetic memories bulk-loaded with COPY (not through remember, far too slow at 1M): 20 projects of
   Zipf-like sizes plus the user scope, every memory type, ~85% active (the rest superseded, deleted,
   proposed preferences, and temporary notes that have mostly expired), ~20% Korean, created_at spread
   over a year. Texts come from templates filled from a few hundred domain words, so a query word
   matches a realistic share of rows, not all of them.
   Embeddings: every model of the configured embedders (`providers.embedders()` under --embed) embeds a
   few thousand distinct template sentences ("bases"); each memory gets, per model, its base's vector
   plus Gaussian noise (sigma 0.02 per dimension at 384 dimensions, scaled by sqrt(384 / dimensions) so
   every model's copies lie at cosine ~0.93 to their base), re-normalized: one memory_embedding row per
   memory and model. Embedding 1M texts on 2 cores would take hours; the derived vectors keep each real
   model's geometry between bases and give every memory its own point.
   Secondary indexes are dropped during COPY and re-created from their own definitions
   (pg_get_indexdef) afterwards; foreign-key triggers are off during COPY (the data is consistent by
   construction). Each model's HNSW index is then built by the product's own `ensure_model_index`, and
   VACUUM ANALYZE runs (what autovacuum would do on a live database).
3. An in-process stage breakdown (query embedding and vector SQL of every model, lexical SQL, the whole
   pipeline), then
   `manage.py serve` (gunicorn's ASGI worker, KENFOLD_WORKERS=2, the default) on a free 127.0.0.1 port.
4. The MCP SDK's client (mode "auto", one session per simulated agent) drives `recall` and `get_context`
   with 1 and K concurrent clients, each phase bounded by --duration seconds and --max-calls calls, and
   repeated --repeats times (phases interleaved, so a noisy neighbour hurts every phase alike); then
   `remember` of --remember-count distinct new memories with K clients. Every server is warmed first
   (recall, get_context, and a few remember calls, none measured). Latency is measured per call,
   client-side: it includes HTTP, the MCP layer, and the query embedding on the server.
5. At the largest size, EXPLAIN (ANALYZE, BUFFERS) of every SQL statement recall and get_context run
   (captured from the product code, so the SQL is the real one) is written to --explain-out.

Results are printed, written as JSON (--json), and, for a run of every phase on one checkout, put in the
"Latency and scale" section of docs/benchmarks.md (other sections are left as they are). Every server and
cluster started here is stopped on exit, on Ctrl-C and on SIGTERM.

Modules: corpus (the synthetic memories, queries and writes), load (bulk load and database facts),
tasks (the Django-side tasks, run in a child with the checkout's code), children (the processes started
for a checkout), phases (the MCP load phases), report (tables and the docs section), cli (this command).
"""
