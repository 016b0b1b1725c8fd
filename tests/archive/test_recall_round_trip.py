"""Beyond the original (issue 13, item 5): an archive exported from one Kenfold and imported into an empty
one answers every `recall` of the dev set with the same ids in the same order once the backfill has run.

The first Kenfold is the test database; the second is another process on its own, new database in the
same throwaway cluster, which migrates, imports, runs `reindex` and recalls. Both embed with the same
fake embeddings server (tests/provider_servers.py).
"""

import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from bench.archive import sibling_database
from bench.retrieval_eval import load_kenfold_format
from memories.models import Memory
from memories.providers import configured
from memories.search.embedding_store import backfill
from tests.archive.dev_recall import DEV_SET, REPO, rankings
from tests.provider_servers import openai_embeddings, provider_server

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_an_imported_archive_answers_every_dev_recall_like_the_original(
    tmp_path: Path, provider_env: Callable[..., None]
) -> None:
    embedder = {"KENFOLD_EMBED_MODEL": "fake", "KENFOLD_EMBED_NAME": "fake-embed"}
    with provider_server(openai_embeddings) as server:
        provider_env(KENFOLD_EMBED_URL=server.url, KENFOLD_EMBED=None, **embedder)
        # Loaded as the evaluation harness loads it: through remember, backdated, then embedded in batches.
        with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
            load_kenfold_format(json.loads(DEV_SET.read_text()), now=NOW)
        for model in configured.embedders():
            backfill(embedder=model)
        original = rankings(now=NOW)
        assert sum(len(ids) for ids in original.values()) > 0
        archive = tmp_path / "dev.jsonl"
        call_command("export", "--out", str(archive), stdout=io.StringIO())

        with sibling_database(f"kenfold_second_{uuid.uuid4().hex[:8]}") as url:
            env = {key: value for key, value in os.environ.items() if not key.startswith("KENFOLD_")}
            env |= {
                "KENFOLD_HOME": str(tmp_path / "second"),
                "KENFOLD_EMBED_URL": server.url,
                "KENFOLD_DATABASE_URL": url,
                "DJANGO_SETTINGS_MODULE": "kenfold.settings",
                "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "client")]),
                **embedder,
            }
            child = subprocess.run(
                [sys.executable, "-m", "tests.archive.dev_recall", str(archive), NOW.isoformat()],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
    assert child.returncode == 0, child.stderr[-3000:]
    assert f"Imported {Memory.objects.count()} memories" in child.stderr
    assert "Embedded" in child.stderr
    imported = json.loads(child.stdout)
    assert imported.keys() == original.keys()
    differing = [query for query in original if imported[query] != original[query]]
    assert differing == [], f"{len(differing)} of {len(original)} queries ranked differently: " + "; ".join(
        f"{query}: {original[query]} became {imported[query]}" for query in differing
    )
