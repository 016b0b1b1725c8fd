"""Scripted models for the real agent CLIs: small real HTTP servers on 127.0.0.1 that speak the streaming
APIs the agents call (the Anthropic Messages API for Claude Code, the OpenAI Responses API for Codex, the
OpenAI Chat Completions API for OpenCode) and answer with a fixed sequence of turns.

Which turn a request gets is read from the conversation it carries (how many times the model already spoke),
not from a counter: an agent that retries a request, or sends side requests of its own (a title, a quota
check: those carry no tools), still gets the answer its conversation is at. Every request is recorded
(``tests.provider_servers``), so a test asserts what the model saw: the hook context, the tool results.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.provider_servers import ProviderServer, Received, Reply, provider_server


@dataclass(frozen=True)
class Call:
    """The model calls one tool with these arguments."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    namespace: str | None = None  # Codex lists each MCP server's tools as one namespace tool


@dataclass(frozen=True)
class Say:
    """The model answers with text and ends its turn."""

    text: str


Turn = Call | Say


def _sse(events: list[tuple[str | None, dict[str, Any]]], *, done: bool = False) -> Reply:
    lines = []
    for name, data in events:
        if name is not None:
            lines.append(f"event: {name}")
        lines.append(f"data: {json.dumps(data)}\n")
    if done:
        lines.append("data: [DONE]\n")
    body = ("\n".join(lines) + "\n").encode()
    return Reply(raw=body, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})


def _next_turn(script: list[Turn], spoken: int) -> Turn:
    # Past the end of the script the model has nothing more to do: it stops with a short text.
    return script[spoken] if spoken < len(script) else Say("Done.")


# --- Anthropic Messages API (Claude Code) -------------------------------------------------------------


def _turn_for_messages(body: dict[str, Any], script: list[Turn]) -> Turn:
    """The turn of a Messages or Chat Completions request: a request without tools is the client's own side
    request (a session title), answered apart; otherwise the script's turn after the assistant's turns so far."""
    if not body.get("tools"):
        return Say("Kenfold test session")
    return _next_turn(script, sum(1 for message in body["messages"] if message["role"] == "assistant"))


def anthropic_turn(received: Received, script: list[Turn]) -> Reply:
    body = received.json
    turn = _turn_for_messages(body, script)
    message = {
        "id": f"msg_{len(body['messages'])}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    if isinstance(turn, Call):
        block = {"type": "tool_use", "id": f"toolu_{len(body['messages'])}", "name": turn.tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn.text}
        stop = "end_turn"
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


# --- OpenAI Responses API (Codex) ----------------------------------------------------------------------


def responses_turn(received: Received, script: list[Turn]) -> Reply:
    items = received.json.get("input") or []
    spoken = sum(
        1
        for item in items
        if item.get("type") == "function_call"
        or (item.get("type") == "message" and item.get("role") == "assistant")
    )
    turn = _next_turn(script, spoken)
    number = len(items)
    if isinstance(turn, Call):
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{number}",
            "call_id": f"call_{number}",
            "name": turn.tool,
            "arguments": json.dumps(turn.arguments),
            "status": "completed",
        }
        if turn.namespace is not None:
            item["namespace"] = turn.namespace
    else:
        item = {
            "type": "message",
            "id": f"msg_{number}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
        }
    response = {"id": f"resp_{number}", "object": "response", "status": "in_progress", "output": []}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    return _sse(
        [
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": response | {"status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
    )


# --- OpenAI Chat Completions API (OpenCode) ------------------------------------------------------------


def chat_turn(received: Received, script: list[Turn]) -> Reply:
    body = received.json
    turn = _turn_for_messages(body, script)
    number = len(body["messages"])
    base = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "created": 0, "model": "scripted"}
    if isinstance(turn, Call):
        call = {
            "index": 0,
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": turn.tool, "arguments": json.dumps(turn.arguments)},
        }
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": turn.text}, "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return _sse(
        [
            (None, base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            (None, base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}),
        ],
        done=True,
    )


@dataclass
class ScriptedModel:
    """A running scripted model: ``url`` its base, ``script`` the turns it plays (a test may replace it
    between sessions), ``received`` every request."""

    server: ProviderServer
    script: list[Turn]

    @property
    def url(self) -> str:
        return self.server.url

    def requests(self, path: str) -> list[dict[str, Any]]:
        """The JSON bodies of the POSTs to ``path`` (query string ignored), in order."""
        return [
            request.json
            for request in self.server.received
            if request.method == "POST" and request.path.split("?")[0] == path
        ]


_ROUTES = {"/v1/messages": anthropic_turn, "/v1/responses": responses_turn, "/v1/chat/completions": chat_turn}


@contextmanager
def scripted_model(script: list[Turn]) -> Iterator[ScriptedModel]:
    """One server answers all three APIs by path; anything else gets a 404 naming the path."""
    model: ScriptedModel

    def handle(received: Received) -> Reply:
        route = _ROUTES.get(received.path.split("?")[0])
        if received.method != "POST" or route is None:
            return Reply(status=404, json={"error": {"message": f"no such endpoint: {received.path}"}})
        return route(received, model.script)

    with provider_server(handle) as server:
        model = ScriptedModel(server=server, script=script)
        yield model
