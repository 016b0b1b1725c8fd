"""REST endpoints for `kenfold refs sync`: what to check, and what the client found (spec §1.9)."""

from django.http import HttpRequest
from ninja import Router

from coderefs.schemas import CheckInput, CheckOutput, TargetsOutput
from coderefs.selectors import refs_targets
from coderefs.services import refs_check
from kenfold.openapi import (
    PROJECT_PARAMETER,
    READ_ERRORS,
    WRITE_ERRORS,
    error_documentation,
    error_responses,
    json_body,
    json_request_body,
)

router = Router(tags=["code references"])


@router.api_operation(
    ["GET", "HEAD"],
    "",
    response={200: TargetsOutput, **error_responses(*READ_ERRORS)},
    openapi_extra={"parameters": [PROJECT_PARAMETER], **error_documentation(*READ_ERRORS)},
)
def list_targets(request: HttpRequest) -> TargetsOutput:
    """References to check for a project: never-checked ones first, at most 500."""
    return refs_targets(caller=request.auth, project=request.GET.get("project"))


@router.post(
    "/check",
    response={200: CheckOutput, **error_responses(*WRITE_ERRORS)},
    # The body is parsed here, not by ninja, whose parse error is a bare "Cannot parse request body";
    # so the document declares it.
    openapi_extra=json_request_body(CheckInput) | error_documentation(*WRITE_ERRORS),
)
def check(request: HttpRequest) -> CheckOutput:
    """Report what a client found at a commit; anchors first sightings and updates states."""
    return refs_check(
        caller=request.auth, check=json_body(request, CheckInput, fields="project, commit and results")
    )
