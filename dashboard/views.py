"""The owner's pages (spec §1.17): thin views over the same services and selectors as the commands.

Every change is a POST that ends in a redirect with a flash message (so a reload repeats nothing), and
every change is attributed to the agent `kenfold-dashboard`. Memory text is only ever put into templates,
which escape it.
"""

import functools
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from math import ceil
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from access import keys
from access.caller import Caller
from access.reach import limit_summary
from coderefs.selectors import memory_code_refs
from consolidation import selectors as consolidation
from consolidation import services as consolidating
from consolidation.models import ProposalStatus
from dashboard import charts, sessions
from dashboard.guard import PREFIX, clear_cookie, plain, safe_next, set_cookie
from kenfold import clock, paging
from kenfold_common.errors import Conflict, InvalidInput, KenfoldError, NotFound
from memories import audit, quotas, selectors, usage
from memories.models import MemoryType, Status
from memories.services import review as reviewing
from oauth.services import grant_list, grant_revoke

ACTOR = "kenfold-dashboard"
CALLER = Caller(agent=ACTOR)
REVIEW_PAGE = 20
LIST_PAGE = 50
MAX_REASON = 500
SIMILAR = 4
DEFAULT_REJECT_REASON = "rejected in the dashboard"
# The Usage page's forgetting candidates: memories older than this that no agent reused.
USAGE_IDLE_DAYS = 30
MAX_IDLE_DAYS = 3650
LIST_STATUSES = ("active", "proposed", "superseded", "deleted", "stale", "all")


def _remote(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "") or "?"


def _page(request: HttpRequest, template: str, context: dict, *, status: int = 200) -> HttpResponse:
    session = request.dashboard_session
    context = {
        "csrf": session.csrf_token if session else "",
        "flash": sessions.flash_take(session=session) if session else [],
        "signed_in": session is not None,
        "here": request.get_full_path(),
        "pending_reviews": selectors.memory_review_count() if session else 0,
    } | context
    return render(request, f"dashboard/{template}", context, status=status)


def _flash(request: HttpRequest, level: str, text: str) -> None:
    sessions.flash_add(session=request.dashboard_session, level=level, text=text)


def _back(request: HttpRequest, default: str) -> HttpResponse:
    return HttpResponseRedirect(safe_next(request.POST.get("back") or default), status=303)


@dataclass(frozen=True)
class Outcome:
    """What an action did, when one sentence and the usual page are not enough: several flashes in order
    (level, text), and the page to go to instead of the action's `back`."""

    flashes: tuple[tuple[str, str], ...]
    back: str | None = None


def action(
    *,
    back: Callable[..., str],
    not_found: str | None = None,
    gone_back: Callable[..., str] | None = None,
    wording: Callable[[KenfoldError], str] = lambda exc: exc.message,
) -> Callable[[Callable[..., str | Outcome]], Callable[..., HttpResponse]]:
    """The one place where a POST action's domain error becomes words for the owner.

    The decorated view returns its success message (or an Outcome), or raises a KenfoldError having
    changed nothing: the error is flashed (`wording` of it, by default its message; a NotFound as
    `not_found` when given, then back to `gone_back`, the page of the thing being gone). Either way the
    answer is a 303 to `back(**url arguments)`, or to the form's own `back` field when it names a
    dashboard page.
    """

    def decorate(view: Callable[..., str | Outcome]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def answer(request: HttpRequest, **arguments: object) -> HttpResponse:
            target = back(**arguments)
            try:
                done = view(request, **arguments)
            except NotFound as exc:
                _flash(request, "error", not_found or wording(exc))
                target = gone_back(**arguments) if gone_back else target
            except KenfoldError as exc:
                _flash(request, "error", wording(exc))
            else:
                if isinstance(done, str):
                    done = Outcome(flashes=(("ok", done),))
                for level, text in done.flashes:
                    _flash(request, level, text)
                target = done.back or target
            return _back(request, target)

        return answer

    return decorate


def shown(
    *, problem: str | None = None, status: int | None = None
) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """The one place where a page's domain error (a bad filter, an unknown id in the address) becomes the
    error page: the error's message and status, or the `problem` and `status` given for every error."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def answer(request: HttpRequest, **arguments: object) -> HttpResponse:
            try:
                return view(request, **arguments)
            except KenfoldError as exc:
                return _page(
                    request,
                    "error.html",
                    {"problem": problem or exc.message},
                    status=status or exc.status_code,
                )

        return answer

    return decorate


def _reason(request: HttpRequest, default: str = "") -> str:
    reason = (request.POST.get("reason") or "").strip() or default
    if len(reason) > MAX_REASON:
        raise InvalidInput(f"the reason is {len(reason)} characters; write at most {MAX_REASON}")
    return reason


# --- login ---------------------------------------------------------------------------------------------


def login(request: HttpRequest) -> HttpResponse:
    target = safe_next(request.POST.get("next") if request.method == "POST" else request.GET.get("next"))
    if request.method == "GET":
        if request.dashboard_session is not None:
            return HttpResponseRedirect(target, status=303)
        return _page(request, "login.html", {"next": target})
    try:
        token = sessions.session_login(password=request.POST.get("password", ""), remote=_remote(request))
    except KenfoldError as exc:
        return _page(
            request,
            "login.html",
            {"next": target, "problem": exc.message[:1].upper() + exc.message[1:] + "."},
            status=exc.status_code,
        )
    response = HttpResponseRedirect(target, status=303)
    set_cookie(request, response, token)
    return response


def logout(request: HttpRequest) -> HttpResponse:
    sessions.session_end(session=request.dashboard_session)
    response = HttpResponseRedirect(PREFIX + "login", status=303)
    clear_cookie(response)
    return response


# --- overview ------------------------------------------------------------------------------------------


def overview(request: HttpRequest) -> HttpResponse:
    dates, series = selectors.memory_writes_per_day(days=30)
    return _page(
        request,
        "overview.html",
        {
            "overview": selectors.memory_overview(),
            "extraction": selectors.extraction_counts(),
            "keys": keys.api_key_list().count(),
            "grants": len(grant_list()),
            "pending_proposals": consolidation.proposal_counts().pending,
            "chart": charts.writes_chart(dates, series),
            "near_quota": _labelled(quotas.quota_near_limits()),
        },
    )


def _labelled(rows: list) -> list[tuple[str, object]]:
    """Rows with a `credential` attribute, each with the name listings give its credential."""
    labels = audit.credential_labels(row.credential for row in rows)
    return [
        (labels.get(row.credential, "no credential") if row.credential else "no credential", row)
        for row in rows
    ]


# --- usage ---------------------------------------------------------------------------------------------


def usage_page(request: HttpRequest) -> HttpResponse:
    raw = (request.GET.get("days") or str(USAGE_IDLE_DAYS)).strip()
    context = {"days": raw, "kept_days": settings.USAGE_DAYS, "max_rows": settings.USAGE_MAX_ROWS}
    if not raw.isdigit() or int(raw) > MAX_IDLE_DAYS:
        problem = f"days must be a whole number from 0 to {MAX_IDLE_DAYS}"
        return _page(request, "usage.html", context | {"problem": problem}, status=400)
    report = usage.usage_report(now=clock.now(), idle_days=int(raw))
    return _page(request, "usage.html", context | {"days": int(raw), "report": report})


# --- review ----------------------------------------------------------------------------------------------


@shown()
def review(request: HttpRequest) -> HttpResponse:
    scope = (request.GET.get("scope") or "").strip() or None
    page = paging.page_number(request.GET.get("page"))
    total = selectors.memory_review_count(scope=scope)
    items = selectors.memory_review_queue(
        limit=REVIEW_PAGE, offset=(page - 1) * REVIEW_PAGE, scope=scope, similar_limit=SIMILAR
    )
    return _page(
        request,
        "review.html",
        {
            "items": items,
            "scope": scope or "",
            "total": total,
            "page": page,
            "pages": max(1, ceil(total / REVIEW_PAGE)),
            "previous": urlencode({"scope": scope or "", "page": page - 1}) if page > 1 else "",
            "next": urlencode({"scope": scope or "", "page": page + 1}) if page * REVIEW_PAGE < total else "",
            "reject_reason": DEFAULT_REJECT_REASON,
        },
    )


def _review_wording(exc: KenfoldError) -> str:
    # The services decide whether a memory is still proposed; the page only says it in the owner's words.
    if isinstance(exc, reviewing.NotProposed):
        return f"Already decided: that memory is {exc.status} now; nothing was changed."
    return exc.message


@action(
    back=lambda memory_id: PREFIX + "review",
    not_found="That memory no longer exists; nothing was changed.",
    wording=_review_wording,
)
def review_approve(request: HttpRequest, memory_id: str) -> str:
    replaces = (request.POST.get("replaces") or "").strip() or None
    reviewing.memory_approve(memory_id=memory_id, replaces=replaces, actor=ACTOR)
    return "Approved, replacing the similar memory." if replaces else "Approved."


@action(
    back=lambda memory_id: PREFIX + "review",
    not_found="That memory no longer exists; nothing was changed.",
    wording=_review_wording,
)
def review_reject(request: HttpRequest, memory_id: str) -> str:
    reason = _reason(request, DEFAULT_REJECT_REASON)
    reviewing.memory_reject(memory_id=memory_id, reason=reason, actor=ACTOR)
    return "Rejected."


# --- memories --------------------------------------------------------------------------------------------


def memories(request: HttpRequest) -> HttpResponse:
    query = (request.GET.get("q") or "").strip()
    scope = (request.GET.get("scope") or "").strip()
    type_ = (request.GET.get("type") or "").strip()
    status = (request.GET.get("status") or "active").strip()
    context = {
        "q": query,
        "scope": scope,
        "type": type_,
        "status": status,
        "types": MemoryType.values,
        "statuses": LIST_STATUSES,
    }
    try:
        if status not in LIST_STATUSES:
            raise InvalidInput(f"status must be one of: {', '.join(LIST_STATUSES)}")
        page = paging.page_number(request.GET.get("page"))
        if query and status == "active":
            results = selectors.memory_search_owner(query=query, scope=scope or None, type=type_ or None)
            return _page(request, "memories.html", context | {"ranked": True, "results": results})
        rows = list(
            selectors.memory_list(
                status=None if status in ("all", "stale") else status,
                stale=status == "stale",
                type=type_ or None,
                scope=scope or None,
                limit=LIST_PAGE + 1,
                offset=(page - 1) * LIST_PAGE,
            )
        )
    except InvalidInput as exc:
        return _page(request, "memories.html", context | {"problem": exc.message, "rows": []}, status=400)
    filters = {"q": query, "scope": scope, "type": type_, "status": status}
    return _page(
        request,
        "memories.html",
        context
        | {
            "rows": rows[:LIST_PAGE],
            "page": page,
            "previous": urlencode(filters | {"page": page - 1}) if page > 1 else "",
            "next": urlencode(filters | {"page": page + 1})
            if len(rows) > LIST_PAGE and page < paging.PAGE_MAX
            else "",
            "search_ignored": bool(query),
        },
    )


@shown(problem="There is no memory with this id. Find it again from the memories page.", status=404)
def memory_detail(request: HttpRequest, memory_id: str) -> HttpResponse:
    memory = selectors.memory_get(memory_id=memory_id)
    similar = []
    if memory.status == Status.PROPOSED:
        similar = selectors.review_item(memory, now=clock.now(), similar_limit=SIMILAR).similar
    return _page(
        request,
        "memory.html",
        {
            "memory": memory,
            "attrs": sorted((memory.attrs or {}).items()),
            "refs": memory_code_refs(memory_id=memory.pk),
            "history": selectors.memory_history(memory),
            "edges": selectors.memory_edges(memory),
            "similar": similar,
            "flagged": selectors.flag_reasons(memory),
            "events": _labelled(audit.memory_events(memory_id=memory.pk)),
        },
    )


@action(
    back=lambda memory_id: f"{PREFIX}memories/{memory_id}",
    not_found="That memory no longer exists; nothing was changed.",
    gone_back=lambda memory_id: PREFIX + "memories",
)
def memory_forget(request: HttpRequest, memory_id: str) -> str:
    memory = selectors.memory_get(memory_id=memory_id)
    if memory.status == Status.DELETED:
        raise Conflict("Already forgotten; nothing was changed.")
    reviewing.memory_forget(caller=CALLER, memory_id=memory_id, reason=_reason(request))
    return "Forgotten: agents no longer see this memory."


# --- audit -----------------------------------------------------------------------------------------------

AUDIT_DAYS = (1, 7, 30, 90, 365)
AUDIT_EVENTS = 200


def audit_page(request: HttpRequest) -> HttpResponse:
    try:
        days = int(request.GET.get("days", "7"))
    except ValueError:
        days = 7
    days = days if days in AUDIT_DAYS else 7
    credential = request.GET.get("credential") or None
    try:
        credential = audit.credential_for(credential) if credential else None
    except KenfoldError as exc:
        _flash(request, "error", exc.message)
        credential = None
    events = audit.audit_events(days=days, credential=credential, limit=AUDIT_EVENTS)
    return _page(
        request,
        "audit.html",
        {
            "days": days,
            "day_choices": AUDIT_DAYS,
            "credential": credential,
            "activity": _labelled(audit.audit_by_credential(days=days)),
            "events": _labelled(events),
            "limit": AUDIT_EVENTS,
        },
    )


# --- clients ---------------------------------------------------------------------------------------------


def clients(request: HttpRequest) -> HttpResponse:
    return _clients_page(request)


def _clients_page(request: HttpRequest, **extra: object) -> HttpResponse:
    status = 400 if extra.get("problem") else 200
    context = {"keys": list(keys.api_key_list()), "grants": grant_list()} | extra
    return _page(request, "clients.html", context, status=status)


# The agents `kenfold connect` configures; a key for another agent is shown with both, to choose from.
CONNECT_CLIENTS = ("claude-code", "codex")


def connect_lines(*, agent: str, raw_key: str, mcp_url: str) -> list[str]:
    """The commands that connect an agent with a key just created, on the agent's machine: save the key
    in a private file, then `kenfold connect` (which registers the MCP server and the hooks with it)."""
    key_file = f"~/.config/kenfold/{agent}.key"
    clients = [agent] if agent in CONNECT_CLIENTS else list(CONNECT_CLIENTS)
    return [
        f"mkdir -p ~/.config/kenfold && (umask 077 && printf '%s\\n' '{raw_key}' > {key_file})",
        *(f"kenfold connect {client} --url {mcp_url} --key-file {key_file}" for client in clients),
    ]


def _mcp_url(request: HttpRequest) -> str:
    # Behind a proxy the public address is the one agents reach; otherwise the address this page was
    # reached at (the Host allowlist already vetted it).
    base = settings.PUBLIC_URL or request.build_absolute_uri("/").rstrip("/")
    return f"{base}/mcp"


def _listed_projects(request: HttpRequest) -> list[str]:
    """The projects typed in a form, one per line; none means every project."""
    return [line for line in (request.POST.get("projects") or "").splitlines() if line.strip()]


def key_create(request: HttpRequest) -> HttpResponse:
    agent = (request.POST.get("agent") or "").strip()
    label = request.POST.get("label") or ""
    access = request.POST.get("access")
    typed = {"agent": agent, "label": label, "projects": request.POST.get("projects") or ""}
    if access not in ("read", "write"):
        return _clients_page(request, problem="Choose read-only or read and write access.", **typed)
    try:
        key, raw = keys.api_key_create(
            agent=agent,
            read_only=access == "read",
            label=label,
            projects=_listed_projects(request),
            user_memories="no_user_memories" not in request.POST,
        )
    except KenfoldError as exc:
        return _clients_page(request, problem=exc.message, **typed)
    # The key is shown on this response only (no-store, no redirect): only its hash is kept.
    lines = connect_lines(agent=key.agent, raw_key=raw, mcp_url=_mcp_url(request))
    return _clients_page(request, created=key, raw_key=raw, connect_lines=lines)


@action(back=lambda key_id: PREFIX + "clients")
def key_revoke(request: HttpRequest, key_id: uuid.UUID) -> str:
    before = keys.api_key_list(include_revoked=True).filter(pk=key_id).first()
    if before is None:
        raise NotFound("That key no longer exists; nothing was changed.")
    if before.revoked_at is not None:
        raise Conflict("Already revoked; nothing was changed.")
    key = keys.api_key_revoke(ident=str(before.pk))
    return f"Revoked the key {key.prefix}… of {key.agent}; it stops working now."


@action(back=lambda key_id: PREFIX + "clients")
def key_projects(request: HttpRequest, key_id: uuid.UUID) -> str:
    """Change the projects a key reaches (none listed: every project), without a new key."""
    listed = _listed_projects(request)
    key = keys.api_key_limit(
        ident=str(key_id),
        set_to=listed or None,
        all_projects=not listed,
        user_memories="no_user_memories" not in request.POST,
    )
    return (
        f"The key {key.prefix}… of {key.agent} now reaches {limit_summary(key.projects, key.user_memories)}."
    )


@action(back=lambda grant_id: PREFIX + "clients")
def grant_revoke_view(request: HttpRequest, grant_id: uuid.UUID) -> str:
    rows = [row for row in grant_list(include_revoked=True) if row.grant.pk == grant_id]
    if not rows:
        raise NotFound("That remote client no longer exists; nothing was changed.")
    if rows[0].grant.revoked_at is not None:
        raise Conflict("Already revoked; nothing was changed.")
    grant_revoke(ident=str(grant_id))
    return f"Disconnected {rows[0].client_name}: its tokens stop working now."


# --- consolidation proposals -------------------------------------------------------------------------------

PROPOSALS_PAGE = 20


@shown()
def proposals(request: HttpRequest) -> HttpResponse:
    status = (request.GET.get("status") or ProposalStatus.PENDING).strip()
    page = paging.page_number(request.GET.get("page"))
    if status not in ProposalStatus.values:
        raise InvalidInput(f"status must be one of: {', '.join(ProposalStatus.values)}")
    rows = consolidation.proposal_list(
        status=status, limit=PROPOSALS_PAGE + 1, offset=(page - 1) * PROPOSALS_PAGE
    )
    return _page(
        request,
        "proposals.html",
        {
            "rows": rows[:PROPOSALS_PAGE],
            "status": status,
            "statuses": ProposalStatus.values,
            "counts": consolidation.proposal_counts(),
            "page": page,
            "previous": urlencode({"status": status, "page": page - 1}) if page > 1 else "",
            "next": urlencode({"status": status, "page": page + 1}) if len(rows) > PROPOSALS_PAGE else "",
        },
    )


def _proposal_wording(exc: KenfoldError) -> str:
    text = exc.message
    text = "Already decided: " + text if "already decided" in text else text
    return text[:1].upper() + text[1:]


@action(
    back=lambda proposal_id: PREFIX + "proposals",
    not_found="That proposal no longer exists; nothing was changed.",
    wording=_proposal_wording,
)
def proposal_apply(request: HttpRequest, proposal_id: str) -> str:
    applied = consolidating.proposal_apply(proposal_id=proposal_id, actor=ACTOR)
    return f"Applied: {len(applied.retired)} memor{'y' if len(applied.retired) == 1 else 'ies'} retired."


@action(
    back=lambda proposal_id: PREFIX + "proposals",
    not_found="That proposal no longer exists; nothing was changed.",
    wording=_proposal_wording,
)
def proposal_reject(request: HttpRequest, proposal_id: str) -> str:
    consolidating.proposal_reject(proposal_id=proposal_id, actor=ACTOR, reason=_reason(request))
    return "Rejected: these memories will not be proposed together again."


def not_a_page(request: HttpRequest, rest: str = "") -> HttpResponse:
    return plain(404, "Not Found: this dashboard page does not exist. Start at /dashboard/.")
