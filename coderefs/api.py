"""REST endpoints for `kenfold refs sync`: what to check, and what the client found (spec §1.9)."""

from django.http import HttpRequest
from ninja import Router

from coderefs.schemas import CheckInput, CheckOutput, TargetsOutput
from coderefs.selectors import refs_targets
from coderefs.services import refs_check
from kenfold.openapi import json_body, project_read, project_write

router = Router(tags=["code references"])


@project_read(router, "", response=TargetsOutput)
def list_targets(request: HttpRequest) -> TargetsOutput:
    """References to check for a project: never-checked ones first, at most 500."""
    return refs_targets(caller=request.auth, project=request.GET.get("project"))


# The body is parsed here, not by ninja, whose parse error is a bare "Cannot parse request body".
@project_write(router, "/check", body=CheckInput, response=CheckOutput)
def check(request: HttpRequest) -> CheckOutput:
    """Report what a client found at a commit; anchors first sightings and updates states."""
    return refs_check(
        caller=request.auth, check=json_body(request, CheckInput, fields="project, commit and results")
    )
