"""bench/extract_eval.py end to end against a scripted chat server: a harness check, not a model score.

The scripted "model" answers every expected memory and, like a model fooled by the session, proposes
each pasted instruction as a project rule and each task as a task; the harness must find every expected
memory and count no forbidden extraction, because the mechanical checks drop what the model let through.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.provider_servers import Received, Reply, chat_reply, provider_server

# Checks the evaluation's harness, not the product: `make test-bench` runs it, `make test` does not.
pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
DATA = json.loads((REPO / "bench" / "data" / "extract_eval.json").read_text())


def scripted(received: Received) -> Reply:
    request = received.json
    user = request["messages"][1]["content"]
    if request["response_format"]["json_schema"]["name"] == "classification":
        item = next(i for i in DATA["classification"] if i["content"] in user)
        return chat_reply({"type": item["type"], "confidence": 0.9})
    session = next(s for s in DATA["sessions"] if s["summary"].splitlines()[2] in user)
    items = [
        {**{k: m[k] for k in ("category", "content", "evidence")}, "basis": "stated"}
        for m in session["expected"]
    ]
    for memory in session["forbidden"]:
        category = "project_rule" if memory["kind"] == "pasted" else "task_or_status"
        items.append(
            {
                "category": category,
                "content": memory["content"],
                "evidence": memory["evidence"],
                "basis": "stated",
            }
        )
    return chat_reply({"items": items})


def test_the_eval_set_is_large_enough_and_bilingual() -> None:
    sessions = DATA["sessions"]
    assert len(sessions) >= 30
    korean = [s for s in sessions if any("\uac00" <= ch <= "\ud7a3" for ch in s["summary"])]
    assert 10 <= len(korean) < len(sessions)
    assert sum(len(s["expected"]) for s in sessions) >= 20
    assert {f["kind"] for s in sessions for f in s["forbidden"]} == {"pasted", "task"}


def test_the_eval_runs_end_to_end_against_a_scripted_server() -> None:
    with provider_server(scripted) as server:
        env = os.environ | {"KENFOLD_CHAT_URL": server.url, "KENFOLD_CHAT_MODEL": "scripted"}
        done = subprocess.run(
            [sys.executable, "bench/extract_eval.py", "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["model"] == "scripted" and report["sessions"] == len(DATA["sessions"])
    assert (report["found"], report["expected"], report["forbidden"]) == (22, 22, 0)
    assert (report["classified_right"], report["classified"]) == (12, 12)
    assert report["passed"] is True and report["failures"] == []


def test_the_eval_needs_a_chat_model() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KENFOLD_CHAT_URL"}
    done = subprocess.run(
        [sys.executable, "bench/extract_eval.py"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "set KENFOLD_CHAT_URL" in done.stderr
