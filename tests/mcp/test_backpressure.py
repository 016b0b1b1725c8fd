"""Load and broken requests at the HTTP edge (issue 14): a bounded queue answered 503 + Retry-After beyond
its bound, and bodies that end early answered 408 without an ERROR traceback. Raw sockets, because an
HTTP client always sends the whole body it announces."""

import json
import socket
import time
from contextlib import ExitStack

import httpx

from edge.backpressure import ACTIVE_PER_PROCESS, INCOMPLETE_BODY, OVERLOADED, QUEUE_PER_PROCESS

from .support import AGENT_A, INITIALIZE, KenfoldServer, serve

BODY = json.dumps(INITIALIZE).encode()


def _start_request(server: KenfoldServer, body: bytes) -> socket.socket:
    """A POST /mcp that announces BODY's length but sends only `body`."""
    port = int(server.base.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.keys[AGENT_A]}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def _response(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
        if b"\r\n\r\n" in b"".join(chunks) and b'"}' in chunks[-1]:
            break
    return b"".join(chunks)


def _post(server: KenfoldServer) -> httpx.Response:
    return httpx.post(
        server.url,
        content=BODY,
        headers={
            "Authorization": f"Bearer {server.keys[AGENT_A]}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )


def test_beyond_the_queue_a_request_gets_503_with_retry_after_at_once(server: KenfoldServer) -> None:
    with ExitStack() as stack:
        # Requests whose bodies never finish fill the gate (reading a body counts like waiting for a slot).
        for _ in range(ACTIVE_PER_PROCESS + QUEUE_PER_PROCESS):
            stack.callback(_start_request(server, BODY[:10]).close)
        time.sleep(1.5)  # let the server accept them all (one accept loop for the process)
        started = time.monotonic()
        response = _post(server)
        assert time.monotonic() - started < 2, "refused before any work, not after a wait"
        assert (response.status_code, response.json()) == (503, {"error": OVERLOADED})
        assert response.headers["Retry-After"] == "2"
    # The stalled clients went away: their slots are free again and the server is whole.
    deadline = time.monotonic() + 10
    while (response := _post(server)).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert response.status_code == 200, response.text
    log = server.log()
    assert "request body incomplete or client disconnected" in log
    assert "Traceback" not in log and '"level": "error"' not in log


def test_a_body_shorter_than_its_content_length_gets_408_without_a_traceback(server: KenfoldServer) -> None:
    # A server that waits 2 s for a body (gunicorn's --timeout, 30 s by default), so the test is quick.
    with serve(server.home, server.keys, GUNICORN_CMD_ARGS="--timeout 2") as impatient:
        sock = _start_request(impatient, BODY[:20])  # and then nothing more, the connection left open
        try:
            answer = _response(sock)
        finally:
            sock.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), answer
        assert json.loads(body) == {"error": INCOMPLETE_BODY}

        # A client that gives up half-way through its body: nothing to answer, an info line in the log.
        sock = _start_request(impatient, BODY[:20])
        sock.close()
        assert _post(impatient).status_code == 200
        time.sleep(0.5)
        log = impatient.log()
    assert log.count("request body incomplete or client disconnected") == 2
    assert "Traceback" not in log and '"level": "error"' not in log
