"""Find a symbol's definitions with tree-sitter and hash them (spec §1.9, definition finder).

One generic rule serves every language instead of a query per grammar: a definition is where the name
appears as a leaf identifier in the ``name`` field of a node that is not a use (a call, an argument, an
import, ...), on the ``left`` of an assignment, or as a C/C++ ``declarator``. The hash covers the text of
every definition with whitespace runs collapsed, so reformatting keeps a reference current while any
change to a definition's tokens (a renamed parameter, an edited body) marks it changed.

Grammars come from the official per-language wheels on PyPI, which carry the compiled parsers: nothing is
downloaded at run time.
"""

import hashlib
import importlib
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Node, Parser, Tree

MAX_FILE_BYTES = 1 << 20
PARSE_TIMEOUT_SECONDS = 2.0

# Grammar name -> (module, function returning the language pointer).
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "go": ("tree_sitter_go", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "bash": ("tree_sitter_bash", "language"),
}
# fmt: off
_EXTENSION_GRAMMARS: dict[str, str] = {
    "py": "python", "pyi": "python", "go": "go", "ts": "typescript", "mts": "typescript",
    "cts": "typescript", "tsx": "tsx", "js": "javascript", "jsx": "javascript", "mjs": "javascript",
    "cjs": "javascript", "rs": "rust", "java": "java", "kt": "kotlin", "kts": "kotlin", "rb": "ruby",
    "cs": "c_sharp", "php": "php", "c": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp",
    "hh": "cpp", "swift": "swift", "scala": "scala", "sh": "bash", "bash": "bash",
    # Headers are parsed as C++: its grammar reads C declarations too, the C grammar cannot read classes.
    "h": "cpp",
}
# A node type containing any of these words uses a name rather than defining it. The spec's list, plus
# "export" (TypeScript's `export { name }` is the twin of an import) and "generic" (`Store<Item>`).
_NOT_DEFINITION_WORDS = (
    "call", "invocation", "expression", "access", "argument", "reference", "import", "parameter",
    "annotation", "decorator", "attribute", "jsx", "element", "pattern", "label", "use_", "tag", "export",
    "generic",
)
# fmt: on
# Node types that spell a qualified name (C++ `ns::Type::method`, Rust `a::b`, Ruby `A::B`, C# `A.B`): the
# innermost part sits in their `name` field, so the whole chain stands for one name.
_QUALIFIED_NAME_WORDS = ("qualified", "scoped", "scope_resolution", "nested")
_DEFINITION_SUFFIXES = ("definition", "declaration")
_QUALIFIER_SEPARATOR = re.compile(r"\.|::|#")
_IDENTIFIER_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_WHITESPACE_RUN = re.compile(rb"\s+")
_READ_CHUNK_BYTES = 64 * 1024


class UnsupportedFile(Exception):
    """This build has no grammar for the file, or the file is too large to parse within the budget."""


class ParseFailed(Exception):
    """The parser gave up (time limit, crash) or the file has syntax errors where the symbol was sought."""


def grammar_for_path(path: str) -> str | None:
    """The grammar this build parses ``path`` with, from its extension; None when there is none."""
    name = path.rpartition("/")[2]
    stem, dot, extension = name.removeprefix(".").rpartition(".")
    return _EXTENSION_GRAMMARS.get(extension.lower()) if stem and dot else None


@cache
def _language(grammar: str) -> Language:
    module_name, function = _GRAMMARS[grammar]
    return Language(getattr(importlib.import_module(module_name), function)())


@dataclass(frozen=True)
class ParsedFile:
    """A source file and its syntax tree."""

    path: str
    source: bytes
    tree: Tree

    def definitions(self, symbol: str) -> list[bytes]:
        """The text of each definition of ``symbol`` in document order.

        Raises ParseFailed when nothing was found but the file has syntax errors: the definition may be
        hidden in a part the grammar could not read, and reporting it missing would mark a good memory stale.
        """
        qualifiers, name = split_symbol(symbol)
        found: dict[tuple[int, int], Node] = {}
        for leaf in self._leaves_named(name.encode()):
            definition = _definition_of(leaf)
            if definition is not None and _qualifiers_match(self.source, definition, leaf, qualifiers):
                found.setdefault(definition.byte_range, definition)
        if not found and self.tree.root_node.has_error:
            raise ParseFailed(f"{self.path} has syntax errors")
        return [_source_text(self.source, node) for _, node in sorted(found.items())]

    def _leaves_named(self, name: bytes) -> Iterable[Node]:
        # Looking up each textual occurrence is much faster than walking every node of a large file.
        for match in re.finditer(re.escape(name), self.source):
            node = self.tree.root_node.named_descendant_for_byte_range(match.start(), match.end())
            if node is not None and node.child_count == 0 and node.byte_range == match.span():
                yield node


def split_symbol(symbol: str) -> tuple[list[str], str]:
    """``ns::Type::method`` -> (["ns", "Type"], "method"); a trailing ``()`` is not part of the name."""
    *qualifiers, name = _QUALIFIER_SEPARATOR.split(symbol.removesuffix("()"))
    return qualifiers, name


def parse_file(*, path: str, source: bytes, timeout: float = PARSE_TIMEOUT_SECONDS) -> ParsedFile:
    """Parse ``source`` with the grammar for ``path``; UnsupportedFile or ParseFailed when that is not possible."""
    grammar = grammar_for_path(path)
    if grammar is None:
        raise UnsupportedFile(f"no grammar for {path} in this build")
    if len(source) > MAX_FILE_BYTES:
        raise UnsupportedFile(f"{path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        parser = Parser(_language(grammar))
        # The clock starts once the grammar is loaded: its first import (a shared library) is not parsing.
        # Counted in, it is the likely reason small Swift and Scala files were cancelled on a busy machine
        # (make test, 2026-12-03; they parsed at once when run again).
        give_up_at = time.monotonic() + timeout
        tree = parser.parse(
            lambda offset, _point: source[offset : offset + _READ_CHUNK_BYTES],
            progress_callback=lambda _offset, _has_error: time.monotonic() > give_up_at,
        )
    except Exception as error:  # a cancelled parse raises ValueError; a grammar bug must not end the sync
        raise ParseFailed(f"could not parse {path}: {error}") from error
    return ParsedFile(path=path, source=source, tree=tree)


def symbol_hash(files: Sequence[tuple[str, Sequence[bytes]]]) -> str:
    """``sym:`` + 32 hex of SHA-256 over each file's ``path NUL`` and its definitions, whitespace collapsed."""
    digest = hashlib.sha256()
    for path, definitions in files:
        digest.update(path.encode(errors="surrogateescape") + b"\0")
        for text in definitions:
            digest.update(_WHITESPACE_RUN.sub(b" ", text) + b"\0")
    return "sym:" + digest.hexdigest()[:32]


def _field_of(node: Node) -> str | None:
    parent = node.parent
    if parent is None:
        return None
    for index, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(index)
    return None


def _uses_name(node_type: str) -> bool:
    return any(word in node_type for word in _NOT_DEFINITION_WORDS)


def _definition_of(leaf: Node) -> Node | None:
    """The definition ``leaf`` names, or None when the leaf is a use of the name."""
    node, field = leaf, _field_of(leaf)
    while field == "name" and node.parent is not None and _is_qualified_name(node.parent.type):
        node = node.parent
        field = _field_of(node)
    parent = node.parent
    if parent is None:
        return None
    if field == "name":
        # C/C++ write every use of a type as `struct point`: only the one with a body defines it.
        if parent.type.endswith("_specifier") and parent.child_by_field_name("body") is None:
            return None
        return None if _uses_name(parent.type) else parent
    if field == "left":
        # `total += 1` only updates a name; `LIMIT = 3` defines one.
        return parent if "assignment" in parent.type and "augmented" not in parent.type else None
    if field == "declarator":
        return _enclosing_declaration(parent)
    return None


def _is_qualified_name(node_type: str) -> bool:
    return any(word in node_type for word in _QUALIFIED_NAME_WORDS)


def _enclosing_declaration(node: Node) -> Node | None:
    """The nearest *definition or *declaration at or above a C/C++ declarator, unless it is a parameter."""
    current: Node | None = node
    while current is not None:
        if current.type.endswith(_DEFINITION_SUFFIXES):
            return None if _uses_name(current.type) else current
        current = current.parent
    return None


def _qualifiers_match(source: bytes, definition: Node, leaf: Node, qualifiers: list[str]) -> bool:
    """Whether every qualifier of ``A.B`` / ``A::B`` / ``A#B`` names the definition's context.

    The context is the names and types of the definitions enclosing it (a class, a namespace, a Rust
    ``impl``) and the identifiers written before the name in its own text (a Go receiver, C++ ``Type::``).
    """
    if not qualifiers:
        return True
    words = set(_IDENTIFIER_WORD.findall(source[definition.start_byte : leaf.start_byte]))
    ancestor = definition.parent
    while ancestor is not None:
        for field in ("name", "type"):
            for child in ancestor.children_by_field_name(field):
                words.update(_IDENTIFIER_WORD.findall(_source_text(source, child)))
        ancestor = ancestor.parent
    return all(qualifier.encode() in words for qualifier in qualifiers)


def _source_text(source: bytes, node: Node) -> bytes:
    return source[node.start_byte : node.end_byte]
