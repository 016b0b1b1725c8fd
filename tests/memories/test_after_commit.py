"""Work after a write commits: every configured model embeds before the answer, and no failure after the
commit reaches the agent (the backfill embeds what is missing)."""

from collections.abc import Callable
from dataclasses import dataclass
from uuid import UUID

import pytest
from django_q.models import OrmQ, Task

from access.caller import Caller
from memories import tasks
from memories.models import Memory, MemoryEmbedding
from memories.services.handoff import handoff_create
from memories.services.remember import memory_remember
from tests.provider_servers import Received, Reply, openai_embeddings, provider_server

pytestmark = pytest.mark.django_db

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/payments"
MEMORY = "Payments are idempotent on the event id."
MODEL = "fake-embed"


@dataclass
class Outage:
    """An embedding server that answers HTTP 500 until ``over`` is set."""

    over: bool = False

    def __call__(self, received: Received) -> Reply:
        if not self.over:
            return Reply(status=500, json={"error": "the model crashed"})
        return openai_embeddings(received)


def use_http_embedder(provider_env: Callable[..., None], url: str) -> None:
    provider_env(
        KENFOLD_EMBED=None, KENFOLD_EMBED_URL=url, KENFOLD_EMBED_MODEL="fake", KENFOLD_EMBED_NAME=MODEL
    )


def vector_models(memory_id: str) -> set[str]:
    return set(MemoryEmbedding.objects.filter(memory_id=UUID(memory_id)).values_list("model", flat=True))


def test_a_provider_failing_after_the_commit_still_returns_the_stored_id(
    provider_env: Callable[..., None],
) -> None:
    outage = Outage()
    with provider_server(outage) as server:
        use_http_embedder(provider_env, server.url)
        result = memory_remember(caller=AGENT, content=MEMORY, project=REPO)
        assert len(server.received) == 1, "the provider was asked, and failed"
        assert (result.type, result.status, result.deduplicated) == ("project", "active", False)
        assert Memory.objects.get(pk=result.id).content == MEMORY, "the returned id is the stored memory"
        assert vector_models(result.id) == set()

        outage.over = True
        tasks.embeddings_backfill()
        assert vector_models(result.id) == {MODEL}, "the periodic backfill embeds it later"


def test_an_unreachable_provider_fails_neither_remember_nor_handoff(
    provider_env: Callable[..., None],
) -> None:
    with provider_server(openai_embeddings) as stopped:
        pass  # its port now refuses connections
    use_http_embedder(provider_env, stopped.url)
    remembered = memory_remember(caller=AGENT, content=MEMORY, project=REPO)
    handoff = handoff_create(caller=AGENT, summary="Retries are half done", project=REPO)
    assert Memory.objects.filter(pk__in=[remembered.id, handoff.id]).count() == 2
    assert vector_models(remembered.id) == vector_models(handoff.id) == set()

    with provider_server(openai_embeddings) as back:
        use_http_embedder(provider_env, back.url)
        tasks.embeddings_backfill()
    assert vector_models(remembered.id) == vector_models(handoff.id) == {MODEL}


def test_every_local_model_embeds_before_the_answer_and_nothing_is_queued(
    provider_env: Callable[..., None],
) -> None:
    provider_env(KENFOLD_EMBED="local", KENFOLD_EMBED_URL=None)
    result = memory_remember(caller=AGENT, content=MEMORY, project=REPO)
    assert vector_models(result.id) == {"all-minilm-l6-v2-int8", "use-multilingual-v3"}
    handoff = handoff_create(caller=AGENT, summary="Refunds half done.", project=REPO)
    assert vector_models(handoff.id) == {"all-minilm-l6-v2-int8", "use-multilingual-v3"}
    assert Task.objects.count() == 0 and OrmQ.objects.count() == 0, "no job for the worker"
