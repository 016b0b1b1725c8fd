"""Score a chat model on consolidation: `KENFOLD_CHAT_URL=... python bench/consolidate_eval.py`.

The evaluation set (bench/data/consolidate_eval.json, written for Kenfold: 20 pairs in English and
Korean labelled same, conflict or distinct, plus one digest of 6 sessions) goes through the production
path of consolidation.prompts: the judge prompt read twice with A and B swapped and the rule that
combines the readings, then the digest prompt and its mechanical validation.

Per pair the outcome is one of: correct (the label, and for "same" the memory the label keeps); false
retirement (a distinct pair proposed as duplicate or conflict: applying it would retire a memory that
is still true); wrong keep (a duplicate or conflict that retires the memory the label keeps); missed (a
duplicate or conflict judged distinct: nothing proposed); other (a duplicate read as conflict or the
reverse, keeping the right memory). The floor is the original's shipped run: every pair correct, no
false retirement, and a digest that passes validation and names what the sessions must be remembered
by. Exits 1 below the floor. Needs no database.
"""

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from chat_eval import configured_chat, parse_args

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data" / "consolidate_eval.json"
AGENT_A, AGENT_B = "claude-code", "codex"


@dataclass
class Report:
    model: str
    pairs: int = 0
    correct: int = 0
    false_retire: int = 0
    wrong_keep: int = 0
    missed: int = 0
    other: int = 0
    chat_calls: int = 0
    seconds_per_pair: float = 0.0
    digest_valid: bool = False
    digest_problem: str = ""
    digest_seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def passed(self) -> bool:
        return (
            self.correct == self.pairs and self.false_retire == 0 and self.digest_valid and not self.failures
        )


def _date(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _outcome(label: str, keep: str | None, relation: str, kept: str | None) -> str:
    """Compare one verdict with its label; ``keep``/``kept`` are "A" (older) or "B" (newer)."""
    expected = {"same": "duplicate", "conflict": "conflict", "distinct": "distinct"}[label]
    wanted = keep if label == "same" else ("B" if label == "conflict" else None)
    if label == "distinct":
        return "correct" if relation == "distinct" else "false_retire"
    if relation == "distinct":
        return "missed"
    if kept != wanted:
        return "wrong_keep"
    return "correct" if relation == expected else "other"


def evaluate(*, chat: object, data: dict) -> Report:
    from consolidation import prompts
    from memories.providers.chat import ChatError

    report = Report(model=chat.model)  # type: ignore[attr-defined]
    written_a, written_b = _date(data["a_written"]), _date(data["b_written"])
    started = time.monotonic()
    for pair in data["pairs"]:
        report.pairs += 1
        older = prompts.Shown(
            type=pair["a"]["type"], content=pair["a"]["content"], created_at=written_a, agent=AGENT_A
        )
        newer = prompts.Shown(
            type=pair["b"]["type"], content=pair["b"]["content"], created_at=written_b, agent=AGENT_B
        )
        try:
            first = prompts.judge(chat=chat, a=older, b=newer)  # type: ignore[arg-type]
            report.chat_calls += 1
            second = None
            if first.relation != "distinct":
                second = prompts.judge(chat=chat, a=newer, b=older)  # type: ignore[arg-type]
                report.chat_calls += 1
        except ChatError as exc:
            # Production records an unusable answer as distinct; here it is reported as a failure too.
            report.failures.append(f"{pair['id']}: {exc}")
            continue
        verdict = prompts.combine(first, second)
        kept = None if verdict.keep is None else ("A" if verdict.keep == "older" else "B")
        outcome = _outcome(pair["label"], pair.get("keep"), verdict.relation, kept)
        setattr(report, outcome, getattr(report, outcome) + 1)
        if outcome != "correct":
            report.wrong.append(
                f"{pair['id']}: labelled {pair['label']}, judged {verdict.relation} ({outcome})"
            )
    if report.pairs:
        report.seconds_per_pair = round((time.monotonic() - started) / report.pairs, 2)
    digest = data["digest"]
    sessions = [
        prompts.Session(content=s["content"], created_at=_date(s["date"]), agent=s["agent"])
        for s in digest["sessions"]
    ]
    prompt = prompts.digest_prompt(project_label=digest["project"], sessions=sessions)
    started = time.monotonic()
    try:
        text = prompts.write_digest(chat=chat, prompt=prompt)  # type: ignore[arg-type]
        report.chat_calls += 1
        refusal = prompts.digest_problem(digest=text, prompt=prompt)
        problem = refusal[1] if refusal is not None else None
        if problem is None:
            absent = [token for token in digest["must_mention"] if token.lower() not in text.lower()]
            problem = f"the digest leaves out {', '.join(absent)}" if absent else None
    except ChatError as exc:
        problem = f"unusable answer: {exc}"
    report.digest_seconds = round(time.monotonic() - started, 2)
    report.digest_valid, report.digest_problem = problem is None, problem or ""
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(doc=__doc__, data=DATA, argv=argv)
    chat = configured_chat()
    if chat is None:
        return 2
    report = evaluate(chat=chat, data=json.loads(args.data.read_text()))
    if args.json:
        print(json.dumps(asdict(report) | {"passed": report.passed()}, ensure_ascii=False))
    else:
        print(
            f"model {report.model}: {report.correct}/{report.pairs} correct, {report.false_retire} false "
            f"retirements, {report.wrong_keep} wrong keeps, {report.missed} missed, {report.other} other; "
            f"{report.seconds_per_pair} s/pair ({report.chat_calls} chat calls); digest "
            f"{'valid' if report.digest_valid else 'refused: ' + report.digest_problem} "
            f"({report.digest_seconds} s)"
        )
        for line in report.wrong:
            print(f"  {line}")
        for line in report.failures:
            print(f"  failed {line}")
    return 0 if report.passed() else 1


if __name__ == "__main__":
    sys.exit(main())
