"""The OAuth consent page in a real browser (issue 35): the MCP SDK's own OAuth client registers with a
real Kenfold and hands over its authorization URL; Debian's chromium, driven by Playwright, follows it from
a page of another site (as claude.ai or ChatGPT send the owner), the owner types the password and chooses
the access and the agent, and the code reaches the client's redirect URI, a small listener on 127.0.0.1.
The owner limits the client to one project on the page: the SDK client then writes and reads there with
the agent chosen on the page, another project is refused, and the dashboard shows the limit; its Disconnect
ends its tokens. After a wrong password the owner can still deny, and the client is told (access_denied).
The same form posted from another site is refused. A screenshot of the consent page at 1280 and 400 px
wide goes to artifacts/consent/.

Not part of `make test` (marked `browser`, deselected there): `make test-browser` runs it.
"""

import asyncio
import html
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from bench.support.processes import REPO, stop_cluster
from tests.browser.support import TIMEOUT_MS, Watch, chromium
from tests.mcp.support import call, call_error
from tests.oauth.support import (
    PASSWORD,
    MemoryStorage,
    OAuthServer,
    authorize_url,
    oauth_server,
    pkce,
    prepare_home,
)

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "artifacts" / "consent"
CLIENT_NAME = "Chromium-approved client"
AGENT = "browser-agent"
PROJECT = "github.com/kenfold/consent-browser"
OTHER_PROJECT = "github.com/kenfold/consent-elsewhere"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthServer]:
    home = tmp_path_factory.mktemp("kenfold-consent") / "home"
    prepare_home(home)
    try:
        # Full-text recall is enough here; loading the embedding models would only slow the test down.
        with oauth_server(home, KENFOLD_EMBED="off") as started:
            yield started
    finally:
        stop_cluster(home)


class Listener:
    """The client's side of the flow: its redirect URI (`/callback`, where the code arrives) and pages of
    its own site. It listens on 127.0.0.1, and its pages are opened as http://localhost:<port>: another
    site than the server's 127.0.0.1, so chromium treats the consent page as reached from elsewhere."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        self.callbacks: list[dict[str, list[str]]] = []
        self.callback_referers: list[str | None] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/callback":
                    listener.callbacks.append(parse_qs(parts.query))
                    listener.callback_referers.append(self.headers.get("Referer"))
                    body = (
                        "<!doctype html><title>Connected</title><p>Connected. You can close this window.</p>"
                    )
                elif parts.path in listener.pages:
                    body = listener.pages[parts.path]
                elif parts.path == "/favicon.ico":  # chromium asks each origin; a 404 would be logged
                    self.send_response(204)
                    self.end_headers()
                    return
                else:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.redirect_uri = self.origin + "/callback"
        self.site = f"http://localhost:{self.port}"

    def link_page(self, url: str) -> str:
        """A page of the client's site with a link to `url`; its address."""
        self.pages["/start"] = (
            f'<!doctype html><title>Client</title><a href="{html.escape(url)}">Connect Kenfold</a>'
        )
        return self.site + "/start"


@pytest.fixture
def listener() -> Iterator[Listener]:
    started = Listener()
    thread = threading.Thread(target=started.http.serve_forever, daemon=True)
    thread.start()
    try:
        yield started
    finally:
        started.http.shutdown()
        started.http.server_close()


async def _browser(playwright):
    browser = await playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
    page = await browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    return browser, page


class BrowserOwner:
    """The SDK's redirect and callback handlers, answered by the owner in chromium."""

    def __init__(self, page, listener: Listener) -> None:
        self.page = page
        self.listener = listener
        self.urls: list[str] = []

    async def redirect_handler(self, url: str) -> None:
        from playwright.async_api import expect

        self.urls.append(url)
        page = self.page
        await page.goto(self.listener.link_page(url))
        async with page.expect_navigation():
            await page.click("text=Connect Kenfold")
        await expect(page.locator("h1")).to_contain_text(CLIENT_NAME)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for width in (1280, 400):
            await page.set_viewport_size({"width": width, "height": 900})
            await page.screenshot(path=str(ARTIFACTS / f"consent-{width}.png"), full_page=True)
        await page.set_viewport_size({"width": 1280, "height": 900})
        await page.check("input[name=access][value=write]")
        # The owner limits the client to one project: every project is the default.
        await expect(page.locator("input[name=projects_choice][value=all]")).to_be_checked()
        await page.check("input[name=projects_choice][value=some]")
        await page.fill("textarea[name=projects]", f"https://{PROJECT}.git")
        await page.fill("input[name=agent]", AGENT)
        await page.fill("input[name=password]", PASSWORD)
        await page.screenshot(path=str(ARTIFACTS / "consent-limited-1280.png"), full_page=True)
        async with page.expect_navigation():
            await page.click("button[value=approve]")
        assert page.url.startswith(self.listener.redirect_uri + "?"), (
            f"the consent form was not accepted: {page.url}\n{await page.inner_text('body')}"
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = self.listener.callbacks[-1]
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )


def test_the_owner_approves_a_client_in_chromium_and_the_sdk_client_writes_and_reads(
    server: OAuthServer, listener: Listener
) -> None:
    storage = MemoryStorage()
    watch = Watch(server.base, listener.site, listener.origin)

    async def scenario() -> str:
        from playwright.async_api import async_playwright, expect

        expect.set_options(timeout=TIMEOUT_MS)
        async with async_playwright() as playwright:
            browser, page = await _browser(playwright)
            watch.attach(page)
            owner = BrowserOwner(page, listener)
            provider = OAuthClientProvider(
                server_url=server.mcp,
                client_metadata=OAuthClientMetadata(
                    client_name=CLIENT_NAME,
                    redirect_uris=[listener.redirect_uri],
                    grant_types=["authorization_code", "refresh_token"],
                    response_types=["code"],
                    token_endpoint_auth_method="none",
                ),
                storage=storage,
                redirect_handler=owner.redirect_handler,
                callback_handler=owner.callback_handler,
            )
            async with (
                httpx2.AsyncClient(auth=provider, timeout=60) as http,
                Client(streamable_http_client(server.mcp, http_client=http)) as client,
            ):
                stored = await call(
                    client,
                    "remember",
                    content="Releases are tagged from the main branch after the browser tests pass.",
                    project=PROJECT,
                    type="project",
                )
                found = await call(client, "recall", query="releases tagged browser tests", project=PROJECT)
                # Limited on the consent page: another project does not exist for this client.
                elsewhere = await call_error(client, "recall", query="releases", project=OTHER_PROJECT)
                listed = await call(client, "get_context")
            assert len(owner.urls) == 1, owner.urls  # approved once, with write access: no step-up
            assert "code_challenge_method=S256" in owner.urls[0]
            mine = [memory for memory in found["memories"] if memory["id"] == stored["id"]]
            assert mine, found
            assert mine[0]["source_agent"] == AGENT
            assert "limited to other projects" in elsewhere and OTHER_PROJECT not in elsewhere
            assert [project["name"] for project in listed["projects"]] == [PROJECT]

            # The owner disconnects the client in the dashboard: its access token stops working.
            await page.goto(server.base + "/dashboard/clients")
            await page.fill("input[name=password]", PASSWORD)
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            row = page.locator("tr", has_text=AGENT)
            await expect(row).to_contain_text(CLIENT_NAME)
            await expect(row).to_contain_text("write")
            await expect(row.locator(".reach")).to_have_text(f"only {PROJECT}")
            await row.locator("text=Disconnect").click()
            await expect(page.locator(".flash.ok")).to_have_text(
                f"Disconnected {CLIENT_NAME}: its tokens stop working now."
            )
            await expect(page.locator("tr", has_text=AGENT)).to_have_count(0)
            await browser.close()
        assert storage.tokens is not None
        return storage.tokens.access_token

    access_token = asyncio.run(scenario())
    assert watch.problems == []
    assert len(listener.callbacks) == 1 and listener.callbacks[0]["iss"] == [server.base]
    # The consent page's address (state, challenge) is not sent on to the client as a Referer.
    assert listener.callback_referers == [None]
    assert Path(ARTIFACTS / "consent-400.png").stat().st_size > 0
    refused = httpx.post(
        server.mcp,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"authorization": f"Bearer {access_token}", "accept": "application/json, text/event-stream"},
        timeout=60,
    )
    assert refused.status_code == 401


def _authorization_url(server: OAuthServer, listener: Listener, *, client_name: str, state: str) -> str:
    """A client registered by hand (DCR) with the listener's redirect URI, and its authorization URL."""
    client_id = httpx.post(
        server.base + "/oauth/register",
        json={"client_name": client_name, "redirect_uris": [listener.redirect_uri]},
        timeout=60,
    ).json()["client_id"]
    _verifier, challenge = pkce()
    return authorize_url(
        server.base,
        client_id=client_id,
        challenge=challenge,
        redirect_uri=listener.redirect_uri,
        scope="memory:read memory:write",
        state=state,
        resource=server.mcp,
    )


def test_after_a_wrong_password_the_owner_denies_and_the_client_is_told(
    server: OAuthServer, listener: Listener
) -> None:
    url = _authorization_url(server, listener, client_name="Denied client", state="no-thanks")
    watch = Watch(server.base, listener.origin)
    watch.expected.append("status of 401 (Unauthorized)")  # the page shown again after the wrong password

    async def scenario() -> None:
        from playwright.async_api import async_playwright, expect

        expect.set_options(timeout=TIMEOUT_MS)
        async with async_playwright() as playwright:
            browser, page = await _browser(playwright)
            watch.attach(page)
            await page.goto(url)
            await page.fill("input[name=password]", "not the password")
            async with page.expect_navigation():
                await page.click("button[value=approve]")
            await expect(page.locator(".problem")).to_have_text("Wrong password.")
            async with page.expect_navigation():
                await page.click("button[value=deny]")
            assert page.url.startswith(listener.redirect_uri + "?"), await page.inner_text("body")
            await browser.close()

    asyncio.run(scenario())
    assert watch.problems == []
    assert len(listener.callbacks) == 1
    answer = listener.callbacks[0]
    assert answer["error"] == ["access_denied"] and answer["state"] == ["no-thanks"]
    assert answer["iss"] == [server.base] and "code" not in answer


def test_the_consent_form_posted_from_another_site_is_refused(
    server: OAuthServer, listener: Listener
) -> None:
    """Even with every field right (the seal, the CSRF token, the owner's password), the form submitted
    from a page of another site gets 403 and no code."""
    url = _authorization_url(server, listener, client_name="Forged client", state="forged")

    async def scenario() -> tuple[int, str]:
        from playwright.async_api import async_playwright

        async with async_playwright() as playwright:
            browser, page = await _browser(playwright)
            await page.goto(url)
            fields = {
                name: await page.input_value(f"input[name={name}]")
                for name in ("seal", "csrfmiddlewaretoken")
            }
            fields |= {"access": "write", "agent": "intruder", "password": PASSWORD, "decision": "approve"}
            hidden = "".join(
                f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
                for name, value in fields.items()
            )
            listener.pages["/forged"] = (
                f'<!doctype html><title>Win a prize</title><form method="post" action="{html.escape(url)}">'
                f'{hidden}<button type="submit">Claim</button></form>'
            )
            await page.goto(listener.site + "/forged")
            async with page.expect_response(
                lambda response: response.request.method == "POST" and "/oauth/authorize" in response.url
            ) as posted:
                await page.click("text=Claim")
            response = await posted.value
            status, body = response.status, await response.text()
            await browser.close()
            return status, body

    status, body = asyncio.run(scenario())
    assert status == 403, body
    assert body.startswith("Forbidden:")
    assert listener.callbacks == []
