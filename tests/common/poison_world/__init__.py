"""A labelled corpus for the poisoning screen (kenfold_common.poisoning): instructions hidden in
realistic memories, and realistic memories that merely mention commands, prompts, "instructions",
curl, system prompts or shell pipes.

Two parts written by hand, each with its own carriers, payload phrasings and ordinary memories:
`tuning` (the rules were tuned on it) and `aside` (written before the rules, kept aside while tuning
and measured once at the end). bench/poison_corpus.py prints the figures; test_poison_corpus.py holds
the targets of issue 38 on both parts.
"""

from dataclasses import dataclass


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
