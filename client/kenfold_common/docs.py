"""Rules of a project's docs shared by `kenfold docs sync` and the server that stores them."""

import re

from kenfold_common.coderefs import file_extension, is_valid_ref_path

DOC_EXTENSIONS = frozenset({"md", "mdx"})
# One chunk is one memory: below the memory limit (8,000 characters), leaving room for nothing else.
MAX_CHUNK_CHARS = 7500
MAX_CHUNKS_PER_FILE = 200
MAX_FILES_PER_SYNC = 200
MAX_DELETED_PER_SYNC = 1000
MAX_FIELD_CHARS = 1000
MAX_LIST_ITEMS = 50
MAX_HEADING_DEPTH = 6
DEFAULT_RELATION = "related"
RELATION_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
RELATION_RE = re.compile(RELATION_PATTERN)
FILE_HASH_RE = re.compile(r"^[0-9a-f]{64}$")
# relates_to entries with these are patterns, which are never followed.
GLOB_CHARS_RE = re.compile(r"[*?\[]")


def is_doc_path(path: str) -> bool:
    """A repository-relative path of a Markdown file (`docs/guide/setup.md`, `README.md`)."""
    return is_valid_ref_path(path) and file_extension(path.rpartition("/")[2]) in DOC_EXTENSIONS
