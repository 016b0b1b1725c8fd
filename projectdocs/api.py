"""REST endpoints for `kenfold docs sync`: the pages the server holds, and the pages that changed."""

from django.http import HttpRequest
from ninja import Router

from kenfold.openapi import (
    PROJECT_PARAMETER,
    READ_ERRORS,
    WRITE_ERRORS,
    error_documentation,
    error_responses,
    json_body,
    json_request_body,
)
from projectdocs.schemas import DocFilesOutput, DocsSyncInput, DocsSyncOutput
from projectdocs.selectors import docs_files
from projectdocs.services import docs_sync

router = Router(tags=["project docs"])


@router.api_operation(
    ["GET", "HEAD"],
    "/files",
    response={200: DocFilesOutput, **error_responses(*READ_ERRORS)},
    openapi_extra={"parameters": [PROJECT_PARAMETER], **error_documentation(*READ_ERRORS)},
)
def files(request: HttpRequest) -> DocFilesOutput:
    """The project's synced pages with their file hashes and section counts."""
    return docs_files(caller=request.auth, project=request.GET.get("project"))


@router.post(
    "/sync",
    response={200: DocsSyncOutput, **error_responses(*WRITE_ERRORS)},
    openapi_extra=json_request_body(DocsSyncInput) | error_documentation(*WRITE_ERRORS),
)
def sync(request: HttpRequest) -> DocsSyncOutput:
    """Store changed pages (already chunked) and retire deleted ones; a page with a credential is refused."""
    return docs_sync(
        caller=request.auth, sync=json_body(request, DocsSyncInput, fields="project, files and deleted")
    )
