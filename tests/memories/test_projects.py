"""Projects a client without a git remote can find (issue 35, item 5), at the service layer: get_context
without project lists the known projects, and an unknown project gets a hint naming the closest."""

from datetime import timedelta

import pytest

from access.caller import Caller
from kenfold import clock
from memories import selectors
from memories.models import Memory
from memories.services.delivery import context_deliver
from memories.services.remember import memory_remember
from memories.services.review import memory_forget

pytestmark = pytest.mark.django_db

CHATGPT = Caller(agent="chatgpt")


def remember(
    content: str, *, project: str | None, written_ago: timedelta = timedelta(0), **kwargs: object
) -> str:
    memory_id = memory_remember(caller=CHATGPT, content=content, project=project, **kwargs).id
    # One test is one transaction, whose now() every row would share: the write time is set by hand.
    Memory.objects.filter(pk=memory_id).update(created_at=clock.now() - written_ago)
    return memory_id


def names(projects: list | None) -> list[str]:
    return [project.name for project in projects or []]


def test_get_context_without_project_lists_projects_most_recent_first_with_counts() -> None:
    remember(
        "Checkout retries are idempotent.",
        project="git@github.com:Acme/shop.git",
        written_ago=timedelta(days=3),
    )
    remember(
        "Orders ship from the Berlin warehouse.",
        project="https://github.com/acme/shop",
        written_ago=timedelta(days=1),
    )
    remember("The blog is built with Hugo.", project="github.com/acme/blog", written_ago=timedelta(days=2))
    gone = remember("The wiki moved to Notion.", project="github.com/acme/wiki")
    memory_forget(caller=CHATGPT, memory_id=gone)
    remember("The user writes in British English.", project=None)

    output = context_deliver(caller=CHATGPT, task="write in British English")
    assert [(p.name, p.memories) for p in output.projects or []] == [
        ("github.com/acme/shop", 2),
        ("github.com/acme/blog", 1),
    ], "retired memories do not count; a project with none left is not listed"
    assert output.projects[0].last_written_at > output.projects[1].last_written_at
    assert "only user-wide memories" in output.hint and "pass the one you work on as project" in output.hint
    assert [view.content for view in output.sent_items()] == ["The user writes in British English."]


def test_the_listing_is_bounded_and_says_nothing_when_no_project_exists() -> None:
    remember("The user prefers short answers.", project=None, type="semantic")
    empty = context_deliver(caller=CHATGPT)
    assert (empty.projects, empty.hint) == (None, None)

    for number in range(selectors.PROJECTS_LISTED + 5):
        remember(
            f"Service {number} runs on port {8000 + number}.",
            project=f"svc-{number}",
            written_ago=timedelta(minutes=number),
        )
    listed = context_deliver(caller=CHATGPT).projects
    assert len(listed) == selectors.PROJECTS_LISTED
    assert names(listed)[:3] == ["svc-0", "svc-1", "svc-2"], "most recently written first"


def test_an_unknown_project_gets_a_hint_naming_the_closest_known_ones() -> None:
    remember("Checkout retries are idempotent.", project="github.com/acme/shop")
    remember("Invoices are PDFs.", project="github.com/acme/shop")
    remember("The storefront uses Next.js.", project="github.com/acme/shopfront")
    remember("The blog is built with Hugo.", project="github.com/acme/blog")

    recalled = selectors.memory_recall(caller=CHATGPT, query="checkout retries", project="shop")
    assert recalled.memories == []
    assert recalled.hint == (
        'Kenfold holds no memories for project "shop" yet. Closest known projects: github.com/acme/shop '
        "(2 memories), github.com/acme/shopfront (1 memory). If you meant one of them, call again with that "
        "name as project."
    )
    assert set(names(recalled.projects)) == {
        "github.com/acme/shop",
        "github.com/acme/shopfront",
        "github.com/acme/blog",
    }

    context = context_deliver(caller=CHATGPT, project="https://github.com/acme/shp.git")
    assert 'project "github.com/acme/shp"' in context.hint
    assert "Closest known project: github.com/acme/shop (2 memories). If you meant" in context.hint
    assert context.projects is not None

    found = selectors.memory_recall(caller=CHATGPT, query="checkout retries", project="github.com/acme/shop")
    assert (found.projects, found.hint) == (None, None), "a known project needs no hint"
    assert found.memories[0].content == "Checkout retries are idempotent."
    known = context_deliver(caller=CHATGPT, project="git@github.com:acme/shop.git")
    assert (known.projects, known.hint) == (None, None)
    user_wide = selectors.memory_recall(caller=CHATGPT, query="checkout retries")
    assert (user_wide.projects, user_wide.hint) == (None, None), (
        "recall without project is a user-wide search"
    )


def test_an_unknown_project_with_no_similar_name_or_no_projects_at_all_still_gets_a_word() -> None:
    nothing = selectors.memory_recall(caller=CHATGPT, query="deploys", project="payments")
    assert nothing.projects is None
    assert nothing.hint == (
        'Kenfold holds no memories for project "payments" yet, and none for any other project; memories '
        "you remember with this project start it."
    )
    remember("The blog is built with Hugo.", project="github.com/acme/blog")
    unrelated = selectors.memory_recall(caller=CHATGPT, query="deploys", project="payments")
    assert names(unrelated.projects) == ["github.com/acme/blog"]
    assert unrelated.hint == (
        'Kenfold holds no memories for project "payments" yet. No known project has a similar name; the '
        "known ones are listed in `projects`."
    )


def test_expired_and_proposed_memories_do_not_make_a_project_known() -> None:
    start = clock.now()
    with clock.frozen(start):
        remember("Staging is frozen.", project="github.com/acme/ops", type="temporary", ttl_seconds=60)
    remember("Use tabs.", project="github.com/acme/style", type="preference")  # proposed until approved
    with clock.frozen(start + timedelta(seconds=61)):
        output = context_deliver(caller=CHATGPT, project="github.com/acme/ops")
        assert output.hint.startswith('Kenfold holds no memories for project "github.com/acme/ops" yet')
        assert output.projects is None


def test_closest_compares_whole_names_and_last_segments() -> None:
    known = [
        selectors.ProjectView(name=name, memories=1, last_written_at=clock.now())
        for name in (
            "gitlab.com/team/api-gateway",
            "github.com/acme/shop",
            "github.com/other/shop",
            "billing",
        )
    ]
    assert names(selectors.project_closest(name="shop", known=known)) == [
        "github.com/acme/shop",
        "github.com/other/shop",
    ], "equal last segments, in the listing's (recency) order"
    assert names(selectors.project_closest(name="github.com/team/api-gatway", known=known)) == [
        "gitlab.com/team/api-gateway"
    ]
    assert names(selectors.project_closest(name="biling", known=known)) == ["billing"]
    assert selectors.project_closest(name="kernel", known=known) == []
