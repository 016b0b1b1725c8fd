"""REST endpoints for `kenfold refs sync`: what to check, and what the client found (spec §1.9)."""

import json

from django.http import HttpRequest
from ninja import Router

from coderefs.schemas import CheckInput, CheckOutput, TargetsOutput
from coderefs.selectors import refs_targets
from coderefs.services import refs_check
from kenfold_common.errors import InvalidInput

router = Router(tags=["code references"])


@router.api_operation(["GET", "HEAD"], "", response=TargetsOutput)
def list_targets(request: HttpRequest, project: str = "") -> TargetsOutput:
    """References to check for a project: never-checked ones first, at most 500."""
    return refs_targets(project=project)


@router.post("/check", response=CheckOutput)
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
