"""The golden questions run by themselves after a change: a consolidation applied, an archive imported,
an embedding model switch, a reindex. A burst of changes is scored once."""

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command
from django_q.models import Schedule

from consolidation.models import Consolidation
from consolidation.services import proposal_apply, proposal_record
from evals.models import EvalRun
from evals.services import EVAL_SCHEDULE, question_add
from memories import tasks
from memories.models import Memory
from memories.services.remember import memory_remember
from tests.evals.conftest import AGENT, REPO, SCOPE, run_due_schedule
from tests.provider_servers import openai_embeddings, provider_server

pytestmark = pytest.mark.django_db


def ask(shop: dict[str, str], name: str = "deploy", query: str = "how do deploys go out?") -> None:
    question_add(project=REPO, query=query, expected=[shop[name]], k=3, actor="kenfold-cli")


def scheduled() -> list[str]:
    return list(Schedule.objects.filter(name=EVAL_SCHEDULE).values_list("kwargs", flat=True))


def triggers() -> list[str]:
    return list(EvalRun.objects.order_by("started_at").values_list("trigger", flat=True))


def test_after_a_consolidation_is_applied_and_the_retired_memory_is_followed_to_the_kept_one(
    shop: dict[str, str], django_capture_on_commit_callbacks
) -> None:
    ask(shop, "payments", "are webhook retries charged twice?")
    longer = memory_remember(
        caller=AGENT,
        content="Payments are idempotent on the Stripe event id: webhook retries never charge twice, and "
        "refunds are idempotent on the refund id.",
        project=REPO,
    )
    proposal_record(
        kind="duplicate",
        scope=SCOPE,
        member_ids=[Memory.objects.get(pk=shop["payments"]).pk, Memory.objects.get(pk=longer.id).pk],
        keep_id=Memory.objects.get(pk=longer.id).pk,
        reason="The same rule.",
        model="scripted",
    )
    proposal = Consolidation.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        proposal_apply(proposal_id=str(proposal.pk), actor="kenfold-cli")
    assert scheduled() == ["{'trigger': 'consolidation'}"]
    assert triggers() == [], "not before the debounce has passed"

    run_due_schedule()
    assert triggers() == ["consolidation"]
    assert scheduled() == [], "the schedule ran once and is gone"
    result = EvalRun.objects.get().results.get()
    assert [str(memory_id) for memory_id in result.expected_ids] == [longer.id], "followed to the kept memory"
    assert result.found == 1


def test_after_an_import(shop: dict[str, str], tmp_path: Path, django_capture_on_commit_callbacks) -> None:
    ask(shop)
    archive = tmp_path / "shop.jsonl"
    call_command("export", "--out", str(archive), stdout=io.StringIO())
    Memory.objects.filter(pk=shop["style"]).delete()  # what the import brings back

    with django_capture_on_commit_callbacks(execute=True):
        call_command("import", "--dry-run", str(archive), stdout=io.StringIO())
    assert scheduled() == [], "a dry run changes nothing"
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import", str(archive), stdout=io.StringIO())
    assert scheduled() == ["{'trigger': 'import'}"]
    run_due_schedule()
    assert triggers() == ["import"]

    with django_capture_on_commit_callbacks(execute=True):
        call_command("import", str(archive), stdout=io.StringIO())
    assert scheduled() == [], "importing what is already here changes nothing"


def test_after_an_embedding_model_switch_once_its_vectors_are_complete(
    shop: dict[str, str], provider_env: Callable[..., None], django_capture_on_commit_callbacks
) -> None:
    ask(shop)
    call_command("eval", "run", stdout=io.StringIO())
    assert EvalRun.objects.get().models == []
    with django_capture_on_commit_callbacks(execute=True):
        tasks.embeddings_backfill()
    assert scheduled() == [], "the same models (none): no switch"

    with provider_server(openai_embeddings) as server:
        provider_env(
            KENFOLD_EMBED=None,
            KENFOLD_EMBED_URL=server.url,
            KENFOLD_EMBED_MODEL="fake",
            KENFOLD_EMBED_NAME="fake-embed",
        )
        with django_capture_on_commit_callbacks(execute=True):
            tasks.embeddings_backfill()
        assert scheduled() == ["{'trigger': 'model_switch'}"]
        run_due_schedule()
    assert triggers() == ["manual", "model_switch"]
    assert EvalRun.objects.get(trigger="model_switch").models == ["fake-embed"]
    with django_capture_on_commit_callbacks(execute=True):
        tasks.embeddings_backfill()
    assert scheduled() == [], "scored with these models already"


def test_after_a_reindex(
    shop: dict[str, str], provider_env: Callable[..., None], django_capture_on_commit_callbacks
) -> None:
    ask(shop)
    with provider_server(openai_embeddings) as server:
        provider_env(
            KENFOLD_EMBED=None,
            KENFOLD_EMBED_URL=server.url,
            KENFOLD_EMBED_MODEL="fake",
            KENFOLD_EMBED_NAME="fake-embed",
        )
        with django_capture_on_commit_callbacks(execute=True):
            call_command("reindex", stdout=io.StringIO(), stderr=io.StringIO())
        assert scheduled() == ["{'trigger': 'reindex'}"]
        run_due_schedule()
    assert triggers() == ["reindex"]


def test_a_burst_of_changes_is_scored_once(
    shop: dict[str, str], tmp_path: Path, django_capture_on_commit_callbacks
) -> None:
    from memories import extensions

    ask(shop)
    with django_capture_on_commit_callbacks(execute=True):
        extensions.retrieval_changed(extensions.ARCHIVE_IMPORTED)
    with django_capture_on_commit_callbacks(execute=True):
        extensions.retrieval_changed(extensions.CONSOLIDATION_APPLIED)
        extensions.retrieval_changed(extensions.CONSOLIDATION_APPLIED)
    assert scheduled() == ["{'trigger': 'import'}"], "the later changes joined the first one's run"
    run_due_schedule()
    run_due_schedule()
    assert triggers() == ["import"]

    with django_capture_on_commit_callbacks(execute=True):
        extensions.retrieval_changed(extensions.REINDEXED)
    assert scheduled() == ["{'trigger': 'reindex'}"], "a change after the run has started schedules another"


def test_no_questions_no_run(words_only: None, django_capture_on_commit_callbacks) -> None:
    from memories import extensions

    with django_capture_on_commit_callbacks(execute=True):
        extensions.retrieval_changed(extensions.ARCHIVE_IMPORTED)
    assert scheduled() == []


def test_a_run_while_another_worker_scores_waits_for_the_next_turn(shop: dict[str, str]) -> None:
    from evals.services import EVAL_TASK
    from evals.tasks import golden_questions_run
    from tests.threads import held_open

    ask(shop)
    # Another worker is scoring: its run holds the job's lock (kenfold.db_functions.one_at_a_time).
    with held_open(f"SELECT pg_advisory_xact_lock(hashtextextended('{EVAL_TASK}', 0))"):
        assert (
            golden_questions_run("reindex")
            == "another worker is scoring the golden questions; scheduled again"
        )
    assert triggers() == [] and scheduled() == ["{'trigger': 'reindex'}"]
    assert golden_questions_run("reindex").endswith("1/1 passed")
    assert triggers() == ["reindex"]
