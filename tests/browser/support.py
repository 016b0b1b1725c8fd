"""What the browser tests share: Debian's chromium, and a watch on what the pages load and say."""

import shutil
from urllib.parse import urlsplit

import pytest

# A busy machine (two cores shared by the whole team) makes pages slow; never a wall-clock assertion.
TIMEOUT_MS = 60_000


def chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("the browser test needs Debian's chromium: sudo apt-get install -y chromium")
    return path


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Watch:
    """Everything the pages asked for or complained about: a script, a request to an origin the test did
    not name, or a console error (a content security policy report among them) is a problem."""

    def __init__(self, *origins: str) -> None:
        self.origins = set(origins)
        self.problems: list[str] = []
        # Console texts a test provokes on purpose (chromium logs a page answered 4xx as an error).
        self.expected: list[str] = []

    def request(self, request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme == "data":
            return
        if origin_of(request.url) not in self.origins:
            self.problems.append(f"request to another origin: {request.url}")
        if request.resource_type == "script":
            self.problems.append(f"script loaded: {request.url}")

    def console(self, message) -> None:
        text = message.text
        if any(expected in text for expected in self.expected):
            return
        if message.type in ("error", "warning") or "Content Security Policy" in text:
            self.problems.append(f"console {message.type}: {text} ({message.location.get('url')})")

    def page_error(self, error) -> None:
        self.problems.append(f"page error: {error}")

    def attach(self, page) -> None:
        page.on("request", self.request)
        page.on("console", self.console)
        page.on("pageerror", self.page_error)
