"""API key lifecycle through the owner's commands and the authentication service."""

import io
import json
import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command

from access.keys import api_key_authenticate, api_key_create, hash_key
from access.models import ApiKey
from kenfold import clock
from kenfold_common.errors import AuthenticationFailed

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_prints_only_the_key_on_stdout_and_stores_only_its_hash() -> None:
    out, err = run("create", "claude-code")
    raw = out.strip()
    assert re.fullmatch(r"kf_[A-Za-z0-9_-]{43}", raw)
    key = ApiKey.objects.get()
    assert key.agent == "claude-code" and not key.read_only
    assert bytes(key.key_hash) == hash_key(raw) and len(bytes(key.key_hash)) == 32
    assert key.prefix == raw[:11]
    assert raw not in err and key.prefix in err
    assert raw not in str(ApiKey.objects.values_list().get()), "the raw key is stored nowhere"


def test_create_rejects_bad_agent_names() -> None:
    with pytest.raises(CommandError, match="not a valid agent name"):
        run("create", "Claude Code")
    assert ApiKey.objects.count() == 0


@pytest.mark.parametrize("agent", ["unknown", "kenfold", "kenfold-dashboard", "kenfold-extractor"])
def test_a_key_may_not_write_as_kenfold_itself(agent: str) -> None:
    # The same rule as for OAuth grants (oauth.services.check_grant_agent): the memories Kenfold writes
    # as kenfold-… are its own (extraction, the dashboard), so no credential may pass for them.
    with pytest.raises(CommandError, match="keeps for itself"):
        run("create", agent)
    assert ApiKey.objects.count() == 0


def test_list_shows_active_keys_and_all_with_flag() -> None:
    first, _ = api_key_create(agent="claude-code")
    second, _ = api_key_create(agent="codex", read_only=True)
    run("revoke", str(first.id))
    active, _ = run("list")
    assert "codex" in active and "claude-code" not in active and "read " in active
    everything, _ = run("list", "--all")
    assert "claude-code" in everything and "revoked" in everything and second.prefix in everything


def test_a_label_tells_two_keys_of_one_agent_apart() -> None:
    _, err = run("create", "claude-code", "--label", "work laptop")
    assert "for agent claude-code (work laptop)." in err
    run("create", "claude-code")
    listing, _ = run("list")
    header, *rows = listing.splitlines()
    assert "LABEL" in header
    assert [row.split()[3] for row in rows] == ["work", "-"]
    with pytest.raises(CommandError, match="at most 64"):
        run("create", "codex", "--label", "x" * 65)
    with pytest.raises(CommandError, match="invisible"):
        run("create", "codex", "--label", "ci\u202e")
    assert ApiKey.objects.count() == 2


def test_revoke_by_prefix_is_idempotent_and_stops_the_key() -> None:
    key, raw = api_key_create(agent="codex")
    assert api_key_authenticate(token=raw).pk == key.pk
    out, _ = run("revoke", key.prefix)
    assert "Revoked" in out
    revoked_at = ApiKey.objects.get(pk=key.pk).revoked_at
    run("revoke", key.prefix)
    assert ApiKey.objects.get(pk=key.pk).revoked_at == revoked_at, "a second revoke changes nothing"
    with pytest.raises(AuthenticationFailed, match="revoked"):
        api_key_authenticate(token=raw)


def test_ambiguous_prefix_is_refused_and_revokes_nothing() -> None:
    a, _ = api_key_create(agent="one")
    b, _ = api_key_create(agent="two")
    ApiKey.objects.filter(pk=b.pk).update(prefix=a.prefix)  # force the rare collision of displayed prefixes
    with pytest.raises(CommandError, match="matches 2 keys"):
        run("revoke", a.prefix[:7])
    assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 0


def test_unknown_key_reference_is_reported() -> None:
    with pytest.raises(CommandError, match="no API key matches"):
        run("revoke", "kf_zzzzzzzz")
    with pytest.raises(CommandError, match="neither a key id nor a key prefix"):
        run("revoke", "hello")


def test_malformed_tokens_are_refused_without_a_database_query(django_assert_num_queries) -> None:
    with django_assert_num_queries(0):
        for token in ["", "kf_short", "Bearer kf_x", "kfa_" + "a" * 43, "kf_" + "a" * 42 + "!"]:
            with pytest.raises(AuthenticationFailed):
                api_key_authenticate(token=token)


def test_unknown_well_formed_key_is_refused() -> None:
    with pytest.raises(AuthenticationFailed, match="unknown API key"):
        api_key_authenticate(token="kf_" + "A" * 43)


def test_last_used_is_written_at_most_once_a_minute() -> None:
    key, raw = api_key_create(agent="claude-code")
    start = clock.now()
    with clock.frozen(start):
        api_key_authenticate(token=raw)
    first = ApiKey.objects.get(pk=key.pk).last_used_at
    assert first == start
    with clock.frozen(start + timedelta(seconds=59)):
        api_key_authenticate(token=raw)
    assert ApiKey.objects.get(pk=key.pk).last_used_at == first
    with clock.frozen(start + timedelta(seconds=61)):
        api_key_authenticate(token=raw)
    assert ApiKey.objects.get(pk=key.pk).last_used_at == start + timedelta(seconds=61)


def test_a_key_limited_to_projects_lists_them_normalized() -> None:
    _, err = run(
        "create",
        "chatgpt",
        "--project",
        "git@github.com:Acme/Shop.git",
        "--project",
        "https://github.com/acme/shop",
        "--project",
        "github.com/acme/docs",
        "--no-user-memories",
    )
    assert "It reaches only github.com/acme/docs, github.com/acme/shop, no user-wide memories." in err
    key = ApiKey.objects.get()
    assert key.projects == ["github.com/acme/docs", "github.com/acme/shop"] and not key.user_memories
    run("create", "codex")
    listing, _ = run("list")
    header, *rows = listing.splitlines()
    assert header.endswith("PROJECTS")
    assert rows[0].endswith("github.com/acme/docs,github.com/acme/shop -user") and rows[1].endswith("all")
    listed = [json.loads(line) for line in run("list", "--json")[0].splitlines()]
    assert [(row["agent"], row["projects"], row["user_memories"]) for row in listed] == [
        ("chatgpt", ["github.com/acme/docs", "github.com/acme/shop"], False),
        ("codex", None, True),
    ]


def test_a_local_path_or_secret_as_project_creates_no_key() -> None:
    with pytest.raises(CommandError, match="local path"):
        run("create", "codex", "--project", "/home/me/shop")
    assert ApiKey.objects.count() == 0


def test_key_projects_changes_the_limit_of_the_same_key() -> None:
    key, raw = api_key_create(agent="chatgpt", projects=["github.com/acme/shop"])
    out, _ = run("projects", key.prefix, "--add", "git@github.com:acme/docs.git")
    assert out.strip().endswith("now reaches only github.com/acme/docs, github.com/acme/shop.")
    run("projects", str(key.id), "--remove", "github.com/acme/shop")
    assert api_key_authenticate(token=raw).projects == ["github.com/acme/docs"]
    with pytest.raises(CommandError, match="last project; use --all"):
        run("projects", key.prefix, "--remove", "github.com/acme/docs")
    run("projects", key.prefix, "--set", "github.com/acme/a", "github.com/acme/b", "--no-user-memories")
    key.refresh_from_db()
    assert key.projects == ["github.com/acme/a", "github.com/acme/b"] and not key.user_memories
    out, _ = run("projects", key.prefix, "--all", "--user-memories")
    assert "now reaches every project." in out
    key.refresh_from_db()
    assert key.projects is None and key.user_memories
    with pytest.raises(CommandError, match="reaches every project; limit it with --set"):
        run("projects", key.prefix, "--add", "github.com/acme/shop")
    with pytest.raises(CommandError, match="say what to change"):
        run("projects", key.prefix)
    assert ApiKey.objects.get().projects is None
