"""OAuth test support: a real Kenfold with KENFOLD_PUBLIC_URL set, the owner scripted on the consent page,
and token storage for the MCP SDK's OAuth client."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from mcp.client.auth import AuthorizationCodeResult
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from bench.support.oauth import PASSWORD, REDIRECT, ConsentResult, authorize_url, owner_decides, pkce
from bench.support.oauth import consent_form as consent_form  # the tests import it from here
from bench.support.processes import Running, free_port, kenfold_env, manage, running


@dataclass(frozen=True)
class OAuthServer:
    home: Path
    base: str
    running: Running

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"

    def log(self) -> str:
        return self.running.output()


@contextmanager
def oauth_server(
    home: Path, *, port: int | None = None, app: str = "edge.asgi:application", **env: str
) -> Iterator[OAuthServer]:
    """gunicorn -k asgi, one worker, with KENFOLD_PUBLIC_URL naming its own loopback address."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    argv = [gunicorn, app, "-k", "asgi", "-w", "1", "-b", f"127.0.0.1:{port}", "--no-control-socket"]
    environment = kenfold_env(
        home, **({"KENFOLD_HTTP_ADDR": f"127.0.0.1:{port}", "KENFOLD_PUBLIC_URL": base} | env)
    )
    with running(argv, env=environment, ready_url=f"{base}/healthz") as started:
        yield OAuthServer(home=home, base=base, running=started)


def prepare_home(home: Path, *, password: str = PASSWORD) -> None:
    manage(home, "migrate", "--verbosity", "0")
    set_password(home, password)


def set_password(home: Path, password: str) -> None:
    import subprocess

    subprocess.run(
        [sys.executable, "manage.py", "password", "--stdin"],
        input=password + "\n",
        cwd=Path(__file__).resolve().parents[2],
        env=kenfold_env(home),
        check=True,
        capture_output=True,
        text=True,
    )


def grant_tokens(
    base: str,
    *,
    access: str,
    agent: str,
    consent_base: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict:
    """The whole flow by hand (httpx): register, authorize, consent (with `extra` form fields), redeem."""
    with httpx.Client(timeout=60) as http:
        client_id = http.post(
            base + "/oauth/register", json={"client_name": "Hand client", "redirect_uris": [REDIRECT]}
        ).json()["client_id"]
        verifier, challenge = pkce()
        url = authorize_url(
            base, client_id=client_id, challenge=challenge, scope="memory:read memory:write", state="s"
        )
        answer = owner_decides(url, access=access, agent=agent, post_base=consent_base, extra=extra)
        assert answer.status == 302, answer.page
        code = answer.query["code"][0]
        response = http.post(
            (consent_base or base) + "/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "code_verifier": verifier,
                "redirect_uri": REDIRECT,
                "client_id": client_id,
            },
        )
    assert response.status_code == 200, response.text
    return response.json() | {"client_id": client_id, "code": code, "verifier": verifier}


class ScriptedOwner:
    """The MCP SDK's redirect and callback handlers, answered by the owner on the consent page."""

    def __init__(self, *choices: str, agent: str = "remote-agent", verify: bool | str = True) -> None:
        self.choices = list(choices)
        self.agent = agent
        self.verify = verify
        self.urls: list[str] = []
        self.last: ConsentResult | None = None

    async def redirect_handler(self, url: str) -> None:
        import asyncio

        self.urls.append(url)
        access = self.choices.pop(0) if self.choices else "write"
        self.last = await asyncio.to_thread(
            owner_decides, url, access=access, agent=self.agent, verify=self.verify
        )

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.last is not None and self.last.status == 302, self.last
        query = self.last.query
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, info: OAuthClientInformationFull) -> None:
        self.client_info = info
