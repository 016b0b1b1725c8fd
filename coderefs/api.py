"""REST endpoints for `kenfold refs sync`: what to check, and what the client found (spec §1.9)."""

import json

from django.http import HttpRequest
from ninja import Router

from coderefs.schemas import PROJECT_PARAMETER, CheckInput, CheckOutput, TargetsOutput
from coderefs.selectors import refs_targets
from coderefs.services import refs_check
from kenfold.openapi import error_documentation, error_responses, json_request_body
from kenfold_common.errors import InvalidInput

router = Router(tags=["code references"])

# A GET has no body, so it cannot be cut short (408) or too large (413).
_READ_ERRORS = (400, 401, 403, 503)
_WRITE_ERRORS = (400, 401, 403, 408, 413, 429, 503)


@router.api_operation(
    ["GET", "HEAD"],
    "",
    response={200: TargetsOutput, **error_responses(*_READ_ERRORS)},
    # `project` is read from the query string here, not by ninja, so that a missing or blank one gets
    # the service's own message ("project is required: pass the repository's git remote URL"); the
    # document declares it as the required parameter it is.
    openapi_extra={"parameters": [PROJECT_PARAMETER], **error_documentation(*_READ_ERRORS)},
)
def list_targets(request: HttpRequest) -> TargetsOutput:
    """References to check for a project: never-checked ones first, at most 500."""
    return refs_targets(caller=request.auth, project=request.GET.get("project"))


@router.post(
    "/check",
    response={200: CheckOutput, **error_responses(*_WRITE_ERRORS)},
    # The body is parsed here, not by ninja, whose parse error is a bare "Cannot parse request body";
    # so the document declares it.
    openapi_extra=json_request_body(CheckInput) | error_documentation(*_WRITE_ERRORS),
)
def check(request: HttpRequest) -> CheckOutput:
    """Report what a client found at a commit; anchors first sightings and updates states."""
    try:
        body = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        # json.loads also refuses trailing data after the object ("Extra data").
        raise InvalidInput(f"the body is not one JSON object: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object with project, commit and results")
    return refs_check(caller=request.auth, check=CheckInput.model_validate(body))
