"""Who reaches the dashboard, how the owner logs in, and how sessions and forms are protected (§1.17)."""

import asyncio
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from access.models import Owner
from access.password import password_check, password_set
from bench.support.processes import REPO, kenfold_env
from dashboard.models import DashboardSession
from edge.asgi import application
from edge.http_guard import HOST_FORBIDDEN
from kenfold import clock
from kenfold_common.errors import AuthenticationFailed, TooManyAttempts
from memories.models import Memory, Status
from tests.dashboard.conftest import HOST, PASSWORD, browser, csrf_of, log_in, memory
from tests.dashboard.conftest import Owner as SignedIn

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
FORWARDING = [
    "X-Forwarded-For",
    "X-Forwarded-Host",
    "Forwarded",
    "X-Real-Ip",
    "Cf-Connecting-Ip",
    "True-Client-Ip",
]


# --- availability ----------------------------------------------------------------------------------------


def test_dashboard_without_slash_is_a_permanent_redirect(db: None) -> None:
    response = browser().get("/dashboard")
    assert response.status_code == 301
    assert response["Location"] == "/dashboard/"


def test_unauthenticated_pages_redirect_to_login_with_next(owner_password: str) -> None:
    client = browser()
    response = client.get("/dashboard/review?scope=user&page=1")
    assert response.status_code == 303
    assert response["Location"] == "/dashboard/login?next=/dashboard/review%3Fscope%3Duser%26page%3D1"
    login_page = client.get(response["Location"]).content.decode()
    assert 'name="next" value="/dashboard/review?scope=user&amp;page=1"' in login_page
    answer = client.post(
        "/dashboard/login", {"password": PASSWORD, "next": "/dashboard/review?scope=user&page=1"}
    )
    assert answer.status_code == 303
    assert answer["Location"] == "/dashboard/review?scope=user&page=1"
    assert client.get(answer["Location"]).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:7077", "127.0.0.1.evil.example"])
def test_a_foreign_host_is_refused(owner_password: str, host: str) -> None:
    # The Host allowlist in front of every surface refuses it before the dashboard is asked (spec §1.15).
    client = Client(headers={"host": host})
    for response in (client.get("/dashboard/login"), client.post("/dashboard/login", {"password": PASSWORD})):
        assert response.status_code == 403
        assert response.json() == {"error": HOST_FORBIDDEN}
    assert not DashboardSession.objects.exists()


def test_an_allowed_but_not_loopback_host_does_not_see_the_dashboard(
    owner_password: str, settings: Settings
) -> None:
    # The API may be published on a LAN name; the dashboard stays on loopback unless KENFOLD_DASHBOARD=remote.
    settings.KENFOLD_ALLOWED_HOSTS = [*settings.KENFOLD_ALLOWED_HOSTS, "kenfold.lan"]
    client = Client(headers={"host": "kenfold.lan:7077"})
    assert client.get("/dashboard/login").status_code == 404
    assert client.post("/dashboard/login", {"password": PASSWORD}).status_code == 404
    assert not DashboardSession.objects.exists()


@pytest.mark.parametrize("host", ["localhost:7077", "127.0.0.1:7077", "[::1]:7077", "127.0.0.1"])
def test_loopback_hosts_are_answered(db: None, host: str) -> None:
    assert Client(headers={"host": host}).get("/dashboard/login").status_code == 200


@pytest.mark.parametrize("peer", ["203.0.113.5", "10.0.0.2", "::ffff:203.0.113.5", ""])
def test_a_loopback_host_from_another_machine_is_refused(owner_password: str, peer: str) -> None:
    # Bound to 0.0.0.0, or behind a proxy that passes Host on unchanged: the Host alone proves nothing.
    client = Client(headers={"host": HOST}, REMOTE_ADDR=peer)
    assert client.get("/dashboard/login").status_code == 404
    assert client.post("/dashboard/login", {"password": PASSWORD}).status_code == 404
    assert not DashboardSession.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("peer", "status"), [(("203.0.113.5", 50000), 404), (("127.0.0.1", 50000), 200)])
def test_the_asgi_peer_address_is_checked(peer: tuple[str, int], status: int) -> None:
    async def get() -> int:
        transport = httpx.ASGITransport(app=application, client=peer)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}") as http:
            return (await http.get("/dashboard/login")).status_code

    assert asyncio.run(get()) == status


@pytest.mark.parametrize("peer", ["127.0.0.1", "127.8.0.1", "::1", "::ffff:127.0.0.1"])
def test_a_loopback_peer_is_answered(db: None, peer: str) -> None:
    assert Client(headers={"host": HOST}, REMOTE_ADDR=peer).get("/dashboard/login").status_code == 200


@pytest.mark.parametrize("header", FORWARDING)
def test_a_request_a_proxy_forwarded_is_refused_in_local_mode(owner: SignedIn, header: str) -> None:
    proposed = memory(content="wait for review", status=Status.PROPOSED)
    headers = {header: "203.0.113.9"}
    assert owner.client.get("/dashboard/", headers=headers).status_code == 404
    assert owner.client.get("/dashboard/login", headers=headers).status_code == 404
    assert owner.post(f"/dashboard/review/{proposed.id}/approve", headers=headers).status_code == 404
    proposed.refresh_from_db()
    assert proposed.status == Status.PROPOSED


def _remote(settings: Settings) -> None:
    settings.DASHBOARD = "remote"
    settings.PUBLIC_URL = "https://memory.example.org"
    settings.KENFOLD_ALLOWED_HOSTS = [*settings.KENFOLD_ALLOWED_HOSTS, "memory.example.org"]


def test_remote_mode_answers_the_public_host_through_the_proxy(
    owner_password: str, settings: Settings
) -> None:
    _remote(settings)
    client = Client(headers={"host": "memory.example.org", "x-forwarded-for": "198.51.100.7"})
    assert client.get("/dashboard/login", secure=True).status_code == 200
    answer = client.post("/dashboard/login", {"password": PASSWORD}, secure=True)
    assert answer.status_code == 303
    cookie = answer.cookies["kenfold_dashboard"]
    assert cookie["secure"] is True
    assert client.get("/dashboard/", secure=True).status_code == 200
    # Other hosts stay refused.
    settings.KENFOLD_ALLOWED_HOSTS = [*settings.KENFOLD_ALLOWED_HOSTS, "kenfold.lan"]
    assert Client(headers={"host": "kenfold.lan"}).get("/dashboard/login").status_code == 404


def _python(snippet: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=REPO,
        env=kenfold_env(tmp_path, DJANGO_SETTINGS_MODULE="kenfold.settings", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_off_unmounts_the_dashboard(tmp_path: Path) -> None:
    snippet = (
        "import django; django.setup()\n"
        "from django.urls import Resolver404, resolve\n"
        "for path in ('/dashboard', '/dashboard/', '/dashboard/login'):\n"
        "    try:\n"
        "        resolve(path); print('mounted', path)\n"
        "    except Resolver404:\n"
        "        print('absent', path)\n"
    )
    off = _python(snippet, tmp_path, KENFOLD_DASHBOARD="off")
    assert off.returncode == 0, off.stderr
    assert off.stdout.split() == [
        "absent",
        "/dashboard",
        "absent",
        "/dashboard/",
        "absent",
        "/dashboard/login",
    ]
    on = _python(snippet, tmp_path)
    assert on.stdout.split().count("mounted") == 3, on.stderr


def test_remote_mode_needs_an_https_public_url(tmp_path: Path) -> None:
    result = _python("import django; django.setup()", tmp_path, KENFOLD_DASHBOARD="remote")
    assert result.returncode != 0
    assert "KENFOLD_DASHBOARD=remote needs KENFOLD_PUBLIC_URL with https" in result.stderr
    result = _python("import django; django.setup()", tmp_path, KENFOLD_DASHBOARD="public")
    assert "KENFOLD_DASHBOARD='public' is not one of: local, remote, off" in result.stderr


# --- headers and the stylesheet ----------------------------------------------------------------------


def test_pages_carry_the_security_headers(owner: SignedIn) -> None:
    for path in (
        "/dashboard/login",
        "/dashboard/",
        "/dashboard/review",
        "/dashboard/memories",
        "/dashboard/usage",
        "/dashboard/clients",
        "/dashboard/audit",
    ):
        response = owner.get(path) if path != "/dashboard/login" else browser().get(path)
        assert response.status_code == 200, path
        assert response["Content-Security-Policy"] == CSP
        assert response["X-Frame-Options"] == "DENY"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Referrer-Policy"] == "same-origin"
        assert response["Cache-Control"] == "no-store"
        html = response.content.decode()
        assert "<script" not in html and " style=" not in html and "<style" not in html


def test_redirects_and_refusals_carry_the_headers_too(owner_password: str) -> None:
    login = browser().get("/dashboard/")
    assert (login.status_code, login["Location"]) == (303, "/dashboard/login?next=/dashboard/")
    slash = browser().get("/dashboard")
    assert (slash.status_code, slash["Location"]) == (301, "/dashboard/")
    forwarded = browser().get("/dashboard/", headers={"X-Forwarded-For": "203.0.113.9"})
    assert (forwarded.status_code, forwarded.content) == (404, b"Not Found\n")
    ended = browser().post("/dashboard/review/x/approve", {"csrf": "x"})
    assert (ended.status_code, ended.content) == (
        403,
        b"Forbidden: your dashboard session ended. Log in again.\n",
    )
    for response in (login, slash, forwarded, ended):
        assert response["Content-Security-Policy"] == CSP and response["Cache-Control"] == "no-store"


def test_the_stylesheet_is_served_and_cached_for_an_hour(db: None) -> None:
    page = browser().get("/dashboard/login").content.decode()
    assert '<link rel="stylesheet" href="/static/dashboard/dashboard.css">' in page
    response = browser().get("/static/dashboard/dashboard.css")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert "max-age=3600" in response["Cache-Control"]
    assert b".top" in response.content


# --- login -----------------------------------------------------------------------------------------------


def test_wrong_password_is_401_without_a_cookie(owner_password: str) -> None:
    response = log_in(browser(), "not the password at all")
    assert response.status_code == 401
    assert "kenfold_dashboard" not in response.cookies
    assert "Wrong password." in response.content.decode()
    assert not DashboardSession.objects.exists()


def test_no_password_set_tells_the_owner_what_to_run(db: None) -> None:
    response = log_in(browser(), "anything at all here")
    assert response.status_code == 403
    assert "python manage.py password" in response.content.decode()


def test_the_session_cookie_flags(owner_password: str) -> None:
    response = log_in(browser())
    cookie = response.cookies["kenfold_dashboard"]
    assert cookie["path"] == "/dashboard/"
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Strict"
    assert cookie["max-age"] == 12 * 3600
    assert not cookie["secure"]  # plain http on loopback; TLS or the public host set it (remote test)
    assert len(cookie.value) >= 40
    # Only a hash of the token is stored.
    assert not DashboardSession.objects.filter(token_hash=cookie.value).exists()
    assert DashboardSession.objects.count() == 1


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/",
        "//evil.example/dashboard/",
        "/dashboard//evil.example",
        "/dashboard/../admin",
        "/dashboard/..",
        "/dashboard/\\evil.example",
        "/\\evil.example",
        "/dashboard/\r\nSet-Cookie: x=1",
        "/healthz",
        "javascript:alert(1)",
        "dashboard/",
    ],
)
def test_next_cannot_leave_the_dashboard(owner_password: str, target: str) -> None:
    answer = browser().post("/dashboard/login", {"password": PASSWORD, "next": target})
    assert answer.status_code == 303
    assert answer["Location"] == "/dashboard/"
    signed_in = browser()
    log_in(signed_in)
    assert signed_in.get("/dashboard/login", {"next": target})["Location"] == "/dashboard/"


def test_the_dashboard_has_its_own_lockout(owner_password: str) -> None:
    # Five wrong at the public consent page lock the consent page only: the owner still logs in here.
    for n in range(5):
        with pytest.raises(AuthenticationFailed):
            password_check(password=f"consent guess {n}", remote="198.51.100.1", page="consent")
    with pytest.raises(TooManyAttempts):
        password_check(password=PASSWORD, remote="198.51.100.1", page="consent")
    client = browser()
    assert log_in(client).status_code == 303

    # Five wrong here lock the dashboard, even for the right password; the consent page is not locked by them.
    Owner.objects.update(locked_until=None)
    assert [log_in(client, f"wrong password {n}").status_code for n in range(5)] == [401] * 5
    locked = log_in(client)
    assert locked.status_code == 429
    assert "Try again in 15 minutes" in locked.content.decode()
    assert "kenfold_dashboard" not in locked.cookies
    password_check(password=PASSWORD, remote="198.51.100.1", page="consent")
    # The lock ends after 15 minutes.
    with clock.frozen(clock.now() + timedelta(minutes=16)):
        assert log_in(client).status_code == 303
    assert Owner.objects.get().dashboard_failures == 0


def test_logout_ends_the_session(owner: SignedIn) -> None:
    answer = owner.post("/dashboard/logout")
    assert answer.status_code == 303 and answer["Location"] == "/dashboard/login"
    assert answer.cookies["kenfold_dashboard"].value == ""
    assert not DashboardSession.objects.exists()
    assert owner.get("/dashboard/").status_code == 303


def test_a_password_change_ends_every_session(owner: SignedIn) -> None:
    other = browser()
    log_in(other)
    password_set(password="another long owner password")
    for client in (owner.client, other):
        response = client.get("/dashboard/")
        assert response.status_code == 303
        assert response["Location"].startswith("/dashboard/login")
    assert not DashboardSession.objects.exists()
    assert log_in(browser(), "another long owner password").status_code == 303


def test_sessions_end_after_two_idle_hours(owner: SignedIn) -> None:
    start = clock.now()
    with clock.frozen(start + timedelta(hours=1, minutes=50)):
        assert owner.get("/dashboard/").status_code == 200  # activity keeps it alive
    with clock.frozen(start + timedelta(hours=3, minutes=40)):
        assert owner.get("/dashboard/").status_code == 200
    with clock.frozen(start + timedelta(hours=5, minutes=41)):
        assert owner.get("/dashboard/").status_code == 303


def test_sessions_end_after_twelve_hours_whatever_the_activity(owner: SignedIn) -> None:
    start = clock.now()
    for hours in range(1, 12):
        with clock.frozen(start + timedelta(hours=hours)):
            assert owner.get("/dashboard/").status_code == 200
    with clock.frozen(start + timedelta(hours=12, minutes=1)):
        assert owner.get("/dashboard/").status_code == 303


def test_at_most_64_sessions_the_oldest_go_first(owner_password: str) -> None:
    start = clock.now() - timedelta(minutes=90)
    for n in range(64):
        DashboardSession.objects.create(
            token_hash=f"{n:064x}", csrf_token="x", owner_stamp="", created_at=start + timedelta(minutes=n)
        )
    assert log_in(browser()).status_code == 303
    assert DashboardSession.objects.count() == 64
    assert not DashboardSession.objects.filter(token_hash=f"{0:064x}").exists()


# --- forms -----------------------------------------------------------------------------------------------


def _still_proposed(proposed: Memory) -> None:
    proposed.refresh_from_db()
    assert proposed.status == Status.PROPOSED
    assert "approved_by" not in proposed.attrs


def test_forged_csrf_and_cross_site_posts_are_refused_without_side_effects(owner: SignedIn) -> None:
    proposed = memory(content="the build uses make", status=Status.PROPOSED)
    url = f"/dashboard/review/{proposed.id}/approve"
    assert owner.client.post(url, {}).status_code == 403
    assert owner.client.post(url, {"csrf": "forged"}).status_code == 403
    # Another session's token is no good either.
    intruder = browser()
    log_in(intruder)
    other_token = csrf_of(intruder.get("/dashboard/").content.decode())
    assert owner.client.post(url, {"csrf": other_token}).status_code == 403
    # The right token from a page of another site.
    assert owner.post(url, headers={"origin": "https://evil.example"}).status_code == 403
    assert owner.post(url, headers={"origin": "null"}).status_code == 403
    assert owner.post(url, headers={"sec-fetch-site": "cross-site"}).status_code == 403
    assert owner.post(url, headers={"sec-fetch-site": "same-site"}).status_code == 403
    # Without a session at all.
    assert browser().post(url, {"csrf": owner.csrf}).status_code == 403
    _still_proposed(proposed)
    assert (
        owner.post(url, headers={"origin": f"http://{HOST}", "sec-fetch-site": "same-origin"}).status_code
        == 303
    )
    proposed.refresh_from_db()
    assert proposed.status == Status.ACTIVE


def test_a_cross_site_login_is_refused(owner_password: str) -> None:
    answer = browser().post(
        "/dashboard/login", {"password": PASSWORD}, headers={"origin": "https://evil.example"}
    )
    assert answer.status_code == 403
    assert not DashboardSession.objects.exists()


def test_an_oversized_form_is_refused_unread(owner: SignedIn) -> None:
    proposed = memory(content="a proposal", status=Status.PROPOSED)
    answer = owner.post(f"/dashboard/review/{proposed.id}/reject", {"reason": "x" * (70 * 1024)})
    assert answer.status_code == 413
    _still_proposed(proposed)


def test_other_methods_are_refused(owner: SignedIn) -> None:
    assert owner.client.put("/dashboard/").status_code == 405
    assert owner.client.get("/dashboard/logout").status_code == 405
    assert owner.client.get("/dashboard/nowhere").status_code == 404
