"""Golden questions' fixtures: a small project store searched by words only (no model to load), and the
worker's scheduler run as the worker runs it."""

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import Schedule
from django_q.scheduler import scheduler

from access.caller import Caller
from evals.services import EVAL_SCHEDULE
from memories.services.remember import memory_remember

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/shop"
SCOPE = "project:github.com/acme/shop"

FACTS = {
    "deploy": "Deploys go out through the GitHub Actions workflow deploy.yml on every tag.",
    "database": "The shop stores orders in PostgreSQL 16; Redis only caches sessions.",
    "payments": "Payments are idempotent on the Stripe event id, so webhook retries never charge twice.",
    "style": "Python code is formatted with ruff format and checked with ruff check.",
}


@pytest.fixture
def words_only(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off", KENFOLD_EMBED_URL=None, KENFOLD_RERANK_URL=None)


@pytest.fixture
def shop(words_only: None) -> dict[str, str]:
    """The project's memories, by name: their ids."""
    return {
        name: memory_remember(caller=AGENT, content=content, project=REPO).id
        for name, content in FACTS.items()
    }


def run_due_schedule() -> None:
    """The debounce has passed: the worker's scheduler queues the run (django-q2 in sync mode runs it)."""
    Schedule.objects.filter(name=EVAL_SCHEDULE).update(next_run=timezone.now() - timedelta(seconds=1))
    scheduler(broker=get_broker())
