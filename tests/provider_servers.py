"""Fake model providers for tests: small real HTTP servers on 127.0.0.1 with deterministic answers.

A ``ProviderServer`` runs a ``ThreadingHTTPServer`` in a thread, records every request it receives and
answers through a handler the test supplies, so each test scripts exactly the provider behaviour it
needs (a good answer, a broken one, a slow one, a redirect). ``openai_embeddings`` answers like an
OpenAI-compatible /embeddings API with ``fake_embedding``: a bag of words hashed into a vector, with a
small synonym map so that a query can match a memory by vector alone, sharing no word with it.
"""

import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAKE_DIMENSIONS = 1024

# Words with the same meaning hash to the same slot. "how do we avoid charging twice" shares no word
# with "payments are idempotent on the event id", yet both contain payment + duplicate.
SYNONYMS = {
    "charge": "payment",
    "charged": "payment",
    "charging": "payment",
    "billing": "payment",
    "payments": "payment",
    "결제": "payment",
    "twice": "duplicate",
    "double": "duplicate",
    "duplicates": "duplicate",
    "idempotent": "duplicate",
    "중복": "duplicate",
    "deploy": "release",
    "deploys": "release",
    "deployment": "release",
    "ship": "release",
    "releases": "release",
    "배포": "release",
    "db": "database",
    "postgres": "database",
    "postgresql": "database",
}
STOP_WORDS = {
    "a",
    "an",
    "and",
    "are",
    "do",
    "does",
    "how",
    "in",
    "is",
    "it",
    "of",
    "on",
    "or",
    "the",
    "to",
    "we",
}


def fake_embedding(text: str, dimensions: int = FAKE_DIMENSIONS) -> list[float]:
    """Unit vector of the text's words (lowercased, synonyms merged, stop words dropped), FNV-1a hashed."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        if word in STOP_WORDS:
            continue
        vector[_fnv1a(SYNONYMS.get(word, word)) % dimensions] += 1.0
    norm = sum(value * value for value in vector) ** 0.5
    if not norm:  # no words at all: a fixed direction, still a valid unit vector
        vector[0], norm = 1.0, 1.0
    return [value / norm for value in vector]


def _fnv1a(word: str) -> int:
    hashed = 0x811C9DC5
    for byte in word.encode():
        hashed = ((hashed ^ byte) * 0x01000193) & 0xFFFFFFFF
    return hashed


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any


@dataclass
class Reply:
    """What the server answers: ``json`` encoded, or ``raw`` bytes as they are, after ``delay`` seconds."""

    status: int = 200
    json: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Handler = Callable[[Received], Reply]


@dataclass
class ProviderServer:
    """A running fake provider: ``url`` is its base, ``received`` what it was sent, in order."""

    url: str
    received: list[Received] = field(default_factory=list)


@contextmanager
def provider_server(handler: Handler) -> Iterator[ProviderServer]:
    """Serve ``handler`` on a free port of 127.0.0.1 for the duration of the ``with`` block."""
    stopping = threading.Event()

    class RequestHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            received = Received(
                self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
            provider.received.append(received)
            reply = handler(received)
            # Wait on the stop event, so that a test ending mid-delay does not wait for the delay.
            if reply.delay and stopping.wait(reply.delay):
                return
            content = reply.raw if reply.raw is not None else json.dumps(reply.json).encode()
            self.send_response(reply.status)
            headers = {"Content-Type": "application/json", **reply.headers}
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: object, client_address: object) -> None:
            # A client that timed out and hung up on a slow answer is what the slow tests want.
            pass

    server = Server(("127.0.0.1", 0), RequestHandler)
    provider = ProviderServer(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()


def openai_embeddings(received: Received, *, dimensions: int = FAKE_DIMENSIONS) -> Reply:
    """An OpenAI-compatible /embeddings answer of ``fake_embedding`` vectors (honours ``dimensions``)."""
    size = received.json.get("dimensions", dimensions)
    data = [
        {"object": "embedding", "index": index, "embedding": fake_embedding(text, size)}
        for index, text in enumerate(received.json["input"])
    ]
    return Reply(json={"object": "list", "data": data, "model": received.json["model"]})


def chat_reply(content: object, *, finish_reason: str = "stop") -> Reply:
    """An OpenAI-compatible /chat/completions answer whose message is ``content`` (JSON-encoded unless a
    string, so a test can also script prose, fences or broken JSON)."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return Reply(
        json={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "fake-chat",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
        }
    )
