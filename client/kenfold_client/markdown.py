"""A Markdown page as `kenfold docs sync` sends it: frontmatter fields and heading-sized chunks.

Chunks follow the page's structure, because a section under its own heading is what a question is
usually about: one chunk per H2 section (the text before the first H2 is a preamble chunk of its own),
an oversized section split at its H3 headings, then H4, then between paragraphs. Fenced code blocks and
tables are never cut (a half table answers nothing), so a chunk holding one may pass the target size; only
a block longer than the server's limit for one memory is cut, between lines. A section too small to
stand alone is merged into its neighbour, so its words are kept.

Frontmatter is read with PyYAML when it is installed, else with a small reader of the forms docs use
(`key: value`, `key: [a, b]`, lists of strings, lists of `path:`/`relation:` pairs, folded text).
"""

import re
from dataclasses import dataclass, field
from typing import Any

from kenfold_common.docs import DEFAULT_RELATION, MAX_CHUNK_CHARS, RELATION_RE

# Target size of a chunk in characters (about 1,000 tokens).
CHUNK_CHARS = 4000
# Text before the first H2 shorter than this is not a chunk of its own: it joins the first section.
MIN_PREAMBLE_CHARS = 50
# A section whose text (heading aside) is shorter than this joins the chunk before it.
MIN_SECTION_CHARS = 80
MAX_HEADING_LEVEL = 4

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_TABLE_ROW = re.compile(r"^\s*\|")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
LIST_FIELDS = ("tags", "aliases", "answers")
TEXT_FIELDS = ("title", "description")


@dataclass(frozen=True)
class Relation:
    path: str  # as written in the frontmatter
    relation: str


@dataclass(frozen=True)
class Chunk:
    heading_path: tuple[str, ...]
    content: str


@dataclass(frozen=True)
class Section:
    """A heading's section as written, before merging: what lint checks for size."""

    heading_path: tuple[str, ...]
    chars: int  # of its own text, heading line aside


@dataclass
class Page:
    title: str | None  # from the frontmatter, else the first H1
    frontmatter_title: bool
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    description: str | None = None
    relates_to: list[Relation] = field(default_factory=list)
    # Problems of the frontmatter itself (unreadable YAML, a field of the wrong shape), for lint.
    problems: list[str] = field(default_factory=list)
    body: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    has_preamble: bool = False


def parse_page(text: str, *, name: str) -> Page:
    """Frontmatter, title and chunks of one page; `name` (the file's name) titles a page without one."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    meta: dict[str, Any] = {}
    problems: list[str] = []
    body = text
    match = _FRONTMATTER.match(text)
    if match:
        body = text[match.end() :]
        meta, problem = _read_frontmatter(match.group(1))
        if problem:
            problems.append(problem)
    blocks = _blocks(body)
    headings = [(block.level, block.heading) for block in blocks if block.level]
    h1 = next((title for level, title in headings if level == 1), None)
    fm_title = _text(meta.get("title"), "title", problems)
    page = Page(
        title=fm_title or h1 or _title_from_name(name),
        frontmatter_title=bool(fm_title),
        description=_text(meta.get("description"), "description", problems),
        problems=problems,
        body=body,
        headings=headings,
    )
    for name_ in LIST_FIELDS:
        setattr(page, name_, _strings(meta.get(name_), name_, problems))
    page.relates_to = _relations(meta.get("relates_to"), problems)
    page.chunks, page.sections, page.has_preamble = _chunk(blocks)
    return page


# --- frontmatter ------------------------------------------------------------------------------------


def _read_frontmatter(source: str) -> tuple[dict[str, Any], str | None]:
    try:
        import yaml  # optional: `pip install pyyaml` gives the full YAML syntax
    except ImportError:
        return _read_simple_yaml(source), None
    try:
        data = yaml.safe_load(source)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        return {}, f"the frontmatter is not valid YAML{where}"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, "the frontmatter is not a mapping of fields"
    return data, None


_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_ITEM = re.compile(r"^(\s*)-\s*(.*)$")


def _read_simple_yaml(source: str) -> dict[str, Any]:
    """The subset of YAML that frontmatter uses, for installations without PyYAML."""
    data: dict[str, Any] = {}
    lines = source.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _KEY.match(line)
        if not match or line[:1].isspace():
            continue
        key, value = match.group(1), match.group(2).strip()
        if value in (">", "|", ">-", "|-", ">+", "|+"):
            parts = []
            while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
                parts.append(lines[index].strip())
                index += 1
            joiner = "\n" if value.startswith("|") else " "
            data[key] = joiner.join(parts).strip()
        elif value:
            data[key] = _scalar_or_flow(value)
        else:
            items: list[Any] = []
            while index < len(lines) and (not lines[index].strip() or lines[index][:1].isspace()):
                item = _ITEM.match(lines[index])
                index += 1
                if item is None:
                    pair = _KEY.match(lines[index - 1].strip())
                    if pair and items and isinstance(items[-1], dict):
                        items[-1][pair.group(1)] = _scalar(pair.group(2).strip())
                    continue
                rest = item.group(2).strip()
                pair = _KEY.match(rest)
                if pair and not rest.startswith(("'", '"')):
                    items.append({pair.group(1): _scalar(pair.group(2).strip())})
                else:
                    items.append(_scalar(rest))
            data[key] = items or None
    return data


def _scalar_or_flow(value: str) -> Any:
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(part.strip()) for part in _split_flow(value[1:-1]) if part.strip()]
    return _scalar(value)


def _split_flow(inner: str) -> list[str]:
    parts, current, quote = [], "", ""
    for char in inner:
        if quote:
            current += char
            quote = "" if char == quote else quote
        elif char in "'\"":
            current += char
            quote = char
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    # A comment after a plain value (`tags: deploy  # note`).
    return re.sub(r"\s+#.*$", "", value)


def _text(value: Any, name: str, problems: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split()) or None
    problems.append(f"`{name}` should be text")
    return None


def _strings(value: Any, name: str, problems: list[str]) -> list[str]:
    """A list field: a YAML list, or one comma-separated string (`tags: deploy, ci`)."""
    if value is None:
        return []
    if isinstance(value, str):
        items: list[Any] = value.split(",") if name == "tags" else [value]
    elif isinstance(value, list):
        items = value
    else:
        problems.append(f"`{name}` should be a list of text")
        return []
    out = []
    for item in items:
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            text = " ".join(str(item).split())
            if text and text not in out:
                out.append(text)
        else:
            problems.append(f"`{name}` should be a list of text")
    return out


def _relations(value: Any, problems: list[str]) -> list[Relation]:
    """`relates_to` in its three forms: one path, a list of paths, a list of {path, relation}."""
    if value is None:
        return []
    items = [value] if isinstance(value, (str, dict)) else value
    if not isinstance(items, list):
        problems.append("`relates_to` should be a path, a list of paths, or a list of {path, relation}")
        return []
    relations: list[Relation] = []
    for item in items:
        if isinstance(item, str) and item.strip():
            relation = Relation(path=item.strip(), relation=DEFAULT_RELATION)
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and item["path"].strip():
            kind = str(item.get("relation") or item.get("type") or DEFAULT_RELATION).strip().lower()
            if not RELATION_RE.match(kind):
                problems.append(f"relation {kind[:40]!r} should be a word like feeds_into or part_of")
                kind = DEFAULT_RELATION
            relation = Relation(path=item["path"].strip(), relation=kind)
        else:
            problems.append("`relates_to` has an entry without a path")
            continue
        if relation not in relations:
            relations.append(relation)
    return relations


def _title_from_name(name: str) -> str:
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem.replace("-", " ").replace("_", " ").strip() or name


# --- blocks and chunks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Block:
    text: str
    level: int = 0  # 1-6 for a heading line, else 0
    heading: str = ""
    atomic: bool = False  # a fenced code block or a table: never cut


def _blocks(body: str) -> list[_Block]:
    """The body as headings, paragraphs, fenced code blocks and tables, in order."""
    blocks: list[_Block] = []
    lines = body.split("\n")
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph and any(line.strip() for line in paragraph):
            blocks.append(_Block("\n".join(paragraph).strip("\n")))
        paragraph.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            end = index + 1
            while end < len(lines) and not lines[end].strip().startswith(marker):
                end += 1
            blocks.append(_Block("\n".join(lines[index : end + 1]), atomic=True))
            index = end + 1
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            blocks.append(_Block(line.strip(), level=len(heading.group(1)), heading=heading.group(2).strip()))
        elif _TABLE_ROW.match(line):
            flush()
            end = index
            while end < len(lines) and _TABLE_ROW.match(lines[end]):
                end += 1
            blocks.append(_Block("\n".join(lines[index:end]), atomic=True))
            index = end
            continue
        elif not line.strip():
            flush()
        else:
            paragraph.append(line)
        index += 1
    flush()
    return blocks


def _size(blocks: list[_Block]) -> int:
    return sum(len(block.text) + 2 for block in blocks)


def _own_chars(blocks: list[_Block]) -> int:
    return sum(len(block.text) for block in blocks if not block.level)


def _chunk(blocks: list[_Block]) -> tuple[list[Chunk], list[Section], bool]:
    # The page's H1 is its title (sent as `title`), not a section of its own.
    blocks = [block for block in blocks if block.level != 1]
    first_h2 = next((i for i, block in enumerate(blocks) if block.level == 2), len(blocks))
    preamble, rest = blocks[:first_h2], blocks[first_h2:]
    groups: list[tuple[tuple[str, ...], list[_Block]]] = []
    has_preamble = _own_chars(preamble) >= MIN_PREAMBLE_CHARS
    if preamble and (has_preamble or not rest):
        groups.append(((), preamble))
        preamble = []
    for heading, section in _split_at(rest, 2):
        groups.append(((heading,), preamble + section))
        preamble = []
    sections = [Section(path, _own_chars(group)) for path, group in groups]
    pieces: list[tuple[tuple[str, ...], list[_Block]]] = []
    for path, group in groups:
        pieces.extend(_fit(path, group, 3))
    return _merge_small(pieces), sections, has_preamble


def _split_at(blocks: list[_Block], level: int) -> list[tuple[str, list[_Block]]]:
    """`blocks` cut before each heading of `level`; the text before the first one has heading ""."""
    out: list[tuple[str, list[_Block]]] = []
    for block in blocks:
        if block.level == level or not out:
            out.append((block.heading if block.level == level else "", [block]))
        else:
            out[-1][1].append(block)
    return out


def _fit(
    path: tuple[str, ...], blocks: list[_Block], level: int
) -> list[tuple[tuple[str, ...], list[_Block]]]:
    """One piece if it fits CHUNK_CHARS; else split at headings of `level`, deeper, then paragraphs."""
    if _size(blocks) <= CHUNK_CHARS:
        return [(path, blocks)]
    if level <= MAX_HEADING_LEVEL and any(block.level == level for block in blocks[1:]):
        pieces = []
        for heading, part in _split_at(blocks, level):
            pieces.extend(_fit((*path, heading) if heading else path, part, level + 1))
        return pieces
    if level <= MAX_HEADING_LEVEL:
        return _fit(path, blocks, level + 1)
    return [(path, part) for part in _pack(blocks)]


def _pack(blocks: list[_Block]) -> list[list[_Block]]:
    """Consecutive blocks in pieces of at most CHUNK_CHARS; a longer block is a piece of its own."""
    pieces: list[list[_Block]] = []
    for block in blocks:
        for part in _cut_long(block):
            # A heading stays with the text under it, whatever the size.
            headings_only = bool(pieces) and all(b.level for b in pieces[-1])
            if pieces and (headings_only or _size(pieces[-1]) + len(part.text) + 2 <= CHUNK_CHARS):
                pieces[-1].append(part)
            else:
                pieces.append([part])
    return pieces


def _cut_long(block: _Block) -> list[_Block]:
    """A block longer than one memory may hold, cut between lines (only then is a code block cut)."""
    # Room is left for the heading lines that may precede it in its chunk.
    if len(block.text) <= MAX_CHUNK_CHARS - 300:
        return [block]
    parts, current = [], ""
    for line in block.text.split("\n"):
        if current and len(current) + len(line) + 1 > MAX_CHUNK_CHARS - 300:
            parts.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line[:MAX_CHUNK_CHARS]
    return [_Block(part, atomic=block.atomic) for part in [*parts, current]]


def _merge_small(pieces: list[tuple[tuple[str, ...], list[_Block]]]) -> list[Chunk]:
    """Chunks from pieces; a piece with little text of its own joins the one before it, or the first
    one after it (under the headings they share; a preamble takes the section's)."""
    chunks: list[Chunk] = []
    carry: tuple[tuple[str, ...], list[_Block]] | None = None
    for path, blocks in pieces:
        if carry is not None:
            carried_path, carried = carry
            blocks = carried + blocks
            if carried_path:
                path = _common_prefix(carried_path, path)
            carry = None
        minimum = MIN_SECTION_CHARS if path else MIN_PREAMBLE_CHARS
        small = _own_chars(blocks) < minimum
        if small and chunks and len(chunks[-1].content) + _size(blocks) <= MAX_CHUNK_CHARS:
            last = chunks[-1]
            chunks[-1] = Chunk(last.heading_path, last.content + "\n\n" + _join(blocks))
        elif small and not chunks:
            carry = (path, blocks)
        else:
            chunks.append(Chunk(path, _join(blocks)))
    if carry is not None and (_own_chars(carry[1]) or any(block.level for block in carry[1])):
        chunks.append(Chunk(carry[0], _join(carry[1])))
    return [chunk for chunk in chunks if chunk.content.strip()]


def _common_prefix(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    shared = []
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        shared.append(a)
    return tuple(shared)


def _join(blocks: list[_Block]) -> str:
    return "\n\n".join(block.text for block in blocks).strip()
