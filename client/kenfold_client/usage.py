"""Which served memories a session reused, found by the session hook at SessionEnd (issue 39).

Served: what SessionStart's get_context returned (kept in the session log as fingerprints: id, words,
paths; never the text) and what the agent's own recall and get_context calls returned (in the agent's
transcript, Claude Code's JSONL at the hook input's `transcript_path`). A served memory counts as reused
when the session's final response, or a tool call made after the memory was served:

- cites its id;
- names a file it refers to (a code reference or its doc page); or
- repeats most of its words: at least 60% of its distinct words of three or more letters, and at least
  four of them (a short memory's few common words prove nothing).

Without a transcript (Codex, OpenCode), only the final response the Stop hook logged is compared.
"""

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OVERLAP = 0.6
MIN_WORDS = 4
# The tail of a long transcript is enough: the final response and the latest tool calls are at its end.
MAX_TRANSCRIPT_BYTES = 8 * 1024 * 1024
_WORD = re.compile(r"\w{3,}")
# Words that any English text repeats; without them, overlap means shared content.
_COMMON = frozenset(
    "the and for with that this are was were not but you your our from have has had all any can will "
    "when what which who how use used uses into than then them they their there its also only each".split()
)
# Kenfold's own tools: loading or storing a memory is not reusing it.
_KENFOLD_TOOL = re.compile(r"^mcp__(?:plugin_kenfold_)?kenfold__(\w+)$")
_SERVING_TOOLS = frozenset({"recall", "get_context"})
_SECTIONS = ("preferences", "recent", "project", "relevant", "memories")


def words(text: str) -> frozenset[str]:
    return frozenset(word for word in _WORD.findall(text.lower()) if word not in _COMMON)


@dataclass(frozen=True)
class Served:
    """A served memory's fingerprint: what reuse is recognised by."""

    id: str
    words: frozenset[str]
    paths: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "words": sorted(self.words), "paths": list(self.paths)}

    @classmethod
    def from_json(cls, value: Any) -> "Served | None":
        if not isinstance(value, dict) or not isinstance(value.get("id"), str):
            return None
        listed = [value.get("words") or [], value.get("paths") or []]
        if not all(
            isinstance(items, list) and all(isinstance(item, str) for item in items) for items in listed
        ):
            return None
        return cls(id=value["id"], words=frozenset(listed[0]), paths=tuple(listed[1]))

    def reused_in(self, text: str, text_words: frozenset[str]) -> bool:
        if self.id in text or any(path in text for path in self.paths):
            return True
        shared = len(self.words & text_words)
        return len(self.words) >= MIN_WORDS and shared >= OVERLAP * len(self.words)


def served_in_answer(answer: Any) -> list[Served]:
    """The memories a get_context or recall answer served, with their content (references to memories
    the caller already held carry no content and are left out)."""
    if not isinstance(answer, dict):
        return []
    items = [item for key in _SECTIONS for item in answer.get(key) or []]
    if isinstance(answer.get("handoff"), dict):
        items.append(answer["handoff"])
    served = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        if not isinstance(item.get("content"), str):
            continue
        paths = [ref.get("path") for ref in item.get("code_refs") or [] if isinstance(ref, dict)]
        paths.append(item.get("path"))
        served.append(
            Served(
                id=item["id"],
                words=words(item["content"]),
                paths=tuple(dict.fromkeys(path for path in paths if isinstance(path, str) and path)),
            )
        )
    return served


@dataclass
class Reuse:
    """What a session was served, and which of it was reused."""

    served: dict[str, Served]
    reused: set[str]

    def serve(self, memories: Iterable[Served]) -> None:
        for memory in memories:
            self.served.setdefault(memory.id, memory)

    def check(self, text: str) -> None:
        """Mark what `text` (a tool call's input, or the final response) reuses of what was served so far."""
        if not text.strip():
            return
        text_words = words(text)
        for memory in self.served.values():
            if memory.id not in self.reused and memory.reused_in(text, text_words):
                self.reused.add(memory.id)


def session_reuse(*, served: Iterable[Served], transcript: Path | None, final_response: str) -> list[str]:
    """The ids of served memories the session reused, in the order they were served."""
    reuse = Reuse(served={}, reused=set())
    reuse.serve(served)
    last_text = ""
    for kind, value in _transcript_events(transcript):
        if kind == "served":
            reuse.serve(value)
        elif kind == "tool_call":
            reuse.check(value)
        else:
            last_text = value
    reuse.check(final_response or last_text)
    return [memory_id for memory_id in reuse.served if memory_id in reuse.reused]


def _transcript_events(path: Path | None) -> Iterator[tuple[str, Any]]:
    """("tool_call", its input as text), ("served", [Served]) and ("text", an assistant text), in order.

    Claude Code writes one JSON object per line: assistant messages with `text` and `tool_use` blocks,
    user messages with the `tool_result` of each call. A line that does not parse is skipped."""
    if path is None:
        return
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - MAX_TRANSCRIPT_BYTES))
            raw = handle.read()
    except OSError:
        return
    serving_calls: set[str] = set()
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and message.get("role") == "assistant":
                yield "text", str(block.get("text") or "")
            elif block.get("type") == "tool_use":
                kenfold = _KENFOLD_TOOL.match(str(block.get("name") or ""))
                if kenfold is None:
                    yield "tool_call", json.dumps(block.get("input"), ensure_ascii=False)
                elif kenfold.group(1) in _SERVING_TOOLS:
                    serving_calls.add(str(block.get("id")))
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in serving_calls:
                yield "served", served_in_answer(_result_json(block.get("content")))


def _result_json(content: Any) -> Any:
    texts = (
        [content]
        if isinstance(content, str)
        else [
            block.get("text")
            for block in content or []
            if isinstance(block, dict) and block.get("type") == "text"
        ]
    )
    for text in texts:
        try:
            return json.loads(text)
        except (TypeError, ValueError):
            continue
    return None
