"""What the server and the sync client agree on about code references (spec §1.9).

Which repository paths and symbol names a reference may name, what a commit id looks like, and the names
of a reference's states. The server checks what clients report with these rules and the client checks
what the server sends with the same ones, so neither can accept what the other would refuse.
"""

import re

MAX_PATH_CHARS = 300
MAX_SYMBOL_CHARS = 100
# A found target's hash (the client's digest of its definition).
MAX_HASH_CHARS = 100
# What a hash may not hold: C0 and C1 controls and DEL (NUL cannot even be stored). The OpenAPI document
# states the same rule as a pattern (coderefs.schemas).
HASH_CONTROL_PATTERN = "[\\u0000-\\u001f\\u007f-\\u009f]"
HASH_CONTROL_RE = re.compile(HASH_CONTROL_PATTERN)

# A commit as git names it: 7 to 64 lowercase hex digits (abbreviated SHA-1 up to full SHA-256). git
# prints ids in lowercase; accepting upper case on one side only would let the two disagree.
COMMIT_RE = re.compile(r"[0-9a-f]{7,64}")

# Reference states. Display order: the usual ones first.
CURRENT = "current"
CHANGED = "changed"
MISSING = "missing"  # the file or symbol is gone
PENDING = "pending"  # not anchored to any commit yet
UNRESOLVED = "unresolved"  # never found; offered again later, never shown
REF_STATES = (CURRENT, CHANGED, MISSING, PENDING, UNRESOLVED)

# The word lists below are kept as paragraphs; one word per line would make them unreadable.
# fmt: off
CODE_EXTENSIONS: frozenset[str] = frozenset(
    {
        "go", "py", "pyi", "ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs", "rs", "java", "kt", "kts",
        "swift", "rb", "php", "cs", "fs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "scala", "sql",
        "sh", "bash", "zsh", "fish", "ps1", "yaml", "yml", "toml", "json", "jsonc", "proto", "graphql", "gql",
        "css", "scss", "sass", "less", "html", "vue", "svelte", "astro", "md", "mdx", "tf", "hcl", "ex", "exs",
        "erl", "dart", "lua", "zig", "nix", "ml", "mli", "clj", "cljs", "r", "jl", "pl", "pm", "gradle", "xml",
        "ini", "cfg", "conf", "lock"
    }
)
# Files worth referencing that do not define symbols a definition finder could look up.
DATA_EXTENSIONS: frozenset[str] = frozenset(
    {
        "yaml", "yml", "toml", "json", "jsonc", "md", "mdx", "lock", "ini", "cfg", "conf", "xml", "html", "css",
        "scss", "sass", "less"
    }
)
_SYMBOL_FILE_EXTENSIONS = CODE_EXTENSIONS - DATA_EXTENSIONS

_SPECIAL_FILE_NAMES = frozenset({"Makefile", "Dockerfile", "Justfile", "Gemfile", "Rakefile", "Procfile"})
# Written like file names, but in prose they name the product, not a file in the repository.
_PRODUCT_NAMES = frozenset(
    {
        "next.js", "node.js", "vue.js", "nuxt.js", "express.js", "three.js", "chart.js", "d3.js", "moment.js",
        "ember.js", "backbone.js", "react.js", "socket.io", "alpine.js", "solid.js", "p5.js", "anime.js",
        "day.js", "pixi.js", "babylon.js"
    }
)
# fmt: on

_PATH_SEGMENT = re.compile(r"[A-Za-z0-9_.@+\-\[\]]+")
_DOMAIN = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")

IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
# Up to two qualifiers joined by '.', '::' or '#', optionally written as a call.
SYMBOL_RE = re.compile(rf"{IDENTIFIER}(?:(?:\.|::|#){IDENTIFIER}){{0,2}}(?:\(\))?")


def is_commit(value: str) -> bool:
    return COMMIT_RE.fullmatch(value) is not None


def is_valid_ref_path(path: str) -> bool:
    """Whether ``path`` is a repository-relative path to a file we would reference (already normalized)."""
    if not path or len(path) > MAX_PATH_CHARS:
        return False
    segments = path.split("/")
    # The segment alphabet has no ':', '#' or '~' and a leading '/' leaves an empty first segment, so this
    # also rejects absolute and home paths and any line suffix left over.
    if any(segment in ("", ".", "..") or not _PATH_SEGMENT.fullmatch(segment) for segment in segments):
        return False
    if len(segments) > 1 and _DOMAIN.fullmatch(segments[0]):
        return False  # an import path or a URL without its scheme: github.com/x/y/z.go
    name = segments[-1]
    if name in _SPECIAL_FILE_NAMES:
        return True
    if len(segments) == 1 and name.lower() in _PRODUCT_NAMES:
        return False
    return file_extension(name) in CODE_EXTENSIONS


def is_valid_ref_symbol(symbol: str) -> bool:
    """Whether ``symbol`` is identifier-shaped: up to two qualifiers joined by '.', '::' or '#'."""
    return len(symbol) <= MAX_SYMBOL_CHARS and SYMBOL_RE.fullmatch(symbol) is not None


def is_code_file(path: str) -> bool:
    """Whether the file at ``path`` may define symbols (a code extension that is not a data format)."""
    return file_extension(path.rpartition("/")[2]) in _SYMBOL_FILE_EXTENSIONS


def file_extension(name: str) -> str:
    """Lower-cased extension of a base name; "" when there is none, as for the dotfile ``.env``."""
    stem, _, extension = name.removeprefix(".").rpartition(".")
    return extension.lower() if stem else ""
