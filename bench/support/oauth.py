"""The OAuth flow as a client and the owner go through it: PKCE, the authorization request, the owner on the
consent page. For the tests and the cluster benchmark's checks (bench/cluster/checks.py)."""

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

PASSWORD = "correct horse battery staple"
REDIRECT = "http://127.0.0.1:33418/callback"


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(base: str, *, client_id: str, challenge: str, **params: str | None) -> str:
    """An authorization request as a client sends it (PKCE S256, our redirect URI); `params` add to or
    override the defaults, None drops one."""
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    } | params
    return f"{base}/oauth/authorize?" + urlencode({k: v for k, v in query.items() if v is not None})


@dataclass
class ConsentResult:
    status: int
    location: str
    query: dict[str, list[str]]
    page: str


def consent_form(page: str) -> dict[str, str]:
    """The hidden fields of the consent page (seal, CSRF token)."""
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return {name: unescape(value) for name, value in fields.items()}


def owner_decides(
    url: str,
    *,
    decision: str = "approve",
    access: str = "read",
    agent: str = "remote-agent",
    password: str = PASSWORD,
    post_base: str | None = None,
    verify: bool | str = True,
    extra: dict[str, str] | None = None,
) -> ConsentResult:
    """What the owner does in a browser: open the consent page, choose, type the password, submit.

    `post_base` submits the form to another server (another worker or replica) than the one that showed it;
    `extra` adds form fields (the project choice).
    """
    with httpx.Client(timeout=60, verify=verify) as browser:
        page = browser.get(url)
        if page.status_code != 200:
            return ConsentResult(page.status_code, page.headers.get("location", ""), _query(page), page.text)
        form = consent_form(page.text)
        parts = urlsplit(url)
        target = (post_base or f"{parts.scheme}://{parts.netloc}") + parts.path
        origin = post_base or f"{parts.scheme}://{parts.netloc}"
        answer = browser.post(
            target,
            data=form
            | {"decision": decision, "access": access, "agent": agent, "password": password}
            | (extra or {}),
            headers={"Origin": origin, "Referer": url},
        )
        return ConsentResult(
            answer.status_code, answer.headers.get("location", ""), _query(answer), answer.text
        )


def _query(response: httpx.Response) -> dict[str, list[str]]:
    return parse_qs(urlsplit(response.headers.get("location", "")).query)
