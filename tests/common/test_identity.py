"""Project identity, agent names and session ids: the rules that make a repository one project everywhere."""

import pytest

from kenfold_common.errors import InvalidInput
from kenfold_common.identity import (
    AGENT_NAME_RE,
    USER_SCOPE,
    is_valid_agent_name,
    normalize_project,
    parse_session_id,
    sanitize_agent_name,
    scope_for_project,
)


@pytest.mark.parametrize(
    ("project", "identity"),
    [
        ("https://github.com/Org/Repo.git", "github.com/org/repo"),
        ("git@github.com:org/repo", "github.com/org/repo"),
        ("git@github.com:Org/Repo.git", "github.com/org/repo"),
        ("ssh://git@github.com/org/repo.git", "github.com/org/repo"),
        ("https://github.com/org/repo/", "github.com/org/repo"),
        ("https://github.com/org/repo.git/", "github.com/org/repo"),
        ("github.com/org/repo", "github.com/org/repo"),
        ("ssh://git@host:2222/a/b.git", "host/a/b"),
        ("https://gitlab.example.com:8443/group/sub/project", "gitlab.example.com/group/sub/project"),
        ("https://user:tok@gitlab.com/g/p", "gitlab.com/g/p"),
        ("https://oauth2:p@ss@gitlab.com/g/p", "gitlab.com/g/p"),  # the last "@" ends the credentials
        ("https://github.com/org/repo?tab=readme#install", "github.com/org/repo"),
        ("  My Project  ", "my project"),
        ("kenfold", "kenfold"),
        ("team:backend", "team/backend"),  # scp-style: the part before ":" has no "/"
        ("example.com/org/repo:v2", "example.com/org/repo:v2"),  # not scp-style: "/" before the ":"
        ("http://host:abc/x", "host/abc/x"),  # not a port: the scp form, as normalizing again would read it
        ("github.com/org/repo.git.git", "github.com/org/repo"),
        ("https://github.com:org/repo", "github.com/org/repo"),
        ("https://github.com/org/repo.git/.git/", "github.com/org/repo"),
        ("user:ghp_tok@github.com:org/repo.git", "github.com/org/repo"),  # credentials before the scp ":"
        ("https:// github.com/org/repo", "github.com/org/repo"),
    ],
)
def test_normalize_project(project: str, identity: str) -> None:
    assert normalize_project(project) == identity


def test_scp_and_https_remotes_are_the_same_project() -> None:
    remotes = [
        "git@github.com:kenfold/kenfold.git",
        "https://github.com/Kenfold/Kenfold",
        "ssh://git@github.com:22/kenfold/kenfold.git",
        "https://ci-bot:token@github.com/kenfold/kenfold.git/",
    ]

    assert {scope_for_project(remote) for remote in remotes} == {"project:github.com/kenfold/kenfold"}


@pytest.mark.parametrize(
    "project",
    [
        "/x",
        "/home/me/repo",
        "~/x",
        "~",
        "./x",
        "../x",
        ".",
        "..",
        ".\\x",
        "file:///x",
        "FILE://x",
        "\\\\server\\share",
        "C:\\x",
        "c:/x",
        "  /home/me/repo  ",
    ],
)
def test_local_paths_are_refused(project: str) -> None:
    with pytest.raises(InvalidInput, match="is a local path; pass the repository's git remote URL"):
        normalize_project(project)


def test_local_path_error_says_what_to_pass_instead() -> None:
    with pytest.raises(InvalidInput) as caught:
        normalize_project("/home/me/repo")

    assert str(caught.value) == (
        "project is a local path; pass the repository's git remote URL (for example "
        "git@github.com:org/repo.git) or a short project name, so every machine maps it to the same project"
    )


@pytest.mark.parametrize("project", ["https://", "https://user:s3cret@", ".git", "://", "https:///.git/"])
def test_project_empty_after_normalization_is_refused_without_echoing_it(project: str) -> None:
    with pytest.raises(InvalidInput, match=r"^project is empty once the scheme") as caught:
        normalize_project(project)

    assert "s3cret" not in str(caught.value)


def test_project_longer_than_256_characters_is_refused() -> None:
    assert normalize_project("https://" + "a" * 256 + ".git") == "a" * 256

    with pytest.raises(
        InvalidInput, match=r"^project is 257 characters after normalization, more than the 256"
    ):
        normalize_project("a" * 257)


@pytest.mark.parametrize(
    "project",
    [
        "my\nproject",
        "org/re\tpo",
        "repo\x7f",
        "a\x00b",
        "github.com/org/\u202erepo",  # right-to-left override
        "github.com/org/re\u2066po",  # left-to-right isolate
        "\ufeffgithub.com/org/repo",  # byte-order mark
        "github.com/org/re\u200bpo",  # zero-width space
        "github.com/org/re\x85po",  # C1 next line
        "github.com/org/re\u2028po",  # line separator
    ],
)
def test_project_with_control_or_invisible_characters_is_refused(project: str) -> None:
    with pytest.raises(InvalidInput, match=r"^project contains control or invisible characters") as caught:
        normalize_project(project)
    assert project.strip() not in str(caught.value), "the value is never echoed"


@pytest.mark.parametrize(
    "project", ["::", ":/", "git@:", "/:", "https://:8080/", "@:/", "-", "https://~/x", "https://./x"]
)
def test_project_with_no_host_or_name_left_is_refused(project: str) -> None:
    with pytest.raises(InvalidInput, match=r"^project (has no host or name left|is empty|is a local path)"):
        normalize_project(project)


def test_non_latin_project_names_are_kept() -> None:
    assert normalize_project("결제-서비스") == "결제-서비스"


def test_surrounding_newline_from_a_shell_is_trimmed_not_refused() -> None:
    assert normalize_project("git@github.com:org/repo.git\n") == "github.com/org/repo"


@pytest.mark.parametrize("project", [None, "", "   ", "\n"])
def test_no_project_means_user_scope(project: str | None) -> None:
    assert scope_for_project(project) == USER_SCOPE == "user"


def test_project_scope_is_prefixed_normalized_identity() -> None:
    assert scope_for_project("https://github.com/Org/Repo.git") == "project:github.com/org/repo"


def test_scope_for_a_local_path_is_refused() -> None:
    with pytest.raises(InvalidInput, match="is a local path"):
        scope_for_project("~/src/kenfold")


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("claude-code", True),
        ("codex", True),
        ("0agent", True),
        ("a.b_c-d", True),
        ("a" * 64, True),
        ("a" * 65, False),
        ("", False),
        ("-agent", False),
        (".agent", False),
        ("Claude", False),
        ("claude code", False),
        ("agent\n", False),  # "$" alone would accept a trailing newline
    ],
)
def test_is_valid_agent_name(name: str, valid: bool) -> None:
    assert is_valid_agent_name(name) is valid


def test_agent_name_pattern_is_the_specified_one() -> None:
    assert AGENT_NAME_RE.pattern == r"^[a-z0-9][a-z0-9._-]{0,63}$"


@pytest.mark.parametrize(
    ("client_name", "agent"),
    [
        ("Claude Code", "claude-code"),
        ("..Codex", "codex"),
        ("_-.opencode", "opencode"),
        ("  Codex  ", "codex"),
        ("openai-mcp/1.2", "openai-mcp-1.2"),
        ("Cursor (Nightly)", "cursor--nightly-"),
        ("", "unknown"),
        ("...", "unknown"),
        ("코덱스", "unknown"),
        (None, "unknown"),
    ],
)
def test_sanitize_agent_name(client_name: str | None, agent: str) -> None:
    assert sanitize_agent_name(client_name) == agent


def test_sanitized_long_name_is_cut_to_64_characters() -> None:
    agent = sanitize_agent_name("Agent" + "x" * 95)

    assert agent == "agent" + "x" * 59
    assert is_valid_agent_name(agent)


@pytest.mark.parametrize(
    ("meta", "session_id"),
    [
        ({"kenfold/session_id": "S-42"}, "S-42"),
        ({"kenfold/session_id": "  S-42\n"}, "S-42"),
        ({"kenfold/session_id": "세션-1"}, "세션-1"),
        ({"kenfold/session_id": "s" * 128}, "s" * 128),
        ({"kenfold/session_id": "s" * 129}, None),
        ({"kenfold/session_id": ""}, None),
        ({"kenfold/session_id": "   "}, None),
        ({"kenfold/session_id": "S\n42"}, None),
        ({"kenfold/session_id": "S\x7f42"}, None),
        ({"kenfold/session_id": 42}, None),
        ({"kenfold/session_id": None}, None),
        ({"kenfold/session_id": ["S-42"]}, None),
        ({"session_id": "S-42"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_parse_session_id(meta: dict[str, object] | None, session_id: str | None) -> None:
    assert parse_session_id(meta) == session_id
