"""Storing a project's docs as memories: `kenfold docs sync` sends changed pages, already chunked.

Each section (chunk) is a memory of the project: type `project`, trust `external` (the text comes from
the repository, not from an agent), attrs with its page's path, heading path, chunk index, file hash and
frontmatter. So every rule of the store holds for docs: the secret filter, scopes, history, export. A
changed page never overwrites: each changed section is a new memory superseding the old one (history
kept), unchanged sections stay as they are, sections the page lost are retired as superseded. A deleted
page's sections are retired as deleted. `relates_to` becomes typed edges (`relates_to:<type>`) from each
section of a page to the first section of the page it names, rebuilt after every sync so that they
always join the current sections.

KENFOLD.md at the repository's root is not stored as sections: it becomes the project's memory
guidelines (memories.guidelines), served first by get_context; deleting it clears them.
"""

import logging
from collections import defaultdict
from typing import Any

from django.db import transaction

from access import reach
from access.caller import Caller
from kenfold.db_functions import xact_lock
from kenfold_common.docs import (
    FILE_HASH_RE,
    MAX_CHUNK_CHARS,
    MAX_FIELD_CHARS,
    RELATION_RE,
    is_doc_path,
)
from kenfold_common.errors import InvalidInput, SecretDetected
from kenfold_common.identity import USER_SCOPE, scope_for_project
from kenfold_common.secrets import redact_secrets, reject_secrets
from memories.audit import audit_record
from memories.guidelines import GUIDELINES_FILE, guidelines_clear, guidelines_set
from memories.insert import memory_insert
from memories.models import Memory, MemoryAction, MemoryEdge, MemoryType, Status, Trust
from memories.presenters import DOC_KIND, DOC_RELATION_PREFIX
from memories.quotas import quota_charge
from memories.services.writes import embed_committed_batch
from projectdocs.schemas import DocFile, DocsSyncInput, DocsSyncOutput, RefusedFile

log = logging.getLogger(__name__)

RETIRED_REASON = "the file was removed from the project's docs"
# attrs that change with every commit of a page without changing what a section says.
_POSITION_ATTRS = ("file_hash", "chunk_index")


def docs_scope(project: str | None) -> str:
    """The project's scope; docs belong to a repository, never to the user-wide scope."""
    scope = scope_for_project(project)
    if scope == USER_SCOPE:
        raise InvalidInput("project is required: pass the repository's git remote URL")
    return scope


def _check_text(value: str | None, *, where: str, limit: int = MAX_FIELD_CHARS) -> None:
    if value is None:
        return
    if "\x00" in value:
        raise InvalidInput(f"{where} contains a NUL character (\\x00); remove it and sync again")
    if len(value) > limit:
        raise InvalidInput(f"{where} is {len(value)} characters; the limit is {limit}")


def _validate_file(index: int, file: DocFile) -> None:
    where = f"files[{index}]"
    if not is_doc_path(file.path):
        raise InvalidInput(f"{where}.path is not a repository-relative path of a .md or .mdx file")
    if not FILE_HASH_RE.match(file.file_hash):
        raise InvalidInput(f"{where}.file_hash must be the SHA-256 of the file: 64 lowercase hex digits")
    if not file.chunks:
        raise InvalidInput(f"{where} has no chunks; send at least one section of the page")
    for name in ("title", "description"):
        _check_text(getattr(file, name), where=f"{where}.{name}")
    for name in ("tags", "aliases", "answers"):
        for position, item in enumerate(getattr(file, name)):
            _check_text(item, where=f"{where}.{name}[{position}]")
    for position, relation in enumerate(file.relates_to):
        if not is_doc_path(relation.path):
            raise InvalidInput(f"{where}.relates_to[{position}].path is not a repository-relative .md path")
        if not RELATION_RE.match(relation.relation):
            raise InvalidInput(
                f"{where}.relates_to[{position}].relation must be a lowercase word such as feeds_into"
            )
    for position, chunk in enumerate(file.chunks):
        if not chunk.content.strip():
            raise InvalidInput(f"{where}.chunks[{position}].content is empty")
        _check_text(chunk.content, where=f"{where}.chunks[{position}].content", limit=MAX_CHUNK_CHARS)
        for depth, heading in enumerate(chunk.heading_path):
            _check_text(heading, where=f"{where}.chunks[{position}].heading_path[{depth}]")


def _reject_secrets(file: DocFile) -> None:
    """SecretDetected naming the section or field (never the value) where a credential was found. The
    heading is most often where the credential is ("## Rotate ghp_... quarterly"), so it is named redacted,
    with the section's position in the page."""
    path = redact_secrets(file.path)
    # Every string that ends up in the sections' attrs or their edges, not only the text: a path or a
    # heading is stored (and exported) as much as the content is.
    fields = {"path": file.path, "title": file.title, "description": file.description}
    for name in ("tags", "aliases", "answers"):
        fields[name] = " ".join(getattr(file, name))
    for position, relation in enumerate(file.relates_to):
        fields[f"relates_to[{position}]"] = f"{relation.path} {relation.relation}"
    for name, text in fields.items():
        if text:
            reject_secrets(field=f"{path}: {name}", text=text, named=True)
    for index, chunk in enumerate(file.chunks):
        heading = redact_secrets(" > ".join(chunk.heading_path)) or "the text before the first heading"
        reject_secrets(
            field=f"{path}: section {heading!r} (section {index + 1} of {len(file.chunks)})",
            text=chunk.content,
        )
    # After the texts: a heading is usually in its section's text too, which names the place better.
    for index, chunk in enumerate(file.chunks):
        for heading in chunk.heading_path:
            reject_secrets(
                field=f"{path}: the heading path of section {index + 1} of {len(file.chunks)}",
                text=heading,
                named=True,
            )


def _chunk_attrs(file: DocFile, index: int) -> dict[str, Any]:
    chunk = file.chunks[index]
    attrs: dict[str, Any] = {
        "kind": DOC_KIND,
        "path": file.path,
        "heading_path": [heading.strip() for heading in chunk.heading_path],
        "chunk_index": index,
        "file_hash": file.file_hash,
    }
    if file.title:
        attrs["title"] = file.title.strip()
    if file.description:
        attrs["description"] = file.description.strip()
    for name in ("tags", "aliases", "answers"):
        if values := [value.strip() for value in getattr(file, name) if value.strip()]:
            attrs[name] = values
    if file.relates_to:
        attrs["relates_to"] = [{"path": r.path, "relation": r.relation} for r in file.relates_to]
    return attrs


def _signature(content: str, attrs: dict[str, Any]) -> tuple[str, tuple]:
    """What a section says: its text and its attrs apart from where it sits in the file."""
    rest = {key: value for key, value in attrs.items() if key not in _POSITION_ATTRS}
    return content, tuple(sorted((key, repr(value)) for key, value in rest.items()))


def docs_sync(*, caller: Caller, sync: DocsSyncInput) -> DocsSyncOutput:
    """Store the changed pages of a project's docs and retire deleted ones, in one transaction.

    Everything is validated before anything is written. A page holding a credential is refused alone
    (listed in `refused` with the place and kind of the credential) and the rest is stored: one bad page
    must not keep a project's other docs from the agents.
    """
    caller.require_write("docs sync")
    scope = docs_scope(sync.project)
    reach.require_scope(caller=caller, scope=scope, write=True)
    # A file sent twice as the same entry says nothing new (a client's retry, a list built twice): keep one.
    # Two different entries for one path cannot both be the page, so that is refused.
    sync.files = list({file.model_dump_json(): file for file in sync.files}.values())
    paths = [file.path for file in sync.files]
    if len(set(paths)) != len(paths):
        raise InvalidInput("files lists a path more than once with different contents; send each file once")
    for index, file in enumerate(sync.files):
        _validate_file(index, file)
    for index, path in enumerate(sync.deleted):
        if not is_doc_path(path):
            raise InvalidInput(f"deleted[{index}] is not a repository-relative path of a .md or .mdx file")
    if set(sync.deleted) & set(paths):
        raise InvalidInput("a path is both in files and in deleted; send it in one of them")
    refused: list[RefusedFile] = []
    accepted: list[DocFile] = []
    for file in sync.files:
        try:
            _reject_secrets(file)
        except SecretDetected as error:
            refused.append(RefusedFile(path=redact_secrets(file.path), error=error.message))
        else:
            accepted.append(file)

    output = DocsSyncOutput(
        scope=scope,
        added=0,
        updated=0,
        unchanged=0,
        retired=0,
        sections_stored=0,
        sections_kept=0,
        links=0,
        refused=refused,
    )
    created: list[Memory] = []
    with transaction.atomic():
        # Syncs of one project serialize: each reads the current sections and rebuilds the links.
        xact_lock("docs sync", scope)
        current = _current_sections(scope=scope, paths=[*paths, *sync.deleted])
        for file in accepted:
            if file.path == GUIDELINES_FILE:
                try:
                    _memory, changed = guidelines_set(
                        project=sync.project,
                        content="\n\n".join(chunk.content.strip() for chunk in file.chunks),
                        actor=caller.agent,
                        source="docs",
                        file_hash=file.file_hash,
                    )
                except InvalidInput as error:
                    # Too long or empty: refused alone, like a page holding a credential.
                    output.refused.append(RefusedFile(path=file.path, error=error.message))
                    continue
                if changed:
                    output.updated += 1
                else:
                    output.unchanged += 1
                # Sections stored by a version that synced KENFOLD.md as a page: the guidelines replace them.
                Memory.objects.filter(pk__in=[m.pk for m in current.get(file.path, [])]).update(
                    status=Status.SUPERSEDED
                )
                continue
            created += _store_file(
                caller=caller, scope=scope, file=file, old=current.get(file.path, []), output=output
            )
        for path in sync.deleted:
            if path == GUIDELINES_FILE and guidelines_clear(project=sync.project, actor=caller.agent):
                output.retired += 1
            sections = current.get(path, [])
            if sections:
                for memory in sections:
                    memory.status = Status.DELETED
                    memory.attrs = memory.attrs | {
                        "forgotten_by": caller.agent,
                        "forget_reason": RETIRED_REASON,
                    }
                Memory.objects.bulk_update(sections, ["status", "attrs"])
                audit_record(
                    action=MemoryAction.FORGOTTEN,
                    memory_ids=[m.pk for m in sections],
                    agent=caller.agent,
                    credential=caller.credential,
                    detail={"reason": RETIRED_REASON},
                )
                output.retired += 1
        output.links = _rebuild_links(scope=scope, agent=caller.agent)
        # Last, after the sync's own locks (memories.quotas): one write, and every section it created.
        quota_charge(caller=caller, writes=1, memories=len(created))
    # After the commit, as remember does: no lock is held while a model embeds, and a failure leaves the
    # sections to the periodic backfill.
    embed_committed_batch(created)
    return output


def _current_sections(*, scope: str, paths: list[str]) -> dict[str, list[Memory]]:
    rows = (
        Memory.objects.select_for_update()
        .filter(scope=scope, type=MemoryType.PROJECT, status=Status.ACTIVE, attrs__kind=DOC_KIND)
        .filter(attrs__path__in=paths)
        .defer("content_tsv", "content_tsv_en", "content_key")
    )
    by_path: dict[str, list[Memory]] = defaultdict(list)
    for memory in rows:
        by_path[memory.attrs["path"]].append(memory)
    for sections in by_path.values():
        sections.sort(key=lambda memory: memory.attrs.get("chunk_index", 0))
    return by_path


def _store_file(
    *, caller: Caller, scope: str, file: DocFile, old: list[Memory], output: DocsSyncOutput
) -> list[Memory]:
    if old and all(memory.attrs.get("file_hash") == file.file_hash for memory in old):
        output.unchanged += 1
        return []
    unmatched = {_signature(memory.content, memory.attrs): memory for memory in old}
    by_index = {memory.attrs.get("chunk_index"): memory for memory in old}
    kept: list[Memory] = []
    created: list[Memory] = []
    pending: list[tuple[int, dict[str, Any]]] = []
    for index, chunk in enumerate(file.chunks):
        attrs = _chunk_attrs(file, index)
        same = unmatched.pop(_signature(chunk.content, attrs), None)
        if same is not None:
            same.attrs = attrs
            kept.append(same)
        else:
            pending.append((index, attrs))
    if kept:
        Memory.objects.bulk_update(kept, ["attrs"])
    retired = {memory.pk for memory in unmatched.values()}
    for index, attrs in pending:
        # The old section at the same place, else any the page lost: the new one supersedes it.
        replaced = by_index.get(index)
        if replaced is None or replaced.pk not in retired:
            replaced = next((m for m in unmatched.values() if m.pk in retired), None)
        if replaced is not None:
            retired.discard(replaced.pk)
        memory = memory_insert(
            type=MemoryType.PROJECT,
            scope=scope,
            content=file.chunks[index].content,
            attrs=attrs,
            source_agent=caller.agent,
            trust=Trust.EXTERNAL,
            status=Status.ACTIVE,
            supersedes=replaced,
            # The page's old sections are retired below, all at once, with one event.
            retire_superseded=False,
            credential=caller.credential,
            audit_detail={"path": file.path},
        )
        created.append(memory)
    superseded = [memory.pk for memory in old if memory not in kept]
    Memory.objects.filter(pk__in=superseded, status=Status.ACTIVE).update(status=Status.SUPERSEDED)
    audit_record(
        action=MemoryAction.SUPERSEDED,
        memory_ids=superseded,
        agent=caller.agent,
        credential=caller.credential,
        detail={"path": file.path},
    )
    if old:
        output.updated += 1
    else:
        output.added += 1
    output.sections_stored += len(created)
    output.sections_kept += len(kept)
    return created


def _rebuild_links(*, scope: str, agent: str) -> int:
    """Make the project's `relates_to` edges match its current sections: from every section of a page
    to the first section of each page it names (a missing page is skipped; `kenfold docs lint` reports
    it). Returns how many links there are now."""
    sections = list(
        Memory.objects.filter(
            scope=scope, type=MemoryType.PROJECT, status=Status.ACTIVE, attrs__kind=DOC_KIND
        )
        .order_by("id")
        .values_list("id", "attrs")
    )
    first: dict[str, tuple[int, Any]] = {}
    for memory_id, attrs in sections:
        index = attrs.get("chunk_index", 0)
        if attrs["path"] not in first or index < first[attrs["path"]][0]:
            first[attrs["path"]] = (index, memory_id)
    wanted: set[tuple[Any, str, Any]] = set()
    for memory_id, attrs in sections:
        for relation in attrs.get("relates_to") or []:
            target = first.get(relation.get("path"))
            if target is not None and target[1] != memory_id:
                wanted.add((memory_id, DOC_RELATION_PREFIX + relation.get("relation", "related"), target[1]))
    ids = [memory_id for memory_id, _ in sections]
    existing = MemoryEdge.objects.filter(src_id__in=ids, relation__startswith=DOC_RELATION_PREFIX)
    have = set(existing.values_list("src_id", "relation", "dst_id"))
    for src, relation, dst in have - wanted:
        MemoryEdge.objects.filter(src_id=src, relation=relation, dst_id=dst).delete()
    MemoryEdge.objects.bulk_create(
        [MemoryEdge(src_id=s, relation=r, dst_id=d, source_agent=agent) for s, r, d in wanted - have],
        ignore_conflicts=True,
    )
    path_of = {memory_id: attrs["path"] for memory_id, attrs in sections}
    return len({(path_of[src], relation, path_of[dst]) for src, relation, dst in wanted})
