"""The search engine behind recall and get_context (spec §1.7): the first-stage rankers' SQL, their fusion,
the cross-language steps, the learned order and the rerank (retrieval.retrieve runs them in order), and
the vector index they read (embedding_store, scope_indexes). Reads memories; never changes one."""
