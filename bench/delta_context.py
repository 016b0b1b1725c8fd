"""Delta context: what a second get_context costs when the agent passes back the `state` of the first.

    .venv/bin/python bench/delta_context.py [bench/data/delta_project.json] [--budget 2000,8000] [--vectors]
        [--json OUT]

Builds a realistic project store through the service layer in a throwaway embedded cluster (a Django
service's preferences, rules, code facts, session summaries and a handoff: bench/data/delta_project.json),
then, for each budget, plays one agent session: get_context for a task (no state), the same call again with
the state, a second task with the state, and a call after the store changed (a rule added, one
superseded). Each answer is measured as the JSON text the MCP tool returns (bytes; tokens estimated with
the server's own rule, UTF-8 bytes / 3) with how many memories it sent in full and as references.
Without --vectors, search is full-text only (no embedding model is loaded).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", default=REPO / "bench" / "data" / "delta_project.json")
    parser.add_argument("--budget", default="2000,8000", help="comma-separated budget_tokens values")
    parser.add_argument("--vectors", action="store_true", help="embed with the configured models")
    parser.add_argument("--json", type=Path, help="write the report here")
    return parser.parse_args()


def load_project(data: dict[str, Any]) -> dict[str, Any]:
    """Store the project as agents would have written it; returns the ids the later steps need."""
    from access.caller import Caller
    from memories.services.handoff import handoff_create
    from memories.services.remember import memory_remember
    from memories.services.review import memory_approve

    agent = Caller(agent="claude-code")
    project = data["project"]
    for text in data["preferences"]:
        memory_approve(memory_id=memory_remember(caller=agent, content=text, type="preference").id)
    rules = [
        memory_remember(caller=agent, content=text, type="project", project=project).id
        for text in data["rules"]
    ]
    for kind, text in data["facts"]:
        memory_remember(caller=agent, content=text, type=kind, project=project)
    for text in data["sessions"]:
        memory_remember(caller=agent, content=text, type="episodic", project=project)
    handoff_create(caller=agent, project=project, **data["handoff"])
    return {"rules": rules}


def measure(output: Any) -> dict[str, Any]:
    from memories.schemas import MemoryRef

    # Exactly what the MCP tool sends as text (edge.mcp.tools.run_service).
    text = json.dumps(output.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    items = output.sent_items()
    return {
        "bytes": len(text.encode()),
        "tokens": len(text.encode()) // 3,
        "full": sum(not isinstance(item, MemoryRef) for item in items),
        "references": sum(isinstance(item, MemoryRef) for item in items),
        "removed": len(output.removed or []),
        "truncated": bool(output.truncated),
    }


def session(data: dict[str, Any], ids: dict[str, Any], budget: int) -> list[dict[str, Any]]:
    from access.caller import Caller
    from memories.services.delivery import context_deliver
    from memories.services.remember import memory_remember
    from memories.services.review import memory_forget

    agent, writer = Caller(agent="codex"), Caller(agent="claude-code")
    project = data["project"]
    first_task, second_task = data["tasks"]
    steps = []

    def call(label: str, task: str, state: str | None) -> str:
        output = context_deliver(caller=agent, task=task, project=project, budget_tokens=budget, state=state)
        steps.append({"step": label, "budget": budget, **measure(output)})
        return output.state

    state = call("1. first call (no state)", first_task, None)
    state = call("2. same task, with state", first_task, state)
    state = call("3. another task, with state", second_task, state)
    later = data["later"]
    # Written under this budget's session only: each session starts from its own copy of the changes.
    added = memory_remember(caller=writer, content=later["new_rule"], project=project)
    replaced = memory_remember(
        caller=writer,
        content=later["replacement"],
        project=project,
        supersedes=ids["rules"][later["supersedes_rule"]],
    )
    call("4. after a rule was added and one superseded", first_task, state)
    # Undo, so the next budget's session sees the same store.
    memory_forget(caller=writer, memory_id=added.id, reason="bench")
    memory_forget(caller=writer, memory_id=replaced.id, reason="bench")
    from memories.models import Memory

    Memory.objects.filter(pk=ids["rules"][later["supersedes_rule"]]).update(status="active")
    return steps


def main() -> int:
    args = parse_args()
    home = None
    if not os.environ.get("KENFOLD_DATABASE_URL"):
        home = Path(tempfile.mkdtemp(prefix="kenfold-delta-"))
        os.environ["KENFOLD_HOME"] = str(home)
        os.environ["KENFOLD_EMBEDDED_DURABLE"] = "false"
    if not args.vectors:
        os.environ["KENFOLD_EMBED"] = "off"
    os.environ.setdefault("KENFOLD_LOG_LEVEL", "warning")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    import django

    django.setup()
    from django.core.management import call_command

    try:
        call_command("migrate", interactive=False, verbosity=0)
        data = json.loads(args.data.read_text())
        ids = load_project(data)
        size = sum(len(data[key]) for key in ("preferences", "rules", "facts", "sessions")) + 1
        report = {"memories": size, "steps": []}
        for budget in (int(value) for value in args.budget.split(",")):
            report["steps"] += session(data, ids, budget)
    finally:
        from bench.retrieval_eval import close_throwaway

        close_throwaway(home)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    print(f"project store: {report['memories']} memories ({args.data.name})")
    print(f"{'budget':>6}  {'step':<46} {'bytes':>6} {'tokens':>6} {'full':>4} {'refs':>4} {'removed':>7}")
    for step in report["steps"]:
        flag = " truncated" if step["truncated"] else ""
        print(
            f"{step['budget']:>6}  {step['step']:<46} {step['bytes']:>6} {step['tokens']:>6} "
            f"{step['full']:>4} {step['references']:>4} {step['removed']:>7}{flag}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
