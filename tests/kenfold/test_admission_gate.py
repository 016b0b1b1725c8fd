"""The admission gate's order (edge.backpressure): reads before writes, a write passed over no longer than
READ_PRIORITY_S, writes' share of the running slots, and the bound on requests inside. Driven as ASGI, with
requests that hold their slot until the test lets them finish."""

import asyncio
import json

import pytest

from edge import backpressure
from edge.backpressure import ACTIVE_PER_PROCESS, QUEUE_PER_PROCESS, WRITES_PER_PROCESS, AdmissionGate
from edge.mcp.transports import mcp_writes


def _call(tool: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}}).encode()


class Harness:
    """An app behind the gate that records the order requests start in and holds each until released."""

    def __init__(self) -> None:
        self.gate = AdmissionGate()
        self.started: list[str] = []
        self.release: dict[str, asyncio.Event] = {}
        self.statuses: dict[str, int] = {}
        self.endpoint = self.gate.wrap(self._app, writes=mcp_writes)

    async def _app(self, scope, receive, send) -> None:
        body = (await receive())["body"]
        name = json.loads(body)["label"]
        self.started.append(name)
        await self.release.setdefault(name, asyncio.Event()).wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    def fill(self, prefix: str) -> tuple[list[str], list[asyncio.Task]]:
        """Requests for every running slot, writes up to their share and reads after them: their labels
        and tasks."""
        labels = [f"{prefix}{n}" for n in range(ACTIVE_PER_PROCESS)]
        tasks = [
            asyncio.create_task(self.request(label, "remember" if n < WRITES_PER_PROCESS else "recall"))
            for n, label in enumerate(labels)
        ]
        return labels, tasks

    async def request(self, label: str, tool: str) -> None:
        body = json.loads(_call(tool)) | {"label": label}
        sent = False

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
            await asyncio.Event().wait()

        async def send(message):
            if message["type"] == "http.response.start":
                self.statuses[label] = message["status"]

        self.release.setdefault(label, asyncio.Event())
        await self.endpoint({"type": "http", "path": "/mcp", "method": "POST"}, receive, send)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_free_slot_goes_to_a_waiting_read_before_an_earlier_write() -> None:
    async def scenario() -> list[str]:
        h = Harness()
        busy, tasks = h.fill("busy")
        await _settle()
        tasks.append(asyncio.create_task(h.request("write", "remember")))
        await _settle()
        tasks.append(asyncio.create_task(h.request("read", "recall")))
        tasks.append(asyncio.create_task(h.request("context", "get_context")))
        await _settle()
        assert h.started == busy, "the others wait"
        # Three slots free one after another, each time with the write allowed to run: the reads take the
        # first two although the write came first.
        for label in busy[:3]:
            h.release[label].set()
            await _settle()
        for event in h.release.values():
            event.set()
        await asyncio.gather(*tasks)
        return h.started[ACTIVE_PER_PROCESS:]

    assert asyncio.run(scenario()) == ["read", "context", "write"]


def test_writes_hold_at_most_their_share_of_the_running_slots() -> None:
    async def scenario() -> None:
        h = Harness()
        writes = [f"write{n}" for n in range(WRITES_PER_PROCESS + 1)]
        tasks = [asyncio.create_task(h.request(label, "remember")) for label in writes]
        await _settle()
        tasks.append(asyncio.create_task(h.request("read", "recall")))
        await _settle()
        assert h.started == [*writes[:-1], "read"], "the last write waits though slots are free"
        h.release["read"].set()
        await _settle()
        assert h.started[-1] == "read", "a read's slot does not lift the writes' bound"
        h.release["write0"].set()
        await _settle()
        assert h.started[-1] == writes[-1], "a write that ends lets the next one in"
        for event in h.release.values():
            event.set()
        await asyncio.gather(*tasks)
        assert set(h.statuses.values()) == {200}

    assert WRITES_PER_PROCESS + 2 <= ACTIVE_PER_PROCESS, "the scenario needs slots left for the read"
    asyncio.run(scenario())


def test_a_write_passed_over_long_enough_goes_before_later_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backpressure, "READ_PRIORITY_S", 0.05)

    async def scenario() -> list[str]:
        h = Harness()
        tasks = [asyncio.create_task(h.request(f"busy{n}", "recall")) for n in range(ACTIVE_PER_PROCESS)]
        await _settle()
        tasks.append(asyncio.create_task(h.request("write", "forget")))
        await asyncio.sleep(0.1)
        tasks.append(asyncio.create_task(h.request("read", "recall")))
        await _settle()
        h.release["busy0"].set()
        await _settle()
        for event in h.release.values():
            event.set()
        await asyncio.gather(*tasks)
        return h.started[ACTIVE_PER_PROCESS:]

    assert asyncio.run(scenario()) == ["write", "read"]


def test_beyond_the_running_and_queued_bound_a_request_is_refused_and_the_rest_still_run() -> None:
    async def scenario() -> tuple[dict[str, int], int]:
        h = Harness()
        total = ACTIVE_PER_PROCESS + QUEUE_PER_PROCESS
        tasks = [asyncio.create_task(h.request(f"r{n}", "recall")) for n in range(total)]
        await _settle()
        await h.request("one too many", "recall")
        refused = dict(h.statuses)
        for event in h.release.values():
            event.set()
        await asyncio.gather(*tasks)
        return refused, sum(status == 200 for status in h.statuses.values())

    refused, served = asyncio.run(scenario())
    assert refused == {"one too many": 503}
    assert served == ACTIVE_PER_PROCESS + QUEUE_PER_PROCESS


def test_a_request_that_waits_too_long_gets_503_and_gives_back_nothing_it_did_not_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backpressure, "QUEUE_WAIT_S", 0.05)

    async def scenario() -> None:
        h = Harness()
        busy, tasks = h.fill("busy")
        await _settle()
        await asyncio.gather(h.request("late read", "recall"), h.request("late write", "remember"))
        assert h.statuses == {"late read": 503, "late write": 503}
        for label in busy:
            h.release[label].set()
        await asyncio.gather(*tasks)
        # Every slot is free again, and the writes' share too: as many requests start at once as at first.
        again, tasks = h.fill("again")
        await _settle()
        assert h.started[-ACTIVE_PER_PROCESS:] == again
        for label in again:
            h.release[label].set()
        await asyncio.gather(*tasks)

    asyncio.run(scenario())


def _send_body(gate_app, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes, int]:
    """Status, body of the answer, and how many chunks the gate read."""
    read = 0
    answer: dict = {"status": None, "body": b""}

    async def receive():
        nonlocal read
        if read < len(chunks):
            read += 1
            return {"type": "http.request", "body": chunks[read - 1], "more_body": read < len(chunks)}
        await asyncio.Event().wait()

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] += message.get("body", b"")

    scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": headers}
    asyncio.run(gate_app(scope, receive, send))
    return answer["status"], answer["body"], read


def test_a_body_larger_than_any_endpoint_takes_is_refused_before_it_is_held() -> None:
    called = []

    async def app(scope, receive, send) -> None:
        called.append(True)

    endpoint = AdmissionGate().wrap(app, writes=mcp_writes)
    # Announced too large: refused before a byte is read.
    status, body, read = _send_body(
        endpoint, [b"x"], [(b"content-length", str(backpressure.MAX_BODY_BYTES + 1).encode())]
    )
    assert (status, read) == (413, 0)
    assert json.loads(body) == {"error": backpressure.TOO_LARGE}
    # Announced nothing, sent too much: refused as soon as it passes the bound, the rest never read.
    megabyte = b"x" * (1024 * 1024)
    status, body, read = _send_body(endpoint, [megabyte] * 8, [])
    assert (status, read) == (413, 5)
    assert called == [], "nothing behind the gate ran"
