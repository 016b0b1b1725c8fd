"""Project identity is a fixed point: what normalize_project returns, it returns again (issue 37).

A stored scope that normalizes to something else splits one repository into two projects and makes an
export fail to import ("scope must be project:<normalized identity>"). The inputs are the shapes agents
pass (URLs, scp forms, ports, repeated `.git`, credentials, case, unicode) and arbitrary text. The seed is
fixed and the examples bounded, so `make test` is repeatable; bench/identity_fixed_point.py runs many more.
"""

from hypothesis import given, settings

from bench.support.identity_inputs import TOKEN, assert_fixed_point, project_inputs, remotes
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import normalize_project


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
