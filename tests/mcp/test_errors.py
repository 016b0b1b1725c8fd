"""The one place MCP tool errors are translated and results shaped (edge.mcp.tools.run_service)."""

import logging
import time

import anyio
import pytest

from edge.mcp.tools import internal_error_message, run_service
from kenfold_common.errors import Conflict
from memories.schemas import ResumeOutput


def test_a_domain_error_reaches_the_model_with_its_actionable_message() -> None:
    def supersede_retired() -> ResumeOutput:
        raise Conflict(
            "supersedes: memory 1 is no longer active (it is superseded); use recall to find the current version"
        )

    result = anyio.run(run_service, "remember", supersede_retired)
    assert result.is_error
    assert result.content[0].text.startswith("supersedes: memory 1 is no longer active"), "no prefix added"


def test_an_internal_failure_is_logged_with_its_traceback_but_reported_generically(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def crash() -> ResumeOutput:
        raise RuntimeError("connection to db.internal:5432 failed for user kenfold")

    with caplog.at_level(logging.ERROR, logger="edge.mcp.tools"):
        result = anyio.run(run_service, "recall", crash)
    assert result.is_error and result.content[0].text == internal_error_message("recall")
    [record] = caplog.records
    assert record.exc_info is not None and "db.internal" in str(record.exc_info[1])


def test_cancellation_passes_through_without_an_error_or_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    def slow() -> ResumeOutput:
        time.sleep(0.2)
        return ResumeOutput()

    async def cancelled_call() -> bool:
        with anyio.move_on_after(0.01) as scope:
            await run_service("resume", slow)
        return scope.cancelled_caught

    with caplog.at_level(logging.DEBUG, logger="edge.mcp.tools"):
        assert anyio.run(cancelled_call) is True
    assert caplog.records == []


def test_empty_optional_fields_are_left_out_of_the_result() -> None:
    result = anyio.run(run_service, "resume", ResumeOutput)
    assert result.structured_content == {} and result.content[0].text == "{}"
