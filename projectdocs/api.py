"""REST endpoints for `kenfold docs sync`: the pages the server holds, and the pages that changed."""

from django.http import HttpRequest
from ninja import Router

from kenfold.openapi import json_body, project_read, project_write
from projectdocs.schemas import DocFilesOutput, DocsSyncInput, DocsSyncOutput
from projectdocs.selectors import docs_files
from projectdocs.services import docs_sync

router = Router(tags=["project docs"])


@project_read(router, "/files", response=DocFilesOutput)
def files(request: HttpRequest) -> DocFilesOutput:
    """The project's synced pages with their file hashes and section counts."""
    return docs_files(caller=request.auth, project=request.GET.get("project"))


@project_write(router, "/sync", body=DocsSyncInput, response=DocsSyncOutput)
def sync(request: HttpRequest) -> DocsSyncOutput:
    """Store changed pages (already chunked) and retire deleted ones; a page with a credential is refused."""
    return docs_sync(
        caller=request.auth, sync=json_body(request, DocsSyncInput, fields="project, files and deleted")
    )
