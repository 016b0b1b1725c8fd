"""Request and response bodies of the references REST API (spec §1.9)."""

from pydantic import BaseModel, ConfigDict, Field


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

    path: str = ""
    symbol: str = ""
    anchor_commit: str | None = None
    found: bool
    hash: str | None = None
    resolved_path: str | None = None


class CheckInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    project: str
    commit: str
    results: list[CheckResult] = Field(max_length=1000)


class CheckOutput(BaseModel):
    updated: int
    anchored: int
    unmatched: int
    states: dict[str, int]
