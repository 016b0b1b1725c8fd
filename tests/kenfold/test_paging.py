"""The one pagination rule (kenfold.paging): an agent's limit, a selector's window, a page number."""

import pytest

from kenfold import paging
from kenfold_common.errors import InvalidInput


@pytest.mark.parametrize(
    ("limit", "expected"), [(None, 10), (0, 10), (1, 1), (50, 50), (51, 50), (10_000, 50)]
)
def test_an_agent_limit_defaults_and_is_clamped(limit: int | None, expected: int) -> None:
    assert paging.agent_limit(limit, default=10) == expected


def test_a_negative_agent_limit_is_refused_with_the_range() -> None:
    with pytest.raises(InvalidInput) as refused:
        paging.agent_limit(-1, default=10)
    assert refused.value.message == "limit must be between 1 and 50"


@pytest.mark.parametrize(
    ("limit", "offset", "expected"),
    [(50, 0, slice(0, 50)), (0, 0, slice(0, 1)), (-3, -7, slice(0, 1)), (501, 20, slice(20, 520))],
)
def test_a_window_reads_one_to_the_maximum_rows(limit: int, offset: int, expected: slice) -> None:
    assert paging.window(limit=limit, offset=offset) == expected
    assert list(range(1000))[paging.window(limit=limit, offset=offset)] == list(range(1000))[expected]


@pytest.mark.parametrize(("raw", "expected"), [(None, 1), ("", 1), ("1", 1), ("1000", 1000)])
def test_a_page_number_is_read(raw: str | None, expected: int) -> None:
    assert paging.page_number(raw) == expected


@pytest.mark.parametrize("raw", ["0", "1001", "-1", "two", "1.5", " 2", "²"])
def test_a_bad_page_number_is_refused_with_the_range(raw: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        paging.page_number(raw)
    assert refused.value.message == "page must be between 1 and 1000"
