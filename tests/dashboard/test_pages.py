"""The dashboard's pages and actions (spec §1.17 and the Dashboard scenarios of §2), as the owner uses them."""

import re
from datetime import timedelta
from html import unescape

import pytest

from access import keys
from access.caller import Caller
from access.models import ApiKey
from coderefs.models import CodeRef, RefState
from dashboard.views import ACTOR
from kenfold import clock
from kenfold_common.errors import AuthenticationFailed
from memories import selectors
from memories.models import Extraction, Memory, MemoryEdge, Status
from oauth.models import OAuthGrant
from tests.dashboard.conftest import HOST, Owner, memory

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def ids_in(html: str, prefix: str = "/dashboard/memories/") -> list[str]:
    return re.findall(re.escape(prefix) + r"([0-9a-f-]{36})", html)


# --- overview --------------------------------------------------------------------------------------------


def test_overview_shows_what_extraction_refused_by_kind(owner: Owner) -> None:
    for n, refused in enumerate([{"secret": 1, "evidence_not_in_session": 2}, {"secret": 2}]):
        source = memory(content=f"session summary {n}", type="episodic")
        Extraction.objects.create(source=source, status="done", refused=refused)
    html = owner.client.get("/dashboard/").content.decode()
    rows = dict(re.findall(r"<th>refused: ([a-z_]+)</th><td>(\d+)</td>", html))
    assert rows == {"secret": "3", "evidence_not_in_session": "2"}


def test_overview_counts(owner: Owner) -> None:
    memory(content="active one", scope="project:github.com/a/b")
    memory(content="active two", type="preference")
    memory(content="stale one", code_state="changed")
    memory(content="waiting", status=Status.PROPOSED, scope="project:github.com/a/b")
    memory(content="old", status=Status.SUPERSEDED)
    memory(content="gone", status=Status.DELETED)
    keys.api_key_create(agent="codex")
    revoked, _raw = keys.api_key_create(agent="old-agent")
    keys.api_key_revoke(ident=str(revoked.id))
    html = owner.page("/dashboard/")
    cards = dict(
        (label, int(n)) for n, label in re.findall(r'<span class="n">(\d+)</span> ([A-Za-z ]+)</a>', html)
    )
    assert cards == {
        "pending reviews": 1,
        "pending proposals": 0,
        "stale": 1,
        "API keys": 1,
        "remote clients": 0,
    }
    rows = dict(re.findall(r"<th><a [^>]*>([a-z]+)</a></th><td>(\d+)</td>", html))
    assert (
        rows["active"] == "3"
        and rows["proposed"] == "1"
        and rows["superseded"] == "1"
        and rows["deleted"] == "1"
    )
    assert rows["project"] == "2" and rows["preference"] == "1" and rows["episodic"] == "0"
    scopes = re.findall(r'class="wrap">([^<]+)</a></td><td>(\d+)</td><td>(?:<a [^>]*>)?(\d+)', html)
    assert scopes == [("project:github.com/a/b", "1", "1"), ("user", "2", "0")]
    assert "summaries waiting" in html and "memories extracted" in html


def test_overview_plots_memories_per_day_by_agent(owner: Owner) -> None:
    today = clock.now()
    for days_ago, agent in [(0, "codex"), (0, "codex"), (0, "claude-code"), (3, "codex"), (40, "codex")]:
        memory(
            content=f"note {days_ago} {agent} {Memory.objects.count()}",
            source_agent=agent,
            created_at=today - timedelta(days=days_ago),
        )
    html = owner.page("/dashboard/")
    svg = html[html.index('<svg class="chart"') : html.index("</svg>")]
    titles = re.findall(r"<title>([^<]+)</title>", svg)
    day = today.date()
    assert sorted(titles) == sorted(
        [
            f"{day.isoformat()}: 2 by codex",
            f"{day.isoformat()}: 1 by claude-code",
            f"{(day - timedelta(days=3)).isoformat()}: 1 by codex",
        ]
    )
    assert "4 memories written in the last 30 days, at most 3 on one day" in svg
    assert "codex (3)" in html and "claude-code (1)" in html
    # The tallest day fills the plot; the bars of one day are stacked.
    heights = sorted(float(h) for h in re.findall(r'height="([\d.]+)" fill', svg))
    assert heights == pytest.approx([142 / 3, 142 / 3, 2 * 142 / 3], abs=0.01)


def test_the_overview_says_when_nothing_was_written(owner: Owner) -> None:
    assert "No memories were written in the last 30 days." in owner.page("/dashboard/")


# --- review ----------------------------------------------------------------------------------------------


def _proposal(content: str, **attrs: object) -> Memory:
    return memory(content=content, status=Status.PROPOSED, type="preference", attrs=attrs)


def test_review_lists_proposals_oldest_first_with_evidence_and_replace_buttons(owner: Owner) -> None:
    summary = memory(type="episodic", content="Session summary: we talked about tabs")
    old_rule = memory(content="The user indents with spaces in every project.")
    start = clock.now() - timedelta(hours=2)
    first = _proposal(
        "The user indents with tabs in every project.",
        evidence="I always use tabs",
        extracted_from=str(summary.id),
        similar_to=[str(old_rule.id)],
        extractor_model="qwen",
    )
    Memory.objects.filter(pk=first.pk).update(created_at=start)
    second = _proposal("The user wants short answers.", evidence="keep it short")
    html = owner.page("/dashboard/review")
    order = [i for i in dict.fromkeys(re.findall(r"/dashboard/review/([0-9a-f-]{36})/approve", html))]
    assert order == [str(first.id), str(second.id)]
    assert "Evidence: “I always use tabs”" in html
    assert "Session summary: we talked about tabs" in html
    assert f'name="replaces" value="{old_rule.id}"' in html
    assert "Approve, replacing this" in html
    assert "model qwen" in html


def test_review_shows_the_approved_memory_a_proposal_replaces(owner: Owner) -> None:
    approved = memory(content="Answer in English.", type="preference", trust="user")
    memory(content="Answer in any language.", status=Status.PROPOSED, type="semantic", supersedes=approved)
    html = unescape(owner.page("/dashboard/review"))
    assert "Replaces a memory you approved: " in html
    assert f'<a href="/dashboard/memories/{approved.id}" class="content">Answer in English.</a>' in html
    assert f'name="replaces" value="{approved.id}"' not in html, "shown as replaced, not again as similar"


def test_review_pages_and_scope_filter(owner: Owner) -> None:
    for n in range(23):
        _proposal(f"user preference number {n}")
    memory(content="a project proposal", status=Status.PROPOSED, scope="project:github.com/a/b")
    first = owner.page("/dashboard/review")
    assert len(set(re.findall(r"/dashboard/review/([0-9a-f-]{36})/approve", first))) == 20
    assert "page 1 of 2" in first
    second = owner.page("/dashboard/review?page=2")
    assert len(set(re.findall(r"/dashboard/review/([0-9a-f-]{36})/approve", second))) == 4
    scoped = owner.page("/dashboard/review?scope=project:github.com/a/b")
    assert "a project proposal" in scoped and "user preference number" not in scoped
    assert owner.get("/dashboard/review?page=0").status_code == 400


def test_approve_is_attributed_and_a_second_decision_is_reported(owner: Owner) -> None:
    proposal = _proposal("The user likes dark themes.")
    answer = owner.post(f"/dashboard/review/{proposal.id}/approve", {"back": "/dashboard/review"})
    assert answer.status_code == 303 and answer["Location"] == "/dashboard/review"
    proposal.refresh_from_db()
    assert proposal.status == Status.ACTIVE and proposal.trust == "user"
    assert proposal.attrs["approved_by"] == ACTOR
    assert owner.flash() == "Approved."
    owner.post(f"/dashboard/review/{proposal.id}/reject")
    assert "Already decided: that memory is active now" in owner.flash()
    proposal.refresh_from_db()
    assert proposal.status == Status.ACTIVE


def test_back_cannot_leave_the_dashboard(owner: Owner) -> None:
    proposal = _proposal("The user likes light themes.")
    answer = owner.post(f"/dashboard/review/{proposal.id}/approve", {"back": "https://evil.example/"})
    assert answer["Location"] == "/dashboard/"
    other = _proposal("The user likes big fonts.")
    answer = owner.post(f"/dashboard/review/{other.id}/reject", {"back": "//evil.example/dashboard/"})
    assert answer["Location"] == "/dashboard/"


def test_approve_replacing_retires_the_old_memory(owner: Owner) -> None:
    old = memory(content="Deploys go out on Fridays.", type="preference")
    proposal = _proposal("Deploys go out on Mondays.", similar_to=[str(old.id)])
    owner.post(f"/dashboard/review/{proposal.id}/approve", {"replaces": str(old.id)})
    old.refresh_from_db()
    proposal.refresh_from_db()
    assert old.status == Status.SUPERSEDED
    assert proposal.status == Status.ACTIVE and proposal.supersedes_id == old.id
    assert owner.flash() == "Approved, replacing the similar memory."


def test_reject_records_the_reason_or_the_default(owner: Owner) -> None:
    first, second = _proposal("one proposal"), _proposal("another proposal")
    owner.post(f"/dashboard/review/{first.id}/reject", {"reason": "not true any more"})
    owner.post(f"/dashboard/review/{second.id}/reject")
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == second.status == Status.DELETED
    assert first.attrs["forget_reason"] == "not true any more"
    assert second.attrs["forget_reason"] == "rejected in the dashboard"
    assert first.attrs["forgotten_by"] == ACTOR
    owner.post(f"/dashboard/review/{first.id}/approve")
    assert "Already decided: that memory is deleted now" in owner.flash()


def test_a_too_long_reason_changes_nothing(owner: Owner) -> None:
    proposal = _proposal("a proposal")
    owner.post(f"/dashboard/review/{proposal.id}/reject", {"reason": "x" * 501})
    assert "the reason is 501 characters; write at most 500" in owner.flash()
    proposal.refresh_from_db()
    assert proposal.status == Status.PROPOSED


def test_deciding_on_a_memory_that_is_gone(owner: Owner) -> None:
    proposal = _proposal("soon gone")
    Memory.objects.filter(pk=proposal.pk).delete()
    owner.post(f"/dashboard/review/{proposal.id}/approve")
    assert owner.flash() == "That memory no longer exists; nothing was changed."
    # Not a memory id at all: the service's own words, as the forget button gets them.
    owner.post("/dashboard/review/not-an-id/reject")
    assert owner.flash().startswith("id is not a memory id (a UUID)")


def test_a_second_approval_is_no_decision_to_report(owner: Owner) -> None:
    # The service's rule: approving an approved memory again changes nothing and is not an error (the CLI's
    # `memory approve` is safe to repeat); the dashboard no longer has a rule of its own about it.
    proposal = _proposal("The user likes tabs.")
    owner.post(f"/dashboard/review/{proposal.id}/approve")
    owner.post(f"/dashboard/review/{proposal.id}/approve")
    assert owner.flash() == "Approved. Approved."
    proposal.refresh_from_db()
    assert proposal.status == Status.ACTIVE


# --- escaping ----------------------------------------------------------------------------------------------


def test_memory_text_is_always_escaped(owner: Owner) -> None:
    proposal = _proposal(HOSTILE, evidence=HOSTILE, **{HOSTILE: HOSTILE})
    active = memory(content=HOSTILE + " tabs", source_agent="codex", scope="project:github.com/x/y")
    for path in (
        "/dashboard/review",
        "/dashboard/memories?status=all",
        f"/dashboard/memories/{proposal.id}",
        f"/dashboard/memories/{active.id}",
        "/dashboard/memories?q=tabs",
        "/dashboard/",
    ):
        html = owner.page(path)
        assert "<script>" not in html and "<img" not in html, path
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in owner.page(
        f"/dashboard/memories/{proposal.id}"
    )


def test_invisible_and_reordering_characters_are_written_out(owner: Owner) -> None:
    # A right-to-left override would show "txt.exe" as "exe.txt"; an escape sequence is invisible.
    target = memory(content="run \u202etxt.exe\u202c now \x1b[2J", attrs={"note": "zero\u200bwidth"})
    html = owner.page(f"/dashboard/memories/{target.id}")
    assert "\u202e" not in html and "\x1b" not in html and "\u200b" not in html
    assert "run \\u202etxt.exe\\u202c now \\x1b[2J" in html
    assert "zero\\u200bwidth" in html


# --- memories ----------------------------------------------------------------------------------------------


def test_search_is_ranked_as_agents_see_it(owner: Owner, provider_env) -> None:
    provider_env(KENFOLD_EMBED="off")
    for text in [
        "The deploy script lives in scripts/deploy.sh and needs the staging key.",
        "We deploy on Mondays after the standup.",
        "The user prefers tabs over spaces.",
        "Deploy previews are built for every pull request.",
    ]:
        memory(content=text)
    memory(content="A proposed deploy note", status=Status.PROPOSED)
    html = owner.page("/dashboard/memories?q=deploy")
    assert "Ranked as agents see it" in html
    agents = selectors.memory_recall(caller=Caller(agent="codex"), query="deploy", limit=50)
    assert ids_in(html) == [view.id for view in agents.memories]
    assert len(ids_in(html)) == 3  # the proposal is not served, so not found


def test_search_covers_every_scope_or_the_one_chosen(owner: Owner, provider_env) -> None:
    provider_env(KENFOLD_EMBED="off")
    mine = memory(content="pnpm is the package manager", scope="project:github.com/a/b")
    theirs = memory(content="pnpm workspaces are used", scope="project:github.com/c/d")
    assert set(ids_in(owner.page("/dashboard/memories?q=pnpm"))) == {str(mine.id), str(theirs.id)}
    scoped = owner.page("/dashboard/memories?q=pnpm&scope=project:github.com/a/b")
    assert ids_in(scoped) == [str(mine.id)]


def test_listing_filters_status_type_scope_and_stale(owner: Owner) -> None:
    active = memory(content="active fact")
    stale = memory(content="stale fact", code_state="missing")
    proposal = memory(content="a proposal", status=Status.PROPOSED, type="preference")
    gone = memory(content="gone", status=Status.DELETED, scope="project:github.com/a/b")
    assert set(ids_in(owner.page("/dashboard/memories"))) == {str(active.id), str(stale.id)}
    assert ids_in(owner.page("/dashboard/memories?status=stale")) == [str(stale.id)]
    assert ids_in(owner.page("/dashboard/memories?status=proposed")) == [str(proposal.id)]
    assert ids_in(owner.page("/dashboard/memories?status=all&type=preference")) == [str(proposal.id)]
    assert ids_in(owner.page("/dashboard/memories?status=all&scope=project:github.com/a/b")) == [str(gone.id)]
    # Newest first.
    assert ids_in(owner.page("/dashboard/memories?status=all")) == [
        str(m.id) for m in (gone, proposal, stale, active)
    ]
    assert "stale (missing)" in owner.page("/dashboard/memories?status=stale")


def test_listing_pages_by_fifty(owner: Owner) -> None:
    start = clock.now() - timedelta(days=1)
    for n in range(55):
        memory(content=f"fact number {n}", created_at=start + timedelta(minutes=n))
    first = owner.page("/dashboard/memories")
    assert len(ids_in(first)) == 50 and "page=2" in first
    second = owner.page("/dashboard/memories?page=2")
    assert len(ids_in(second)) == 5 and "fact number 0<" in second


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("status=bogus", "status must be one of"),
        ("type=bogus&status=all", "is not one of"),
        ("page=1001", "page must be between 1 and 1000"),
        ("page=-1", "page must be between 1 and 1000"),
        ("page=two", "page must be between 1 and 1000"),
    ],
)
def test_bad_filters_are_explained(owner: Owner, query: str, message: str) -> None:
    response = owner.get("/dashboard/memories?" + query)
    assert response.status_code == 400
    assert message in unescape(response.content.decode())


def test_detail_shows_attrs_refs_versions_both_ways_and_edges(owner: Owner) -> None:
    v1 = memory(content="version one", status=Status.SUPERSEDED, scope="project:github.com/a/b")
    v2 = memory(
        content="version two", status=Status.SUPERSEDED, supersedes=v1, scope="project:github.com/a/b"
    )
    v3 = memory(
        content="version three", supersedes=v2, attrs={"origin": "a test"}, scope="project:github.com/a/b"
    )
    source = memory(type="episodic", content="the session it came from")
    MemoryEdge.objects.create(src=v2, relation="derived_from", dst=source, source_agent="kenfold-extractor")
    MemoryEdge.objects.create(src=v3, relation="relates_to", dst=v2, source_agent="codex")
    CodeRef.objects.create(
        memory=v2, scope="project:github.com/a/b", path="src/app.py", symbol="main", state=RefState.CHANGED
    )
    html = owner.page(f"/dashboard/memories/{v2.id}")
    versions = html[html.index("<h2>Versions</h2>") : html.index("<h2>Links</h2>")]
    assert str(v1.id) in versions and "this version" in versions and str(v3.id) in versions
    assert versions.index(str(v1.id)) < versions.index("this version") < versions.index(str(v3.id))
    links = html[html.index("<h2>Links</h2>") :]
    assert "derived_from" in links and "the session it came from" in links
    assert "relates_to" in links and "version three" in links
    assert "src/app.py" in html and "main" in html and "changed" in html
    assert "origin" in owner.page(f"/dashboard/memories/{v3.id}")


def test_detail_of_a_proposal_shows_similar_memories(owner: Owner) -> None:
    old = memory(content="The user writes commit messages in English.", type="preference")
    proposal = _proposal("The user writes commit messages in Korean.", similar_to=[str(old.id)])
    html = owner.page(f"/dashboard/memories/{proposal.id}")
    assert "Similar active memories" in html and str(old.id) in html


@pytest.mark.parametrize("bad", ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "%3Cscript%3E"])
def test_a_bad_memory_id_is_404(owner: Owner, bad: str) -> None:
    response = owner.get(f"/dashboard/memories/{bad}")
    assert response.status_code == 404
    assert "<script>" not in response.content.decode()


def test_forget_is_attributed_to_the_dashboard(owner: Owner) -> None:
    target = memory(content="forget me")
    answer = owner.post(f"/dashboard/memories/{target.id}/forget", {"reason": "wrong"})
    assert answer["Location"] == f"/dashboard/memories/{target.id}"
    target.refresh_from_db()
    assert target.status == Status.DELETED
    assert target.attrs["forgotten_by"] == ACTOR and target.attrs["forget_reason"] == "wrong"
    assert "Forgotten" in owner.flash(f"/dashboard/memories/{target.id}")
    owner.post(f"/dashboard/memories/{target.id}/forget")
    assert "Already forgotten" in owner.flash()


# --- clients -----------------------------------------------------------------------------------------------


def test_a_new_key_is_shown_once_and_works(owner: Owner) -> None:
    response = owner.post("/dashboard/clients/keys", {"agent": "opencode", "access": "read"})
    assert response.status_code == 200
    html = response.content.decode()
    raw = re.search(r"(kf_[A-Za-z0-9_-]{43})", html).group(1)
    assert "shown only this once" in html and response["Cache-Control"] == "no-store"
    key = keys.api_key_authenticate(token=raw)
    assert key.agent == "opencode" and key.read_only
    assert raw not in owner.page("/dashboard/clients")
    write = owner.post("/dashboard/clients/keys", {"agent": "codex", "access": "write"}).content.decode()
    assert (
        keys.api_key_authenticate(token=re.search(r"(kf_[A-Za-z0-9_-]{43})", write).group(1)).read_only
        is False
    )


def test_a_new_key_shows_its_connect_lines_and_its_label(owner: Owner) -> None:
    html = owner.post(
        "/dashboard/clients/keys", {"agent": "claude-code", "access": "write", "label": "  work   laptop "}
    ).content.decode()
    raw = re.search(r"(kf_[A-Za-z0-9_-]{43})", html).group(1)
    lines = unescape(re.search(r'<pre class="wrap connect">(.*?)</pre>', html, re.S).group(1)).splitlines()
    assert lines == [
        f"mkdir -p ~/.config/kenfold && (umask 077 && printf '%s\\n' '{raw}' > ~/.config/kenfold/claude-code.key)",
        f"kenfold connect claude-code --url http://{HOST}/mcp --key-file ~/.config/kenfold/claude-code.key",
    ]
    assert "<strong>claude-code</strong> (work laptop)" in html
    assert keys.api_key_authenticate(token=raw).label == "work laptop"
    listing = owner.page("/dashboard/clients")
    assert "<td>claude-code</td><td>work laptop</td>" in listing and raw not in listing

    # An agent `kenfold connect` does not know gets the lines of both, to choose from.
    other = owner.post("/dashboard/clients/keys", {"agent": "my-bot", "access": "read"}).content.decode()
    assert "kenfold connect claude-code --url" in other and "kenfold connect codex --url" in other
    assert "~/.config/kenfold/my-bot.key" in other
    too_long = owner.post("/dashboard/clients/keys", {"agent": "codex", "access": "read", "label": "x" * 65})
    assert too_long.status_code == 400 and "at most 64" in too_long.content.decode()


@pytest.mark.parametrize(("agent", "access"), [("Has Spaces", "read"), ("", "write"), ("codex", "admin")])
def test_a_bad_key_request_creates_nothing(owner: Owner, agent: str, access: str) -> None:
    response = owner.post("/dashboard/clients/keys", {"agent": agent, "access": access})
    assert response.status_code == 400
    assert not ApiKey.objects.exists()


def test_revoke_a_key(owner: Owner) -> None:
    key, raw = keys.api_key_create(agent="codex")
    _other, other_raw = keys.api_key_create(agent="claude-code")
    assert key.prefix in owner.page("/dashboard/clients")
    answer = owner.post(f"/dashboard/clients/keys/{key.id}/revoke")
    assert answer.status_code == 303
    assert "Revoked the key" in owner.flash("/dashboard/clients")
    with pytest.raises(AuthenticationFailed, match="revoked"):
        keys.api_key_authenticate(token=raw)
    assert keys.api_key_authenticate(token=other_raw).agent == "claude-code"
    owner.post(f"/dashboard/clients/keys/{key.id}/revoke")
    assert "Already revoked" in owner.flash()


def test_revoke_a_grant(owner: Owner) -> None:
    from oauth2_provider.models import get_application_model

    application = get_application_model().objects.create(
        name="ChatGPT",
        client_id="kfd_test",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://chatgpt.com/cb",
    )
    grant = OAuthGrant.objects.create(
        application=application,
        agent="chatgpt",
        scope="memory:read",
        resource="https://m.example/mcp",
        code_checksum="c" * 64,
        code_challenge="x" * 43,
        code_redeemed_at=clock.now(),
        projects=["github.com/acme/shop"],
    )
    html = owner.page("/dashboard/clients")
    assert "ChatGPT" in html and "chatgpt" in html
    assert '<td class="wrap reach">only github.com/acme/shop</td>' in html
    owner.post(f"/dashboard/clients/grants/{grant.id}/revoke")
    grant.refresh_from_db()
    assert grant.revoked_at is not None and grant.revoke_reason == "revoked by the owner"
    assert "Disconnected ChatGPT" in owner.flash("/dashboard/clients")
    assert "ChatGPT" not in owner.page("/dashboard/clients")
    owner.post(f"/dashboard/clients/grants/{grant.id}/revoke")
    assert "Already revoked" in owner.flash()


def test_the_clients_page_shows_and_changes_what_a_key_reaches(owner: Owner) -> None:
    html = owner.post(
        "/dashboard/clients/keys",
        {
            "agent": "chatgpt",
            "access": "write",
            "projects": "git@github.com:acme/shop.git\r\n\r\n",
            "no_user_memories": "on",
        },
    ).content.decode()
    raw = re.search(r"(kf_[A-Za-z0-9_-]{43})", html).group(1)
    key = keys.api_key_authenticate(token=raw)
    assert key.projects == ["github.com/acme/shop"] and not key.user_memories
    listing = owner.page("/dashboard/clients")
    assert '<span class="reach">only github.com/acme/shop, no user-wide memories</span>' in listing
    answer = owner.post(
        f"/dashboard/clients/keys/{key.id}/projects",
        {"projects": "github.com/acme/shop\ngithub.com/acme/docs"},
    )
    assert answer.status_code == 303
    assert "now reaches only github.com/acme/docs, github.com/acme/shop." in owner.flash("/dashboard/clients")
    key.refresh_from_db()
    assert key.projects == ["github.com/acme/docs", "github.com/acme/shop"] and key.user_memories
    owner.post(f"/dashboard/clients/keys/{key.id}/projects", {"projects": "/home/me/shop"})
    assert "local path" in owner.flash("/dashboard/clients")
    owner.post(f"/dashboard/clients/keys/{key.id}/projects", {"projects": ""})
    assert "now reaches every project." in owner.flash("/dashboard/clients")
    assert keys.api_key_authenticate(token=raw).projects is None
    refused = owner.post(
        "/dashboard/clients/keys", {"agent": "codex", "access": "read", "projects": "~/shop"}
    )
    assert refused.status_code == 400 and "local path" in refused.content.decode()
    assert ApiKey.objects.count() == 1
