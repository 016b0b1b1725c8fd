"""Concurrent writers never duplicate or drop a write (spec §1.4 step 9, §1.5 handoff).

Real threads, each with its own database connection, released together by a barrier.
"""

import uuid
from collections.abc import Callable

import pytest
from django.db import connection

from access.caller import Caller
from coderefs.models import CodeRef
from coderefs.schemas import CheckInput, CheckResult
from coderefs.services import refs_check
from memories.models import Memory, MemoryEmbedding
from memories.search.embedding_store import store_vectors
from memories.services.handoff import handoff_create
from memories.services.remember import memory_remember
from tests.threads import in_parallel

pytestmark = pytest.mark.django_db(transaction=True)

REPO = "github.com/kenfold/kenfold"
WRITERS = 6


def remember_call(content: str, **kwargs: object) -> Callable[[], object]:
    return lambda: memory_remember(caller=Caller(agent="claude-code"), content=content, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{"project": REPO}, {"type": "preference"}, {"project": REPO, "type": "codebase"}],
    ids=["project", "preference", "typed"],
)
def test_identical_parallel_remembers_store_one_row(kwargs: dict) -> None:
    results = in_parallel([remember_call("Parallel writes must not duplicate.", **kwargs)] * WRITERS)
    assert not [r for r in results if isinstance(r, Exception)]
    assert len({r.id for r in results}) == 1
    assert sum(r.deduplicated for r in results) == WRITERS - 1
    assert Memory.objects.count() == 1
    if kwargs.get("type") == "preference":
        assert Memory.objects.get().status == "proposed", "a deduplicated preference stays proposed"


def test_typed_and_untyped_remembers_of_the_same_text_serialize() -> None:
    calls = [remember_call("Mixed typing must not duplicate.", project=REPO)] * 3
    calls += [remember_call("mixed typing must not duplicate", project=REPO, type="project")] * 3
    results = in_parallel(calls)
    assert not [r for r in results if isinstance(r, Exception)]
    assert Memory.objects.count() == 1


def test_parallel_session_summaries_leave_one_current_summary() -> None:
    calls = [
        remember_call(f"Session summary, version {n}.", project=REPO, type="episodic", session_id="s-1")
        for n in range(WRITERS)
    ]
    results = in_parallel(calls)
    assert not [r for r in results if isinstance(r, Exception)]
    assert Memory.objects.filter(status="active").count() == 1
    assert Memory.objects.filter(status="superseded").count() == WRITERS - 1


def test_parallel_handoffs_leave_one_active_handoff() -> None:
    agent = Caller(agent="claude-code")
    results = in_parallel(
        [lambda n=n: handoff_create(caller=agent, summary=f"State {n}", project=REPO) for n in range(WRITERS)]
    )
    assert not [r for r in results if isinstance(r, Exception)]
    assert Memory.objects.filter(status="active").count() == 1
    assert Memory.objects.count() == WRITERS


def test_explicit_supersede_races_retire_the_target_once() -> None:
    target = memory_remember(caller=Caller(agent="a"), content="Version one.", project=REPO)
    results = in_parallel(
        [remember_call(f"Version {n + 2}.", project=REPO, supersedes=target.id) for n in range(4)]
    )
    successes = [r for r in results if not isinstance(r, Exception)]
    failures = [r for r in results if isinstance(r, Exception)]
    assert len(successes) == 1, "only one replacement can retire the target"
    assert all("no longer active" in str(f) for f in failures)
    assert Memory.objects.filter(status="active").count() == 1


def test_parallel_refs_checks_of_one_memory_leave_its_code_state_right() -> None:
    """Each check recomputes the memory's code_state from every reference: checks of one project must
    serialize, or each would miss the others' uncommitted changes and the last one would write a state
    that no longer holds."""
    symbols = [f"handler_{index}" for index in range(WRITERS)]
    memory_id = memory_remember(
        caller=Caller(agent="claude-code"),
        content=f"app/api.py defines {', '.join(f'`{symbol}`' for symbol in symbols)}.",
        project=REPO,
    ).id
    sync = Caller(agent="refs-sync")
    first, later = "a" * 40, "b" * 40

    def check(commit: str, results: list[CheckResult]) -> Callable[[], object]:
        return lambda: refs_check(caller=sync, check=CheckInput(project=REPO, commit=commit, results=results))

    anchors = [CheckResult(path="app/api.py", symbol=s, found=True, hash=f"{s}:1") for s in symbols]
    check(first, anchors)()
    changed = [
        CheckResult(path="app/api.py", symbol=s, anchor_commit=first, found=True, hash=f"{s}:2")
        for s in symbols
    ]
    check(later, changed)()
    assert Memory.objects.get(pk=memory_id).code_state == "changed"

    # Every symbol is back as anchored, each reported by its own client at the same moment.
    restored = [
        check(
            later, [CheckResult(path="app/api.py", symbol=s, anchor_commit=first, found=True, hash=f"{s}:1")]
        )
        for s in symbols
    ]
    results = in_parallel(restored)
    assert not [r for r in results if isinstance(r, Exception)]
    assert set(
        CodeRef.objects.filter(memory_id=memory_id).exclude(symbol="").values_list("state", flat=True)
    ) == {"current"}
    assert Memory.objects.get(pk=memory_id).code_state is None


def test_first_vectors_of_a_new_model_written_at_once_all_land_under_one_index() -> None:
    """Several processes embedding with a model no vector was stored for yet: one creates its HNSW index,
    the others find it made, and no write fails."""
    model = f"fake-parallel-{uuid.uuid4().hex[:8]}"
    contents = [f"Fact {n} about the build pipeline." for n in range(WRITERS)]
    ids = [memory_remember(caller=Caller(agent="claude-code"), content=c, project=REPO).id for c in contents]

    def write(memory_id: str, content: str, n: int) -> Callable[[], object]:
        return lambda: store_vectors(model=model, items=[(memory_id, content, [1.0, 0.1 * n, 0.0])])

    results = in_parallel([write(i, c, n) for n, (i, c) in enumerate(zip(ids, contents, strict=True))])
    assert results == [1] * WRITERS
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'memory_embedding' AND indexdef LIKE %s",
            [f"%USING hnsw%{model}%"],
        )
        assert cursor.fetchone() == (1,)
    assert MemoryEmbedding.objects.filter(model=model).count() == WRITERS
