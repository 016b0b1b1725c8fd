"""Request and response bodies of the docs REST API (`kenfold docs sync`).

Sizes are bounded here; what JSON Schema cannot say (a path is a repository-relative Markdown file, a
chunk holds no credential) the service checks, with messages of its own.
"""

from pydantic import BaseModel, ConfigDict, Field

from kenfold.openapi import PROJECT_DESCRIPTION, PROJECT_SCHEMA
from kenfold_common.docs import (
    MAX_CHUNKS_PER_FILE,
    MAX_DELETED_PER_SYNC,
    MAX_FIELD_CHARS,
    MAX_FILES_PER_SYNC,
    MAX_HEADING_DEPTH,
    MAX_LIST_ITEMS,
)

_STRICT = ConfigDict(extra="forbid", strict=True)


class DocRelation(BaseModel):
    model_config = _STRICT

    path: str = Field(description="The related page, repository-relative.")
    relation: str = Field("related", description="feeds_into, part_of, implements, ... (a lowercase word)")


class DocChunk(BaseModel):
    model_config = _STRICT

    heading_path: list[str] = Field(default_factory=list, max_length=MAX_HEADING_DEPTH)
    content: str


class DocFile(BaseModel):
    model_config = _STRICT

    path: str = Field(description="Repository-relative path of the Markdown file.")
    file_hash: str = Field(description="SHA-256 of the file's bytes, 64 lowercase hex digits.")
    title: str | None = None
    tags: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    aliases: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    answers: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    description: str | None = Field(None, json_schema_extra={"maxLength": MAX_FIELD_CHARS})
    relates_to: list[DocRelation] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    chunks: list[DocChunk] = Field(max_length=MAX_CHUNKS_PER_FILE)


class DocsSyncInput(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "project": "github.com/kenfold/kenfold",
                    "files": [
                        {
                            "path": "docs/deploy.md",
                            "file_hash": "0" * 64,
                            "title": "Deploying",
                            "tags": ["deploy"],
                            "relates_to": [{"path": "docs/monitoring.md", "relation": "monitors"}],
                            "chunks": [{"heading_path": ["Rollback"], "content": "## Rollback\n\nRun ..."}],
                        }
                    ],
                    "deleted": ["docs/old.md"],
                }
            ]
        },
    )

    project: str = Field(json_schema_extra=PROJECT_SCHEMA | {"description": PROJECT_DESCRIPTION})
    files: list[DocFile] = Field(default_factory=list, max_length=MAX_FILES_PER_SYNC)
    deleted: list[str] = Field(default_factory=list, max_length=MAX_DELETED_PER_SYNC)


class RefusedFile(BaseModel):
    path: str
    error: str


class DocsSyncOutput(BaseModel):
    scope: str
    added: int = Field(description="files stored for the first time")
    updated: int = Field(description="files whose changed sections superseded their earlier versions")
    unchanged: int
    retired: int = Field(description="deleted files whose sections are no longer served")
    sections_stored: int
    sections_kept: int = Field(description="sections of updated files that did not change")
    links: int = Field(description="relates_to links between the project's pages after this sync")
    refused: list[RefusedFile] = Field(default_factory=list)


class DocFileState(BaseModel):
    path: str
    file_hash: str
    sections: int


class DocFilesOutput(BaseModel):
    scope: str
    files: list[DocFileState]
