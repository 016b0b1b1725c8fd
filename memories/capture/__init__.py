"""Capture: memories proposed by the chat model from the session summaries the hooks store (extraction),
with the novelty check that keeps a proposal from repeating a memory. A background job, apart from
remember's request path; remember's own model call (the type of a memory stored without one) lives
beside remember in memories.services."""
