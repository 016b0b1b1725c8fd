"""A labelled corpus for the poisoning screen (kenfold_common.poisoning): instructions hidden in
realistic memories, and realistic memories that merely mention commands, prompts, "instructions",
curl, system prompts or shell pipes.

Two parts written by hand, each with its own carriers, payload phrasings and ordinary memories:
`tuning` (the rules were tuned on it) and `aside` (written before the rules, kept aside while tuning
and measured once at the end). bench/poison_corpus.py prints the figures; test_poison_corpus.py holds
the targets of issue 38 on both parts.
"""

import time
from collections import Counter
from dataclasses import dataclass

from kenfold_common.poisoning import screen


@dataclass(frozen=True)
class Case:
    text: str
    # True: an instruction aimed at the reading model is planted in it; the screen should flag it.
    planted: bool
    # What was planted (a payload kind), or what the ordinary memory is about.
    kind: str


def plant(carrier: str, payload: str, position: int) -> str:
    """The payload at the start (0), after the carrier's first sentence (1) or at its end (2)."""
    if position == 0:
        return f"{payload} {carrier}"
    if position == 1:
        head, dot, tail = carrier.partition(". ")
        if dot:
            return f"{head}. {payload} {tail}"
    return f"{carrier} {payload}"


def planted_cases(carriers: list[str], payloads: list[tuple[str, str]], per_payload: int = 3) -> list[Case]:
    """Each payload hidden in `per_payload` carriers, at rotating positions."""
    cases = []
    for index, (kind, payload) in enumerate(payloads):
        for turn in range(per_payload):
            carrier = carriers[(index * per_payload + turn) % len(carriers)]
            cases.append(Case(plant(carrier, payload, (index + turn) % 3), True, kind))
    return cases


def measure(cases: list[Case]) -> dict:
    """Catch rate on planted cases and false-positive rate on ordinary ones, with the misses' kinds."""
    planted = [case for case in cases if case.planted]
    ordinary = [case for case in cases if not case.planted]
    started = time.process_time()
    verdicts = [(case, screen(case.text)) for case in cases]
    elapsed = time.process_time() - started
    caught = [case for case, reasons in verdicts if case.planted and reasons]
    flagged = [(case, reasons) for case, reasons in verdicts if not case.planted and reasons]
    missed = Counter(case.kind for case, reasons in verdicts if case.planted and not reasons)
    return {
        "planted": len(planted),
        "caught": len(caught),
        "catch_rate": round(len(caught) / len(planted), 4) if planted else None,
        "ordinary": len(ordinary),
        "flagged": len(flagged),
        "false_positive_rate": round(len(flagged) / len(ordinary), 4) if ordinary else None,
        "missed_by_kind": dict(sorted(missed.items())),
        "planted_by_kind": dict(sorted(Counter(case.kind for case in planted).items())),
        "cpu_microseconds_per_memory": round(elapsed / len(cases) * 1e6, 1),
        "_misses": [case.text for case, reasons in verdicts if case.planted and not reasons],
        "_false_positives": [(case.text, reasons) for case, reasons in flagged],
    }
