"""What Kenfold's own string formats in /api/v1/openapi.json mean, for schemathesis (loaded through
SCHEMATHESIS_HOOKS by test_openapi.py).

The document names a format where a rule is beyond JSON Schema (kenfold.openapi: PROJECT_FORMAT and the two
path formats). Schemathesis generates anything for a format it does not know, so without these every
"schema-valid" request with a random project would be refused; with them it generates values that are
valid by construction (a host, an owner, a name; path segments and an extension) and checks that the
server accepts them.
"""

import schemathesis
from hypothesis import strategies as st

from kenfold.openapi import DOC_PATH_FORMAT, PROJECT_FORMAT, REF_PATH_FORMAT

_NAME = r"[a-z0-9][a-z0-9_-]{0,11}"
_SEGMENT = r"[a-z_][a-z0-9_-]{0,11}"

_projects = st.one_of(
    st.from_regex(rf"\A{_NAME}\Z"),
    st.builds(
        "{}{}/{}/{}{}".format,
        st.sampled_from(["", "https://", "ssh://git@"]),
        st.sampled_from(["github.com", "gitlab.com", "git.example.org"]),
        st.from_regex(rf"\A{_NAME}\Z"),
        st.from_regex(rf"\A{_NAME}\Z"),
        st.sampled_from(["", ".git"]),
    ),
)


def _paths(extensions: list[str]) -> st.SearchStrategy[str]:
    return st.builds(
        "{}{}.{}".format,
        st.lists(st.from_regex(rf"\A{_SEGMENT}/\Z"), max_size=3).map("".join),
        st.from_regex(rf"\A{_SEGMENT}\Z"),
        st.sampled_from(extensions),
    )


schemathesis.openapi.format(PROJECT_FORMAT, _projects)
schemathesis.openapi.format(REF_PATH_FORMAT, _paths(["py", "go", "ts", "rs", "java"]))
schemathesis.openapi.format(DOC_PATH_FORMAT, _paths(["md", "mdx"]))
