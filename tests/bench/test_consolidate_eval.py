"""bench/consolidate_eval.py end to end against a scripted chat server: a harness check, not a model score.

A "model" that answers every label right must score 20/20 with a valid digest; a model that always says
"same, keep A" (judging by position, not content) must be caught by the second reading: no false
retirement, every duplicate and conflict missed, and the run below the floor.
"""

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from consolidation import prompts
from tests.provider_servers import Received, Reply, chat_reply, provider_server

# Checks the evaluation's harness, not the product: `make test-bench` runs it, `make test` does not.
pytestmark = pytest.mark.bench

REPO = Path(__file__).resolve().parents[2]
DATA = json.loads((REPO / "bench" / "data" / "consolidate_eval.json").read_text())
DIGEST = (
    "- Rewrote checkout in src/cart/checkout.ts and fixed coupon rounding (PR #412, tested in "
    "tests/cart/coupon.test.ts).\n- Decided: prices stay integer cents.\n- Released v2.3.1.\n"
    "- Open: the Safari payment sheet flickers (src/cart/PaymentSheet.tsx)."
)
_MEMORY = re.compile(r"<memory>\n(.*?)\n</memory>", re.DOTALL)


def labelled(received: Received) -> Reply:
    system, user = (m["content"] for m in received.json["messages"])
    if system == prompts.DIGEST_SYSTEM_PROMPT:
        return chat_reply({"digest": DIGEST})
    a, b = _MEMORY.findall(user)
    pair = next(p for p in DATA["pairs"] if {p["a"]["content"], p["b"]["content"]} == {a, b})
    swapped = a == pair["b"]["content"]
    relation = pair["label"]
    keep = pair.get("keep", "B")
    if relation == "conflict":
        keep = "A" if swapped else "B"
    elif relation == "same" and swapped:
        keep = "A" if keep == "B" else "B"
    return chat_reply({"relation": relation, "keep": keep, "reason": pair["why"]})


def position_biased(received: Received) -> Reply:
    if received.json["messages"][0]["content"] == prompts.DIGEST_SYSTEM_PROMPT:
        return chat_reply({"digest": DIGEST})
    return chat_reply({"relation": "same", "keep": "A", "reason": "A"})


def score(handler: Callable[[Received], Reply]) -> tuple[int, dict]:
    with provider_server(handler) as server:
        env = os.environ | {"KENFOLD_CHAT_URL": server.url, "KENFOLD_CHAT_MODEL": "scripted"}
        done = subprocess.run(
            [sys.executable, "bench/consolidate_eval.py", "--json"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_eval_set_has_twenty_labelled_pairs_in_two_languages_and_a_digest() -> None:
    pairs = DATA["pairs"]
    assert len(pairs) == 20
    assert {p["label"] for p in pairs} == {"same", "conflict", "distinct"}
    assert all(p.get("keep") in ("A", "B") for p in pairs if p["label"] == "same")
    korean = [
        p for p in pairs if any("\uac00" <= ch <= "\ud7a3" for ch in p["a"]["content"] + p["b"]["content"])
    ]
    assert 6 <= len(korean) < len(pairs)
    assert len(DATA["digest"]["sessions"]) == 6


def test_a_model_that_answers_every_label_right_meets_the_floor() -> None:
    status, report = score(labelled)
    assert status == 0, report
    assert (report["correct"], report["pairs"], report["false_retire"]) == (20, 20, 0)
    distinct = sum(p["label"] == "distinct" for p in DATA["pairs"])
    assert report["chat_calls"] == distinct + 2 * (20 - distinct) + 1, "one call per distinct pair"
    assert report["digest_valid"] is True and report["passed"] is True


def test_a_model_judging_by_position_retires_nothing_and_fails_the_floor() -> None:
    status, report = score(position_biased)
    assert status == 1
    distinct = sum(p["label"] == "distinct" for p in DATA["pairs"])
    assert (report["correct"], report["false_retire"], report["missed"]) == (distinct, 0, 20 - distinct)
    assert report["passed"] is False


def test_the_eval_needs_a_chat_model() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KENFOLD_CHAT_URL"}
    done = subprocess.run(
        [sys.executable, "bench/consolidate_eval.py"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 2 and "set KENFOLD_CHAT_URL" in done.stderr
