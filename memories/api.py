"""REST endpoint for the session hook: which served memories the session reused (memories.usage)."""

from django.http import HttpRequest
from ninja import Router
from pydantic import BaseModel, Field

from kenfold.openapi import error_documentation, error_responses, json_body, json_request_body
from kenfold_common.identity import MAX_SESSION_ID_LENGTH
from memories.usage import MAX_USED, usage_report_used

router = Router(tags=["usage"])

_ERRORS = (400, 401, 403, 408, 413, 503)
# Ids as remember, recall and get_context return them; the service refuses anything else.
_MEMORY_ID = {"type": "string", "format": "uuid"}


class UsedInput(BaseModel):
    used: list[str] = Field(
        min_length=1,
        max_length=MAX_USED,
        description="ids of served memories reused",
        json_schema_extra={"items": _MEMORY_ID},
    )
    session_id: str | None = Field(
        None, max_length=MAX_SESSION_ID_LENGTH, description="the agent's session, as sent in `_meta`"
    )


class UsedOutput(BaseModel):
    marked: int = Field(description="how many were newly marked (ids not served to this caller are ignored)")


@router.post(
    "/used",
    response={200: UsedOutput, **error_responses(*_ERRORS)},
    openapi_extra=json_request_body(UsedInput) | error_documentation(*_ERRORS),
)
def used(request: HttpRequest) -> UsedOutput:
    """Mark memories that earlier answers served to this caller as reused (`kenfold hook` at SessionEnd)."""
    report = json_body(request, UsedInput, fields="used and, optionally, session_id")
    return UsedOutput(
        marked=usage_report_used(caller=request.auth, used=report.used, session_id=report.session_id)
    )
