"""Which served memories a session reused (kenfold_client.usage), on a real Claude Code transcript
(tests/client/data/README.md says how it was recorded) and on the rules one at a time."""

import json
from pathlib import Path

from kenfold_client.hook import _served_records
from kenfold_client.usage import Served, served_in_answer, session_reuse, words

DATA = Path(__file__).parent / "data"
TRANSCRIPT = DATA / "claude_code_session.jsonl"
# The two rules SessionStart served in that session: the refund rule (its code reference
# app/payments/refund.py, which the agent then read and edited) and one about staging, never touched.
REFUND = "01a2490d-32fe-71e2-9883-87b50fd91350"
STAGING = "01a2490d-4484-7c59-8db0-9e0d3cae40bb"


def start_served() -> list[Served]:
    lines = [
        json.loads(line) for line in (DATA / "claude_code_session.kenfold.jsonl").read_text().splitlines()
    ]
    return [memory for line in lines if line["k"] == "served" for memory in _served_records(line["x"])]


def test_the_memory_whose_file_the_session_edited_is_reused_and_the_other_is_not() -> None:
    served = start_served()
    assert {memory.id for memory in served} == {REFUND, STAGING}
    assert session_reuse(served=served, transcript=TRANSCRIPT, final_response="Refunds are logged now.") == [
        REFUND
    ]


def test_what_the_agents_own_recall_served_counts_too() -> None:
    # Nothing from SessionStart: the refund rule is known only from the recall result in the transcript.
    assert session_reuse(served=[], transcript=TRANSCRIPT, final_response="") == [REFUND]


def test_a_tool_call_before_the_memory_was_served_does_not_count(tmp_path: Path) -> None:
    lines = TRANSCRIPT.read_text().splitlines()
    recall_at = next(
        i for i, line in enumerate(lines) if '"name":"mcp__plugin_kenfold_kenfold__recall"' in line
    )
    edits = [line for line in lines if '"name":"Edit"' in line or '"name":"Read"' in line]
    moved = tmp_path / "edited-first.jsonl"
    moved.write_text("\n".join(edits + [line for line in lines[: recall_at + 2] if line not in edits]) + "\n")
    assert session_reuse(served=[], transcript=moved, final_response="") == []


def test_the_final_response_reuses_by_id_path_or_most_of_the_words() -> None:
    rule = Served(
        id="m-1", words=words("Deploys run from the release branch after the payments tests pass"), paths=()
    )
    doc = Served(id="m-2", words=frozenset(), paths=("docs/deploy.md",))
    short = Served(id="m-3", words=words("Use tabs"), paths=())
    cited = Served(id="m-4", words=frozenset(), paths=())
    answer = (
        "I deployed from the release branch once the payments tests pass (see docs/deploy.md, m-4); use tabs."
    )
    assert session_reuse(served=[rule, doc, short, cited], transcript=None, final_response=answer) == [
        "m-1",
        "m-2",
        "m-4",
    ]
    assert session_reuse(served=[rule], transcript=None, final_response="Deploys are fine.") == []


def test_an_answer_gives_fingerprints_of_the_memories_with_content_only() -> None:
    answer = {
        "preferences": [],
        "recent": [],
        "project": [
            {
                "id": "a",
                "content": "Refunds go through app/payments/refund.py",
                "code_refs": [{"path": "app/payments/refund.py", "state": "current"}],
            },
            {"id": "held", "content_hash": "abc"},
        ],
        "relevant": [{"id": "doc", "content": "How to deploy", "path": "docs/deploy.md"}],
        "handoff": {"id": "h", "content": "Half-way through the refund module"},
    }
    served = served_in_answer(answer)
    assert [(memory.id, memory.paths) for memory in served] == [
        ("a", ("app/payments/refund.py",)),
        ("doc", ("docs/deploy.md",)),
        ("h", ()),
    ]
    assert Served.from_json(served[0].as_json()) == served[0]
    assert served_in_answer("not an answer") == [] and Served.from_json({"id": 1}) is None
