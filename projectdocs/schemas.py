"""Request and response bodies of the docs REST API (`kenfold docs sync`).

Sizes are bounded here; what JSON Schema cannot say (a path is a repository-relative Markdown file, a
chunk holds no credential) the service checks, with messages of its own.
"""

from pydantic import BaseModel, ConfigDict, Field

from kenfold.openapi import DOC_PATH_FORMAT, PROJECT_DESCRIPTION, PROJECT_SCHEMA
from kenfold_common.coderefs import MAX_PATH_CHARS
from kenfold_common.docs import (
    MAX_CHUNK_CHARS,
    MAX_CHUNKS_PER_FILE,
    MAX_DELETED_PER_SYNC,
    MAX_FIELD_CHARS,
    MAX_FILES_PER_SYNC,
    MAX_HEADING_DEPTH,
    MAX_LIST_ITEMS,
    RELATION_PATTERN,
)

_STRICT = ConfigDict(extra="forbid", strict=True)
_DOC_PATH = {"format": DOC_PATH_FORMAT, "maxLength": MAX_PATH_CHARS}
# The service's limits for a page's texts: no NUL character, at most MAX_FIELD_CHARS (a section's content
# MAX_CHUNK_CHARS).
_NO_NUL = "^[^\\u0000]*$"
# A section's content also has a character that is not whitespace (Python's str.strip: the separators
# U+001C-U+001F and U+0085 count as whitespace too).
_NOT_BLANK = "^[^\\u0000]*[^\\s\\u0000\\u001c-\\u001f\\u0085][^\\u0000]*$"
_FIELD_TEXT = {"type": "string", "maxLength": MAX_FIELD_CHARS, "pattern": _NO_NUL}
_FIELD_LIST = {"items": _FIELD_TEXT}


class DocRelation(BaseModel):
    model_config = _STRICT

    path: str = Field(description="The related page, repository-relative.", json_schema_extra=_DOC_PATH)
    relation: str = Field(
        "related",
        description="feeds_into, part_of, implements, ... (a lowercase word)",
        json_schema_extra={"pattern": RELATION_PATTERN},
    )


class DocChunk(BaseModel):
    model_config = _STRICT

    heading_path: list[str] = Field(
        default_factory=list, max_length=MAX_HEADING_DEPTH, json_schema_extra=_FIELD_LIST
    )
    content: str = Field(json_schema_extra={"maxLength": MAX_CHUNK_CHARS, "pattern": _NOT_BLANK})


class DocFile(BaseModel):
    model_config = _STRICT

    path: str = Field(
        description="Repository-relative path of the Markdown file.", json_schema_extra=_DOC_PATH
    )
    file_hash: str = Field(
        description="SHA-256 of the file's bytes, 64 lowercase hex digits.",
        json_schema_extra={"pattern": "^[0-9a-f]{64}$"},
    )
    title: str | None = Field(None, json_schema_extra={"anyOf": [_FIELD_TEXT, {"type": "null"}]})
    tags: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS, json_schema_extra=_FIELD_LIST)
    aliases: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS, json_schema_extra=_FIELD_LIST)
    answers: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS, json_schema_extra=_FIELD_LIST)
    description: str | None = Field(None, json_schema_extra={"anyOf": [_FIELD_TEXT, {"type": "null"}]})
    relates_to: list[DocRelation] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    # At least one section; the service says so in its own words, so pydantic does not check it first.
    chunks: list[DocChunk] = Field(max_length=MAX_CHUNKS_PER_FILE, json_schema_extra={"minItems": 1})


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
    deleted: list[str] = Field(
        default_factory=list,
        max_length=MAX_DELETED_PER_SYNC,
        json_schema_extra={"items": {"type": "string"} | _DOC_PATH},
    )


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
