"""The model clients: embedders (embeddings/), the reranker (rerank), the chat model (chat), and the
process's configured instances of each (configured). Nothing here reads or writes a memory."""
