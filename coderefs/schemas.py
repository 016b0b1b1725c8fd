"""Request and response bodies of the references REST API (spec §1.9).

The services check what JSON Schema cannot say (a path is repository-relative, a found target has a
hash), with messages of their own; `json_schema_extra` documents the simple rules they enforce without
pydantic enforcing them first with its generic wording.
"""

from pydantic import BaseModel, ConfigDict, Field

from kenfold.openapi import PROJECT_DESCRIPTION, PROJECT_SCHEMA
from kenfold_common.coderefs import MAX_PATH_CHARS, MAX_SYMBOL_CHARS

_COMMIT = {"type": "string", "pattern": "^[0-9a-f]{7,64}$"}
_OPTIONAL_COMMIT = {"anyOf": [_COMMIT, {"type": "null"}]}


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
    model_config = ConfigDict(extra="forbid", strict=True)

    path: str = Field("", json_schema_extra={"maxLength": MAX_PATH_CHARS})
    symbol: str = Field("", json_schema_extra={"maxLength": MAX_SYMBOL_CHARS})
    anchor_commit: str | None = Field(None, json_schema_extra=_OPTIONAL_COMMIT)
    found: bool
    hash: str | None = Field(None, description="Required when found (1-100 characters), else absent.")
    resolved_path: str | None = Field(None, json_schema_extra={"maxLength": MAX_PATH_CHARS})


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
