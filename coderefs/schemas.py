"""Request and response bodies of the references REST API (spec §1.9).

The services check what JSON Schema cannot say (a path is repository-relative, a found target has a
hash), with messages of their own; `json_schema_extra` documents the simple rules they enforce without
pydantic enforcing them first with its generic wording.
"""

from pydantic import BaseModel, ConfigDict, Field

from kenfold.openapi import PROJECT_DESCRIPTION, PROJECT_SCHEMA, REF_PATH_FORMAT
from kenfold_common.coderefs import (
    HASH_CONTROL_PATTERN,
    MAX_HASH_CHARS,
    MAX_PATH_CHARS,
    MAX_SYMBOL_CHARS,
    SYMBOL_RE,
)

_COMMIT = {"type": "string", "pattern": "^[0-9a-f]{7,64}$"}
_OPTIONAL_COMMIT = {"anyOf": [_COMMIT, {"type": "null"}]}
_REF_PATH = {"type": "string", "maxLength": MAX_PATH_CHARS, "format": REF_PATH_FORMAT}
# The rules between a result's fields, which the service checks one by one: a path, a symbol or both;
# a found target has a hash, one that was not found has none.
_RESULT_RULES = {
    "allOf": [
        {
            "anyOf": [
                {"required": ["path"], "properties": {"path": {"minLength": 1}}},
                {"required": ["symbol"], "properties": {"symbol": {"minLength": 1}}},
            ]
        },
        {
            "anyOf": [
                {
                    "required": ["hash"],
                    "properties": {
                        "found": {"const": True},
                        "hash": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": MAX_HASH_CHARS,
                            "pattern": f"^[^{HASH_CONTROL_PATTERN[1:-1]}]*$",
                        },
                    },
                },
                {"properties": {"found": {"const": False}, "hash": {"type": "null"}}},
            ]
        },
    ]
}


class Target(BaseModel):
    path: str
    symbol: str
    anchor_commit: str | None = None
    anchor_hash: str | None = None


class TargetsOutput(BaseModel):
    scope: str
    targets: list[Target]


class CheckResult(BaseModel):
    # Unknown fields are refused (a client that misspells "found" must hear about it), and nothing is
    # coerced: "yes" is not a boolean.
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_RESULT_RULES)

    path: str = Field(
        "",
        description="Repository-relative path of the file; empty when only a symbol is given.",
        json_schema_extra={"anyOf": [{"maxLength": 0}, _REF_PATH]},
    )
    symbol: str = Field(
        "",
        description="An identifier, up to two qualifiers joined by '.', '::' or '#'; empty for a whole file.",
        json_schema_extra={"maxLength": MAX_SYMBOL_CHARS, "pattern": f"^(?:{SYMBOL_RE.pattern})?$"},
    )
    anchor_commit: str | None = Field(None, json_schema_extra=_OPTIONAL_COMMIT)
    found: bool
    hash: str | None = Field(
        None, description=f"Required when found (1-{MAX_HASH_CHARS} characters), else absent."
    )
    resolved_path: str | None = Field(None, json_schema_extra={"anyOf": [_REF_PATH, {"type": "null"}]})


class CheckInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "project": "github.com/kenfold/kenfold",
                    "commit": "4f2a9c1",
                    "results": [
                        {"path": "kenfold/api.py", "symbol": "GuardBearer", "found": True, "hash": "9b1e"},
                        {"path": "kenfold/gone.py", "found": False},
                    ],
                }
            ]
        },
    )

    project: str = Field(json_schema_extra=PROJECT_SCHEMA | {"description": PROJECT_DESCRIPTION})
    commit: str = Field(json_schema_extra=_COMMIT)
    results: list[CheckResult] = Field(max_length=1000)


class CheckOutput(BaseModel):
    updated: int
    anchored: int
    unmatched: int
    states: dict[str, int]
