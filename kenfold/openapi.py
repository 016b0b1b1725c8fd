"""What the REST API's OpenAPI document declares beyond what ninja derives from a view's signature.

Some answers never come from a view: the admission gate (408, 503), RequestGuard (401, 403) and the error
handlers in kenfold.api (400, 413, 503) answer before or around it, always as `{"error": "..."}`. And the
endpoints that parse their input themselves, to give clearer messages than ninja's, declare it here.
"""

from typing import Any

from pydantic import BaseModel, Field

from kenfold.backpressure import RETRY_AFTER_S


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
