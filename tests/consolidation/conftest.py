"""A scripted chat-completions server and an embeddings server on 127.0.0.1 for consolidation tests,
and helpers that write memories the way agents do and then age them."""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from access.caller import Caller
from consolidation import prompts
from kenfold import clock
from memories.models import Memory
from memories.providers import configured
from memories.search.embedding_store import backfill
from memories.services.remember import memory_remember
from tests.provider_servers import (
    ProviderServer,
    Received,
    Reply,
    chat_reply,
    openai_embeddings,
    provider_server,
)

CLAUDE = Caller(agent="claude-code")
CODEX = Caller(agent="codex")
REPO = "https://github.com/kenfold/kenfold.git"
SCOPE = "project:github.com/kenfold/kenfold"
_MEMORY = re.compile(r"<memory>\n(.*?)\n</memory>", re.DOTALL)

Judge = Callable[[str, str], Reply | dict]


@dataclass
class ScriptedModel:
    """Answers judge requests with ``judge(A's content, B's content)`` and digest requests with
    ``digest``; records what it was asked."""

    judge: Judge = lambda a, b: {"relation": "distinct", "keep": "B", "reason": "Different things."}
    digest: Reply | dict | str = field(default_factory=lambda: {"digest": "- nothing"})
    judged: list[tuple[str, str]] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    server: ProviderServer | None = None

    def __call__(self, received: Received) -> Reply:
        system, user = (m["content"] for m in received.json["messages"])
        if system == prompts.DIGEST_SYSTEM_PROMPT:
            self.digests.append(user)
            answer = self.digest
        else:
            a, b = _MEMORY.findall(user)
            self.judged.append((a, b))
            answer = self.judge(a, b)
        return answer if isinstance(answer, Reply) else chat_reply(answer)


@pytest.fixture
def model(provider_env: Callable[..., None]) -> Iterator[ScriptedModel]:
    """The scripted chat model plus a fake embeddings server; settings point at both."""
    scripted = ScriptedModel()
    with provider_server(scripted) as chat, provider_server(openai_embeddings) as embed:
        scripted.server = chat
        provider_env(
            KENFOLD_CHAT_URL=f"{chat.url}/v1", KENFOLD_EMBED_URL=f"{embed.url}/v1", KENFOLD_EMBED=None
        )
        yield scripted


def remember(
    content: str,
    *,
    type: str = "project",
    project: str | None = REPO,
    age: timedelta = timedelta(hours=2),
    caller: Caller = CLAUDE,
    session: str | None = None,
) -> Memory:
    """A memory as an agent stores it, then aged by ``age`` (pairs are judged once settled, 1 h)."""
    out = memory_remember(caller=caller, content=content, type=type, project=project, session_id=session)
    Memory.objects.filter(pk=out.id).update(created_at=clock.now() - age)
    return Memory.objects.get(pk=out.id)


def embed_all() -> None:
    """Vectors for every memory, as the worker's backfill writes them."""
    for embedder in configured.embedders():
        backfill(embedder=embedder)


def sessions(count: int, *, days_ago: int = 60, project: str | None = REPO) -> list[Memory]:
    """``count`` session summaries on consecutive days, the first ``days_ago`` days ago."""
    return [
        remember(
            f"Session summary: fixed retries in src/billing/webhook.py and ran pytest tests/billing; "
            f"issue #{101 + i} stays open (day {i + 1}).",
            type="episodic",
            project=project,
            age=timedelta(days=days_ago - i),
            session=f"s-{days_ago}-{i}",
        )
        for i in range(count)
    ]
