"""Project identity is a fixed point: what normalize_project returns, it returns again (issue 37).

A stored scope that normalizes to something else splits one repository into two projects and makes an
export fail to import ("scope must be project:<normalized identity>"). The inputs are the shapes agents
pass (URLs, scp forms, ports, repeated `.git`, credentials, case, unicode) and arbitrary text. The seed is
fixed and the examples bounded, so `make test` is repeatable; bench/identity_fixed_point.py runs many more.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from kenfold_common.errors import InvalidInput
from kenfold_common.identity import normalize_project, scope_for_project

# Never produced by the name parts below (no "_"), so finding it in an identity means a credential leaked.
TOKEN = "ghp_leak"

_NAME_CHARS = st.one_of(
    st.sampled_from("aZ09-.ßİΣé결"),
    st.characters(categories=["Lu", "Ll", "Lo", "Nd"], exclude_characters="_"),
)
_name = st.text(_NAME_CHARS, min_size=1, max_size=10)
_host = st.lists(_name, min_size=1, max_size=3).map(".".join)
_path = st.lists(_name, max_size=3).map("/".join)
_credentials = st.sampled_from(
    ["git@", "User@", f"x-access-token:{TOKEN}@", f"oauth2:{TOKEN}@x@", f"{TOKEN}@", f"u:{TOKEN}:more@"]
)

remotes = st.tuples(
    st.sampled_from(["", " ", "\n"]),
    st.sampled_from(["", "https://", "HTTP://", "ssh://", "git+ssh://", "git://"]),
    st.one_of(st.just(""), _credentials),
    _host,
    st.sampled_from(["", ":22", ":8443", ":abc"]),
    st.sampled_from(["/", ":"]),
    _path,
    st.lists(st.sampled_from([".git", ".GIT", "/", "/.git", ".git/"]), max_size=4).map("".join),
    st.sampled_from(["", "?tab=readme", "#install", "/"]),
    st.sampled_from(["", " ", "\n"]),
).map("".join)
# Text made mostly of the characters the rules act on, and any text at all.
odd_text = st.one_of(
    st.text(st.one_of(st.sampled_from(":/@.~\\ gitGIT-?#"), st.characters()), max_size=40),
    st.text(max_size=40),
)
project_inputs = st.one_of(remotes, odd_text)


def assert_fixed_point(project: str) -> None:
    try:
        identity = normalize_project(project)
    except InvalidInput:
        return
    assert normalize_project(identity) == identity
    assert scope_for_project(identity) == "project:" + identity


@settings(derandomize=True, max_examples=400, deadline=None)
@given(project_inputs)
def test_normalizing_a_normalized_project_changes_nothing(project: str) -> None:
    assert_fixed_point(project)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(remotes)
def test_credentials_in_a_remote_never_reach_the_identity(remote: str) -> None:
    try:
        identity = normalize_project(remote)
    except InvalidInput:
        return
    assert TOKEN not in identity
    assert normalize_project(identity) == identity
