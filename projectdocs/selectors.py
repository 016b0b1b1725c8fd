"""Reads of a project's docs: which pages the server holds, so a sync sends only what changed."""

from collections import Counter

from django.db.models import Q

from access import reach
from access.caller import Caller
from memories.models import Memory, MemoryType, Status
from memories.presenters import DOC_KIND, GUIDELINES_KIND
from projectdocs.schemas import DocFilesOutput, DocFileState
from projectdocs.services import docs_scope


def docs_files(*, caller: Caller, project: str | None) -> DocFilesOutput:
    """Each page of the project's served docs with the hash of the file it was synced from; KENFOLD.md
    too when the guidelines came from it (memories.guidelines)."""
    scope = docs_scope(project)
    reach.require_scope(caller=caller, scope=scope, write=False)
    rows = (
        Memory.objects.filter(scope=scope, type=MemoryType.PROJECT, status=Status.ACTIVE)
        .filter(Q(attrs__kind=DOC_KIND) | Q(attrs__kind=GUIDELINES_KIND, attrs__has_key="file_hash"))
        .values_list("attrs__path", "attrs__file_hash")
        .order_by("attrs__path")
    )
    sections = Counter(rows)
    return DocFilesOutput(
        scope=scope,
        files=[
            DocFileState(path=path, file_hash=file_hash, sections=count)
            for (path, file_hash), count in sections.items()
        ],
    )
