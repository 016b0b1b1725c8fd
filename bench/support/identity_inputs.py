"""The inputs project identity must survive and the fixed-point property, for the test
(tests/common/test_identity_fixed_point.py) and its longer run (bench/identity_fixed_point.py)."""

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
