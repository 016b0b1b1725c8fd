"""End to end: `kenfold docs sync` in a real git checkout against a real server; another agent finds a
doc section through recall by a paraphrase, and its related pages through relates_to (issue 17).

The `kenfold` command is the client distribution installed alone into a fresh venv (no Django, and no
PyYAML: the frontmatter goes through the client's own reader), as on an agent's machine.
"""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.support.processes import manage
from tests.client.support import Repo
from tests.mcp.support import KenfoldServer, call, mcp_client, serve

pytestmark = pytest.mark.anyio
PROJECT = "git@github.com:acme/shop.git"
# A code block longer than a chunk (4,000 characters): it must reach the server whole, in one section.
CODE_LINES = [f"    step_{n:03d} = run('migrate --shard {n}')  # one shard at a time" for n in range(80)]
CODE = "```python\ndef migrate_all():\n" + "\n".join(CODE_LINES) + "\n```"

DEPLOY = """---
title: Deploying the shop
tags: [deploy, release, rollback]
aliases:
  - shipping a release
  - undo a deployment
answers:
  - How do we go back to the previous version after a bad release?
description: >
  How a release goes out,
  and how it comes back.
relates_to:
  - path: monitoring.md
    relation: monitors
  - path: guides/migrations.md
    relation: part_of
---
# Deploying the shop

Releases go out from the main branch every weekday morning, one region at a time.

## Rolling back a release

When a release is broken, run `make rollback TAG=<previous tag>`: it redeploys the image of the previous
tag to every region within ten minutes and pins it until someone unpins it.

## Release windows

No release starts after 15:00 on a Friday or during a sale that the marketing calendar announces.
"""

MONITORING = """---
title: Monitoring
tags: monitoring, alerts
relates_to: alerts.md
---
# Monitoring

Every region exports request latency and error rates; the dashboards live in Grafana under Shop.

## Error budget

The error budget is 0.1% of requests per week; past it, releases stop until the budget recovers.
"""

ALERTS = """---
title: Alerts
tags: [alerts, paging]
relates_to:
  - deploy.md
  - monitoring.md
---
# Alerts

Pages go to the on-call engineer through the pager; warnings only reach the team channel.

## Who gets paged

The primary on-call engineer first, then the secondary after fifteen minutes without an acknowledgement.
"""

MIGRATIONS = (
    """---
title: Schema migrations
tags: [database, migrations]
---
# Schema migrations

Every schema change ships as a reversible migration, reviewed by a second engineer before it merges.

## The migration runner

Migrations run shard by shard before the new image starts; the whole run is below.

"""
    + CODE
    + "\n"
)

SETTLEMENT_KO = """---
title: 정산 주기
tags: [정산, 지급]
aliases: [판매자 정산]
---
# 정산 주기

판매 대금은 구매 확정 후 영업일 기준 이틀 뒤에 판매자에게 지급된다.

## 지급 보류

분쟁이 열린 주문의 대금은 분쟁이 끝날 때까지 지급이 보류된다.
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[KenfoldServer]:
    keys = {
        "claude-code": manage(module_home, "key", "create", "claude-code").stdout.strip(),
        "codex": manage(module_home, "key", "create", "codex").stdout.strip(),
    }
    with serve(module_home, keys, KENFOLD_EMBED="off") as started:
        yield started


@pytest.fixture
def kenfold(standalone_client: Path) -> str:
    return str(standalone_client / "kenfold")


def run(kenfold: str, server: KenfoldServer, repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """`kenfold docs *args` in the checkout; sync gets the server's address and key."""
    server_options = ["--url", server.url, "--key-env", "SHOP_KEY"] if args[0] == "sync" else []
    return subprocess.run(
        [kenfold, "docs", *args, *server_options],
        cwd=repo.path,
        env={**os.environ, "SHOP_KEY": server.keys["claude-code"]},
        capture_output=True,
        text=True,
        timeout=180,
    )


def sync(kenfold: str, server: KenfoldServer, repo: Repo) -> dict:
    result = run(kenfold, server, repo, "sync", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def doc_rows(server: KenfoldServer) -> list[dict]:
    """Every doc section in the database, whatever its status, read through the owner's shell."""
    out = server.manage(
        "shell",
        "-c",
        (
            "import json\n"
            "from memories.models import Memory\n"
            "for m in Memory.objects.filter(attrs__kind='doc').order_by('created_at', 'id'):\n"
            "    print(json.dumps({'id': str(m.id), 'path': m.attrs['path'], 'index': m.attrs['chunk_index'],"
            " 'status': m.status, 'trust': m.trust, 'type': m.type, 'content': m.content,"
            " 'supersedes': str(m.supersedes_id) if m.supersedes_id else None}))"
        ),
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


async def test_docs_sync_and_recall(server: KenfoldServer, kenfold: str, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "shop")
    repo.git("remote", "add", "origin", PROJECT)
    repo.write(
        "README.md", "# Shop\n\nThe shop sells tea online; see docs/deploy.md for how releases go out.\n"
    )
    repo.write("docs/deploy.md", DEPLOY)
    repo.write("docs/monitoring.md", MONITORING)
    repo.write("docs/alerts.md", ALERTS)
    repo.write("docs/guides/migrations.md", MIGRATIONS)
    repo.write("docs/ko/settlement.md", SETTLEMENT_KO)
    repo.write("src/app.py", "print('not a doc')\n")
    repo.commit("docs")

    first = sync(kenfold, server, repo)
    assert first["added"] == 6 and first["updated"] == 0 and first["retired"] == 0
    assert sorted(first["sent"]) == [
        "README.md",
        "docs/alerts.md",
        "docs/deploy.md",
        "docs/guides/migrations.md",
        "docs/ko/settlement.md",
        "docs/monitoring.md",
    ]
    # deploy -> monitoring (monitors), deploy -> migrations (part_of), monitoring -> alerts,
    # alerts -> deploy, alerts -> monitoring: a cycle, which the walk below must survive.
    assert first["links"] == 5
    rows = doc_rows(server)
    assert {(row["type"], row["trust"], row["status"]) for row in rows} == {("project", "external", "active")}
    code_sections = [row for row in rows if "step_000" in row["content"]]
    assert len(code_sections) == 1 and "step_079" in code_sections[0]["content"], "the code block is whole"
    assert len(code_sections[0]["content"]) > 4000

    # Nothing changed: nothing is sent.
    again = sync(kenfold, server, repo)
    assert again["sent"] == [] and again["unchanged"] == 6

    # Another agent, by a paraphrase that shares no heading word with the section.
    async with mcp_client(server.url, key=server.keys["codex"]) as agent:
        found = await call(
            agent,
            "recall",
            query="how can I undo a broken deploy?",
            project=PROJECT,
            limit=5,
            related_depth=2,
        )
        top = found["memories"][0]
        assert top["path"] == "docs/deploy.md"
        assert top["heading_path"] == ["Rolling back a release"]
        assert "make rollback" in top["content"]
        related = {(r["path"], r["relation"], r["direction"], r["depth"]) for r in top["related"]}
        assert related == {
            ("docs/monitoring.md", "monitors", "outgoing", 1),
            ("docs/guides/migrations.md", "part_of", "outgoing", 1),
            ("docs/alerts.md", "related", "incoming", 1),
        }
        deeper = await call(agent, "recall", query="error budget", project=PROJECT, limit=1, related_depth=3)
        hit = deeper["memories"][0]
        assert (hit["path"], hit["heading_path"]) == ("docs/monitoring.md", ["Error budget"])
        assert {(r["path"], r["depth"]) for r in hit["related"]} == {
            ("docs/alerts.md", 1),
            ("docs/deploy.md", 1),
            ("docs/guides/migrations.md", 2),
        }
        korean = await call(agent, "recall", query="판매자 대금은 언제 지급돼?", project=PROJECT, limit=3)
        assert korean["memories"][0]["path"] == "docs/ko/settlement.md"
        # Doc sections come to get_context by the task, never as the project's rules.
        context = await call(agent, "get_context", task="roll back a broken release", project=PROJECT)
        assert not any("path" in view for view in context["project"])
        assert any(view.get("path") == "docs/deploy.md" for view in context["relevant"])

    # An edit re-syncs only that file; its changed section supersedes the old one, the other stays.
    before = {row["id"]: row for row in doc_rows(server) if row["path"] == "docs/monitoring.md"}
    repo.write("docs/monitoring.md", MONITORING.replace("0.1% of requests", "0.05% of requests"))
    repo.commit("tighter budget")
    edited = sync(kenfold, server, repo)
    assert edited["sent"] == ["docs/monitoring.md"] and edited["updated"] == 1 and edited["unchanged"] == 5
    assert edited["sections_stored"] == 1 and edited["sections_kept"] == 1
    after = [row for row in doc_rows(server) if row["path"] == "docs/monitoring.md"]
    new = [row for row in after if row["id"] not in before]
    assert len(new) == 1 and "0.05%" in new[0]["content"]
    replaced = next(row for row in after if row["id"] == new[0]["supersedes"])
    assert replaced["status"] == "superseded" and "0.1%" in replaced["content"], "history is kept"

    # A deleted page's sections are retired; the links to it go with them.
    repo.git("rm", "--quiet", "docs/alerts.md")
    repo.commit("no more alerts page")
    removed = sync(kenfold, server, repo)
    assert removed["deleted"] == ["docs/alerts.md"] and removed["retired"] == 1 and removed["sent"] == []
    assert {row["status"] for row in doc_rows(server) if row["path"] == "docs/alerts.md"} == {"deleted"}
    assert removed["links"] == 2
    async with mcp_client(server.url, key=server.keys["codex"]) as agent:
        found = await call(agent, "recall", query="who gets paged on call", project=PROJECT, related_depth=1)
        assert all(view.get("path") != "docs/alerts.md" for view in found["memories"])
        for view in found["memories"]:
            assert all(r["path"] != "docs/alerts.md" for r in view.get("related", []))

    # Lint now finds the link the deletion broke (monitoring.md still names alerts.md).
    lint = run(kenfold, server, repo, "lint", "--json")
    assert lint.returncode == 1
    report = json.loads(lint.stdout)
    monitoring = next(f for f in report["files"] if f["path"] == "docs/monitoring.md")
    assert [i["rule"] for i in monitoring["issues"] if i["severity"] == "error"] == ["broken-relation"]


async def test_a_page_with_a_credential_is_refused_alone(
    server: KenfoldServer, kenfold: str, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "billing")
    repo.git("remote", "add", "origin", "git@github.com:acme/billing.git")
    token = "ghp_" + "Zq7Xw2Lk9Vb4Nm8Rt5Yp3Hs6Jd1Fg0Ca2Ue4"
    # Sections long enough to stay apart; the token is in the last one's heading.
    text = "The billing app is built by the platform pipeline; its variables come from the vault. " * 4
    repo.write(
        "docs/setup.md",
        f"# Setup\n\n{text}\n\n## Building\n\n{text}\n\n## Rotate {token} quarterly\n\n{text}\n",
    )
    repo.write(
        "docs/invoices.md",
        "# Invoices\n\nInvoices are numbered per year and never reused, even after a refund.\n",
    )
    repo.commit("docs")
    result = run(kenfold, server, repo, "sync")
    assert result.returncode == 1
    assert "refused docs/setup.md" in result.stdout and token not in result.stdout + result.stderr
    # The heading that holds the token is named redacted, with its place in the page (issue 37).
    assert "section 'Rotate [REDACTED:github-token] quarterly' (section 3 of 3)" in result.stdout
    paths = {row["path"] for row in doc_rows(server) if row["status"] == "active"}
    assert "docs/invoices.md" in paths and "docs/setup.md" not in paths


async def test_docs_rest_refuses_what_it_must(server: KenfoldServer) -> None:
    auth = {"Authorization": f"Bearer {server.keys['claude-code']}"}
    with httpx.Client(base_url=server.base, timeout=30) as http:
        assert http.get("/api/v1/docs/files", params={"project": PROJECT}).status_code == 401
        assert http.get("/api/v1/docs/files", headers=auth).status_code == 400
        page = {"path": "../etc/passwd.md", "file_hash": "0" * 64, "chunks": [{"content": "x"}]}
        bad = http.post("/api/v1/docs/sync", json={"project": PROJECT, "files": [page]}, headers=auth)
        assert bad.status_code == 400 and "files[0].path" in bad.json()["error"]
        reader = server.create_key("reader", "--read-only")
        refused = http.post(
            "/api/v1/docs/sync",
            json={"project": PROJECT, "files": [], "deleted": []},
            headers={"Authorization": f"Bearer {reader}"},
        )
        assert refused.status_code == 403
        # The OpenAPI page keeps its address beside the docs endpoints.
        assert http.get("/api/v1/docs", headers=auth).status_code == 200


DOCS_TOKEN = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
CLEAN_SECTION = {"heading_path": ["Rollback"], "content": "## Rollback\n\nRun the previous release again."}


@pytest.mark.parametrize(
    ("changes", "refused_path", "field"),
    [
        ({"path": f"docs/{DOCS_TOKEN}.md"}, "docs/[REDACTED:github-token].md", "path"),
        (
            {"chunks": [{"heading_path": [f"Rotate {DOCS_TOKEN}"], "content": "Rotate the deploy key."}]},
            "docs/keys.md",
            "the heading path of section 1 of 1",
        ),
        (
            {"relates_to": [{"path": f"docs/{DOCS_TOKEN}.md", "relation": "related"}]},
            "docs/keys.md",
            "relates_to[0]",
        ),
        ({"tags": ["deploy", DOCS_TOKEN]}, "docs/keys.md", "tags"),
    ],
    ids=["path", "heading_path", "relates_to", "tags"],
)
async def test_docs_sync_scans_every_stored_field(
    server: KenfoldServer, changes: dict, refused_path: str, field: str
) -> None:
    """Paths, headings, links and tags end in the sections' attrs (and in exports) as much as the text does
    (issue 37, item 2): a page holding a credential in any of them is refused alone, named redacted."""
    auth = {"Authorization": f"Bearer {server.keys['claude-code']}"}
    project = f"github.com/acme/fields-{field.split()[-1].replace('[0]', '')}"
    page = {"path": "docs/keys.md", "file_hash": "1" * 64, "chunks": [CLEAN_SECTION]} | changes
    fine = {"path": "docs/rollback.md", "file_hash": "2" * 64, "chunks": [CLEAN_SECTION]}
    with httpx.Client(base_url=server.base, timeout=30, headers=auth) as http:
        response = http.post("/api/v1/docs/sync", json={"project": project, "files": [page, fine]})
        assert response.status_code == 200, response.text
        refused = response.json()["refused"]
        assert [item["path"] for item in refused] == [refused_path]
        assert refused[0]["error"].startswith(
            f"{refused_path}: {field} appears to contain a GitHub token. Credentials must never be stored"
        )
        assert DOCS_TOKEN[4:14] not in response.text
        files = http.get("/api/v1/docs/files", params={"project": project}).json()["files"]
        assert [file["path"] for file in files] == ["docs/rollback.md"]
