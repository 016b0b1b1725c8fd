"""Vectors are indexed per model and scope (memories.embedding_store.ensure_scope_index): a scope's first
vector creates its index, a search over several scopes merges each scope's nearest, and a memory moved to
a scope that has no index yet is still found."""

import threading

import pytest
from django.db import connection, connections

from kenfold import clock
from kenfold.caller import Caller
from memories import search, services
from memories.embedding_store import store_vectors
from memories.models import Memory
from memories.selectors import read_scopes

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/scoped"
MODEL = "fake-scoped"
DIMS = 16


def _vector(*weights: float) -> list[float]:
    return [*weights, *([0.0] * (DIMS - len(weights)))]


QUERY = _vector(1.0)


def _remember(content: str, project: str | None) -> Memory:
    memory_id = services.memory_remember(caller=AGENT, content=content, project=project).id
    return Memory.objects.get(pk=memory_id)


def _store(memory: Memory, vector: list[float]) -> None:
    assert store_vectors(model=MODEL, items=[(memory.pk, memory.content, vector)]) == 1


def _scope_indexes() -> dict[str, str]:
    """The HNSW indexes of MODEL's vectors: scope named in the predicate -> index definition."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_embedding' AND indexdef LIKE %s",
            [f"%USING hnsw%{MODEL}%"],
        )
        definitions = [row[0] for row in cursor.fetchall()]
    found = {}
    for definition in definitions:
        scope = definition.split("scope = '", 1)[1].split("'", 1)[0]
        found[scope] = definition
    assert len(found) == len(definitions), f"an index without a scope: {definitions}"
    return found


def _nearest(scopes: list[str], limit: int) -> list[str]:
    found = search.vector_search(
        vector=QUERY, model=MODEL, scopes=scopes, types=None, now=clock.now(), limit=limit, max_distance=2.0
    )
    return [str(memory_id) for memory_id, _distance in found]


@pytest.mark.django_db
def test_each_scope_gets_its_own_index_and_a_search_merges_the_scopes_nearest(provider_env) -> None:
    provider_env(KENFOLD_EMBED="off")
    user, project = read_scopes(REPO)
    tabs = _remember("I prefer tabs over spaces in every repository.", None)
    near = _remember("Payments retry three times with exponential back-off.", REPO)
    far = _remember("The docs site is built with Hugo and deployed from main.", REPO)
    assert (tabs.scope, near.scope) == (user, project)
    _store(near, _vector(1.0, 0.2))
    _store(tabs, _vector(1.0, 0.6))
    _store(far, _vector(0.1, 1.0))

    indexes = _scope_indexes()
    assert sorted(indexes) == sorted([user, project])
    assert all(f"model = '{MODEL}'" in definition for definition in indexes.values())

    # Nearest first across both scopes, and the merged list is cut at the limit, not each scope's.
    assert _nearest([user, project], limit=3) == [str(near.pk), str(tabs.pk), str(far.pk)]
    assert _nearest([user, project], limit=2) == [str(near.pk), str(tabs.pk)]
    assert _nearest([project], limit=3) == [str(near.pk), str(far.pk)]
    assert _nearest([user], limit=3) == [str(tabs.pk)]


@pytest.mark.django_db
def test_a_memory_moved_to_a_scope_without_an_index_is_still_found(provider_env) -> None:
    provider_env(KENFOLD_EMBED="off")
    memory = _remember("Release notes are written before the tag.", REPO)
    _store(memory, _vector(1.0))
    moved_to = "project:github.com/acme/elsewhere"
    Memory.objects.filter(pk=memory.pk).update(scope=moved_to)

    assert moved_to not in _scope_indexes()
    assert _nearest([moved_to], limit=5) == [str(memory.pk)]
    assert _nearest(read_scopes(REPO), limit=5) == []


@pytest.mark.django_db(transaction=True)
def test_first_vectors_of_a_new_scope_written_at_once_all_land_under_one_index(provider_env) -> None:
    """Two processes embedding the first memories of a new project at the same moment: one creates the
    scope's index, the other finds it made; neither write fails or waits for the other forever."""
    provider_env(KENFOLD_EMBED="off")
    memories = [
        _remember(f"Fact {n} about the new project's build.", "github.com/acme/brand-new") for n in range(4)
    ]
    start = threading.Barrier(len(memories))
    written: list[int] = []
    errors: list[BaseException] = []

    def write(memory: Memory, weight: float) -> None:
        try:
            start.wait(timeout=10)
            written.append(
                store_vectors(model=MODEL, items=[(memory.pk, memory.content, _vector(1.0, weight))])
            )
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(memory, 0.1 * n)) for n, memory in enumerate(memories)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert written == [1, 1, 1, 1]
    scope = memories[0].scope
    assert list(_scope_indexes()) == [scope]
    assert sorted(_nearest([scope], limit=10)) == sorted(str(memory.pk) for memory in memories)
