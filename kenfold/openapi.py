"""What the REST API's OpenAPI document declares beyond what ninja derives from a view's signature.

Some answers never come from a view: the admission gate (408, 503), RequestGuard (401, 403) and the error
handlers in edge.api (400, 413, 503) answer before or around it, always as `{"error": "..."}`. And the
endpoints that parse their input themselves, to give clearer messages than ninja's, declare it here.
"""

import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from ninja import Router
from pydantic import BaseModel, Field

from kenfold.capacity import RETRY_AFTER_S
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import MAX_PROJECT_LENGTH

# A view function, as a route decorator takes and gives it back.
type View = Callable[..., Any]


class ErrorOutput(BaseModel):
    error: str = Field(description="What went wrong and what to do next.")


# Every status an API operation can answer with the error shape, and who answers it.
ERROR_STATUSES = {
    400: "The request is invalid; `error` says which part and why.",
    401: "No API key or OAuth access token, or one that is unknown, revoked or expired.",
    403: "A Host that is not allowed, a cross-site request, or a read-only caller asking to write.",
    408: "The body ended before its Content-Length.",
    413: "The body is larger than 1 MiB.",
    429: "The credential used up a write quota; `error` names the limit and when it resets (Retry-After).",
    503: "Kenfold is busy or its database is unavailable; retry after Retry-After seconds.",
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": f"Seconds to wait before retrying ({RETRY_AFTER_S}).",
        "required": True,
        "schema": {"type": "integer"},
    }
}


# The errors of the REST operations: a GET has no body, so it cannot be cut short (408) or too large (413).
READ_ERRORS = (400, 401, 403, 503)
# A write may also be over its credential's quota (429, memories.quotas).
WRITE_ERRORS = (400, 401, 403, 408, 413, 429, 503)

# Formats of our own, for the rules JSON Schema cannot state: what each means is in PROJECT_DESCRIPTION and
# the fields' descriptions, and a generator of requests must be told (tests/kenfold/schemathesis_hooks.py).
# A project: not a local path, a host or name left once the scheme, credentials, port and trailing .git are
# removed, no control or invisible characters, no credential (kenfold_common.identity.normalize_project).
PROJECT_FORMAT = "kenfold-project"
# A repository-relative path of a file Kenfold references (kenfold_common.coderefs.is_valid_ref_path).
REF_PATH_FORMAT = "kenfold-ref-path"
# A repository-relative path of a Markdown page (kenfold_common.docs.is_doc_path).
DOC_PATH_FORMAT = "kenfold-doc-path"

PROJECT_SCHEMA = {"type": "string", "minLength": 1, "pattern": r"\S", "format": PROJECT_FORMAT}
PROJECT_DESCRIPTION = (
    "The repository's git remote URL (such as git@github.com:org/repo.git) or a short project name; "
    f"not a local path, at most {MAX_PROJECT_LENGTH} characters once normalized."
)
# `project` in a query string is read by the views, not by ninja, so that a missing or blank one gets the
# service's own message ("project is required: pass the repository's git remote URL"); the document
# declares it as the required parameter it is.
PROJECT_PARAMETER = {
    "in": "query",
    "name": "project",
    "required": True,
    "description": PROJECT_DESCRIPTION,
    "schema": PROJECT_SCHEMA,
    "example": "github.com/kenfold/kenfold",
}


def error_responses(*statuses: int) -> dict[Any, type[BaseModel]]:
    """For a view's `response=`: the error shape under each of `statuses`."""
    return {frozenset(statuses): ErrorOutput}


def error_documentation(*statuses: int) -> dict[str, Any]:
    """For a view's `openapi_extra`: what each error status means (ninja only knows its reason phrase),
    and the Retry-After header every 429 and 503 carries."""
    responses: dict[int, dict[str, Any]] = {
        status: {"description": ERROR_STATUSES[status]} for status in statuses
    }
    if 503 in responses:
        responses[503]["headers"] = _RETRY_AFTER
    if 429 in responses:
        responses[429]["headers"] = {
            "Retry-After": {
                "description": "Seconds until the quota's window resets.",
                "required": True,
                "schema": {"type": "integer"},
            }
        }
    return {"responses": responses}


def json_request_body(model: type[BaseModel]) -> dict[str, Any]:
    """For a view's `openapi_extra`: a required JSON body of `model`, for a view that parses it itself.

    The model's nested definitions are inlined: `#/$defs/...` would resolve against the whole document,
    where nothing lives at that address.
    """
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(definitions[node["$ref"].rpartition("/")[2]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(item) for item in node]
        return node

    return {"requestBody": {"required": True, "content": {"application/json": {"schema": inline(schema)}}}}


def json_body[Input: BaseModel](request: HttpRequest, model: type[Input], *, fields: str) -> Input:
    """The request's body as `model`, for the views that declare it with `json_request_body`.

    Parsed here rather than by ninja, whose parse error is a bare "Cannot parse request body"; `fields`
    names what the object holds ("project, files and deleted") in the message for a body that is not one.
    Validation errors propagate as pydantic's, which edge.api turns into a 400 naming each field.
    """
    try:
        body = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        # json.loads also refuses trailing data after the object ("Extra data").
        raise InvalidInput(f"the body is not one JSON object: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidInput(f"the body must be a JSON object with {fields}")
    return model.model_validate(body)


def project_read(router: Router, path: str, *, response: type[BaseModel]) -> Callable[[View], View]:
    """A GET (and HEAD) route of an app's REST router that reads one project's records (`?project=`): its
    answer `response`, the read errors and the project parameter documented once for every such route."""
    return router.api_operation(
        ["GET", "HEAD"],
        path,
        response={200: response, **error_responses(*READ_ERRORS)},
        openapi_extra={"parameters": [PROJECT_PARAMETER], **error_documentation(*READ_ERRORS)},
    )


def project_write(
    router: Router, path: str, *, body: type[BaseModel], response: type[BaseModel]
) -> Callable[[View], View]:
    """A POST route of an app's REST router whose JSON `body` the view parses with `json_body` (so the
    document declares it: ninja does not see it), answering `response` or one of the write errors."""
    return router.post(
        path,
        response={200: response, **error_responses(*WRITE_ERRORS)},
        openapi_extra=json_request_body(body) | error_documentation(*WRITE_ERRORS),
    )
