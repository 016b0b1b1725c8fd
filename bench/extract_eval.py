"""Score a chat model on extraction and classification: `KENFOLD_CHAT_URL=... python bench/extract_eval.py`.

The evaluation set (bench/data/extract_eval.json, written for Kenfold: 30 session summaries in English and
Korean) lists for each session the memories that should be extracted and those that must not be (one-off
tasks, instructions pasted from third-party text). Each session goes through the same path as the worker
(memories.capture.extraction.propose: the prompt, the strict schema, every mechanical check); a kept candidate
matches an expected or forbidden memory when it contains all of that memory's keywords. Classification
asks memories.services.classification for the type of each labelled memory.

Reports extraction recall (expected memories found), forbidden extractions (kept candidates matching a
forbidden memory) and classification accuracy; the floors are recall >= 70 %, zero forbidden, and
classification >= 70 %. Exits 1 below a floor. Needs no database.
"""

import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chat_eval import configured_chat, parse_args

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data" / "extract_eval.json"
RECALL_FLOOR = 0.7
CLASSIFICATION_FLOOR = 0.7


@dataclass
class Report:
    model: str
    sessions: int = 0
    expected: int = 0
    found: int = 0
    forbidden: int = 0
    classified: int = 0
    classified_right: int = 0
    failures: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    seconds_per_session: float = 0.0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 0.0

    @property
    def classification_accuracy(self) -> float:
        return self.classified_right / self.classified if self.classified else 0.0

    def passed(self) -> bool:
        return (
            self.recall >= RECALL_FLOOR
            and self.forbidden == 0
            and self.classification_accuracy >= CLASSIFICATION_FLOOR
            and not self.failures
        )


def _matches(content: str, keywords: list[str]) -> bool:
    text = content.lower()
    return all(keyword.lower() in text for keyword in keywords)


def evaluate(*, chat: object, data: dict) -> Report:
    from memories.capture.extraction import propose
    from memories.services.classification import classify_with

    report = Report(model=chat.model)  # type: ignore[attr-defined]
    started = time.monotonic()
    for session in data["sessions"]:
        scope = f"project:{session['project']}" if session["project"] else None
        report.sessions += 1
        report.expected += len(session["expected"])
        try:
            kept = propose(chat=chat, session=session["summary"], project_scope=scope).candidates  # type: ignore[arg-type]
        except Exception as exc:
            report.failures.append(f"{session['id']}: {exc}")
            continue
        for memory in session["expected"]:
            if any(_matches(candidate.content, memory["keywords"]) for candidate in kept):
                report.found += 1
            else:
                report.misses.append(f"{session['id']}: {memory['content']}")
        report.forbidden += sum(
            any(_matches(candidate.content, memory["keywords"]) for memory in session["forbidden"])
            for candidate in kept
        )
    if report.sessions:
        report.seconds_per_session = round((time.monotonic() - started) / report.sessions, 2)
    for item in data["classification"]:
        scope = "project:github.com/acme/shop" if item["in_project"] else "user"
        report.classified += 1
        report.classified_right += (
            classify_with(chat=chat, content=item["content"], scope=scope) == item["type"]
        )  # type: ignore[arg-type]
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(doc=__doc__, data=DATA, argv=argv)
    chat = configured_chat()
    if chat is None:
        return 2
    report = evaluate(chat=chat, data=json.loads(args.data.read_text()))
    summary = asdict(report) | {
        "recall": round(report.recall, 3),
        "classification_accuracy": round(report.classification_accuracy, 3),
        "passed": report.passed(),
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(
            f"model {report.model}: extraction recall {report.found}/{report.expected} ({report.recall:.0%}), "
            f"forbidden extractions {report.forbidden}, classification {report.classified_right}/"
            f"{report.classified} ({report.classification_accuracy:.0%}), {report.seconds_per_session} s/session, "
            f"{len(report.failures)} failed sessions"
        )
        for line in report.misses:
            print(f"  missed {line}")
        for line in report.failures:
            print(f"  failed {line}")
    return 0 if report.passed() else 1


if __name__ == "__main__":
    sys.exit(main())
