"""Review says why the poisoning screen held a memory: `memory review`, the review page, the memory page."""

import io

import pytest
from django.core.management import call_command

from tests.dashboard.conftest import Owner
from tests.memories.test_poisoning import POISON, remember

pytestmark = pytest.mark.django_db


def test_review_says_why_a_memory_was_held(owner: Owner) -> None:
    held = remember(POISON, type="project")
    out = io.StringIO()
    call_command("memory", "review", stdin=io.StringIO("s\n"), stdout=out)
    text = out.getvalue()
    assert "held: it reads like an instruction to an AI model: tries to override the reading model's" in text
    assert "pipes a downloaded script into a shell" in text
    page = owner.page("/dashboard/review")
    assert "Held: it reads like an instruction to an AI model." in page
    assert "it pipes a downloaded script into a shell." in page
    detail = owner.page(f"/dashboard/memories/{held.id}")
    assert "Flagged: it reads like an instruction to an AI model." in detail
