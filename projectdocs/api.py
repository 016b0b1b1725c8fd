"""REST endpoints for `kenfold docs sync`: the pages the server holds, and the pages that changed."""

import json

from django.http import HttpRequest
from ninja import Router

from kenfold.openapi import error_documentation, error_responses, json_request_body
from kenfold_common.errors import InvalidInput
from projectdocs.schemas import DocFilesOutput, DocsSyncInput, DocsSyncOutput
from projectdocs.selectors import docs_files
from projectdocs.services import docs_sync

router = Router(tags=["project docs"])

_READ_ERRORS = (400, 401, 403, 503)
_WRITE_ERRORS = (400, 401, 403, 408, 413, 429, 503)
_PROJECT_PARAMETER = {
    "in": "query",
    "name": "project",
    "required": True,
    "description": "The repository's git remote URL (such as git@github.com:org/repo.git) or a short project name.",
    "schema": {"type": "string", "minLength": 1, "pattern": r"\S"},
}


@router.api_operation(
    ["GET", "HEAD"],
    "/files",
    response={200: DocFilesOutput, **error_responses(*_READ_ERRORS)},
    openapi_extra={"parameters": [_PROJECT_PARAMETER], **error_documentation(*_READ_ERRORS)},
)
def files(request: HttpRequest) -> DocFilesOutput:
    """The project's synced pages with their file hashes and section counts."""
    return docs_files(caller=request.auth, project=request.GET.get("project"))


@router.post(
    "/sync",
    response={200: DocsSyncOutput, **error_responses(*_WRITE_ERRORS)},
    openapi_extra=json_request_body(DocsSyncInput) | error_documentation(*_WRITE_ERRORS),
)
def sync(request: HttpRequest) -> DocsSyncOutput:
    """Store changed pages (already chunked) and retire deleted ones; a page with a credential is refused."""
    try:
        body = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"the body is not one JSON object: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object with project, files and deleted")
    return docs_sync(caller=request.auth, sync=DocsSyncInput.model_validate(body))
