"""The project's memory guidelines: one document (KENFOLD.md) that says what agents should remember in
the project, what never to store and how to name things, served first by get_context (selectors).

It is a memory of the project (type `project`, attrs kind `guidelines`, trust `user`), so history, export
and the secret filter apply as to any memory. The owner sets it (`manage.py memory guidelines set`) or
docs sync does when the synced files include KENFOLD.md. An agent can only propose a new version (remember
with `supersedes`: a replacement of the owner's memory waits for review) and the version the owner
approves becomes the guidelines.
"""

from django.db import transaction

from kenfold import clock
from kenfold.db_functions import xact_lock
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import USER_SCOPE, scope_for_project
from kenfold_common.secrets import reject_secrets
from memories.insert import memory_insert
from memories.models import Memory, MemoryType, Status, Trust
from memories.presenters import GUIDELINES_KIND

# The file docs sync reads the guidelines from, at the repository's root.
GUIDELINES_FILE = "KENFOLD.md"
MAX_GUIDELINES_CHARS = 8000


def guidelines_scope(project: str | None) -> str:
    scope = scope_for_project(project)
    if scope == USER_SCOPE:
        raise InvalidInput("guidelines belong to a project: pass --project (the repository's git remote URL)")
    return scope


def guidelines_current(*, scope: str) -> Memory | None:
    """The served guidelines of `scope`, the newest if several were approved at once."""
    return (
        Memory.objects.served(clock.now())
        .filter(scope=scope, type=MemoryType.PROJECT, attrs__kind=GUIDELINES_KIND)
        .order_by("-created_at", "-id")
        .first()
    )


def guidelines_set(
    *, project: str | None, content: str, actor: str, source: str, file_hash: str | None = None
) -> tuple[Memory, bool]:
    """Make `content` the project's guidelines: a new version supersedes the current one (history kept);
    the same text changes nothing. Returns the guidelines and whether they changed.

    From docs sync (`file_hash`: the SHA-256 of KENFOLD.md), they carry the file's path and hash like a
    synced page, so the next sync sends the file only when it changed, and retires them when it is gone."""
    scope = guidelines_scope(project)
    text = (content or "").replace("\x00", "").strip()
    if not text:
        raise InvalidInput("the guidelines are empty: write what agents should remember in this project")
    if len(text) > MAX_GUIDELINES_CHARS:
        raise InvalidInput(
            f"the guidelines are {len(text)} characters; the limit is {MAX_GUIDELINES_CHARS}: keep them "
            "short and link to the docs for details"
        )
    reject_secrets(field="the guidelines", text=text)
    now = clock.now()
    with transaction.atomic():
        xact_lock("guidelines", scope)
        current = guidelines_current(scope=scope)
        attrs = {"kind": GUIDELINES_KIND, "source": source}
        if file_hash is not None:
            attrs |= {"path": GUIDELINES_FILE, "file_hash": file_hash}
        if current is not None and current.content == text:
            if current.attrs != attrs:
                # The same text from another file version or source: nothing new to serve.
                Memory.objects.filter(pk=current.pk).update(attrs=attrs)
                current.attrs = attrs
            return current, False
        memory = memory_insert(
            type=MemoryType.PROJECT,
            scope=scope,
            content=text,
            attrs=attrs,
            source_agent=actor,
            trust=Trust.USER,
            status=Status.ACTIVE,
            supersedes=current,
            created_at=now,
            # Guidelines are the owner's instructions to agents on purpose: flagging them as
            # instruction-like would tell agents not to follow them.
            screen_content=False,
        )
    return memory, True


def guidelines_clear(*, project: str | None, actor: str) -> Memory | None:
    """Retire the project's guidelines (kept as history); returns what was retired, if anything."""
    scope = guidelines_scope(project)
    with transaction.atomic():
        xact_lock("guidelines", scope)
        current = guidelines_current(scope=scope)
        if current is not None:
            Memory.objects.filter(pk=current.pk).update(
                status=Status.DELETED,
                ended_at=clock.now(),
                attrs=current.attrs | {"forgotten_by": actor, "forget_reason": "guidelines cleared"},
            )
    return current
