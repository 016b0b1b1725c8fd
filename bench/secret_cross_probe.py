"""How far the secret filter carries beyond the pairings it was taught: each plain credential of one
independent part (tests/common/secret_independent) put into the plain contexts of the other parts, and each
one disguised in every way issue 37 names at a random place inside it. A part's own first measurement pairs
values and contexts the rules have seen together; the next writer's corpus will not.

    .venv/bin/python -m bench.secret_cross_probe [--rules path/to/secrets.py] [--contexts N] [--list N]

--rules measures another version of the filter (``git show main:client/kenfold_common/secrets.py``).
Only values whose own text the rules catch are moved, so a miss is the new pairing's, not the value's.
"""

import argparse
import base64
import random
import re
import sys
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client"))

from bench.secret_corpus import load_rules  # noqa: E402
from tests.common.secret_independent.part_aside import aside_part  # noqa: E402
from tests.common.secret_independent.part_dev import dev_part  # noqa: E402
from tests.common.secret_independent.part_fifth import fifth_part  # noqa: E402
from tests.common.secret_independent.part_fourth import fourth_part  # noqa: E402
from tests.common.secret_independent.part_sixth import sixth_part  # noqa: E402
from tests.common.secret_independent.part_third import third_part  # noqa: E402
from tests.common.secret_world.texts import Sample  # noqa: E402

PARTS: dict[str, Callable[[], list[Sample]]] = {
    "dev": dev_part,
    "aside": aside_part,
    "third": third_part,
    "fourth": fourth_part,
    "fifth": fifth_part,
    "sixth": sixth_part,
}
# A simple value: one run of key characters, not a URL or a connection string (whose pieces would be
# moved apart).
SIMPLE = re.compile(r"[A-Za-z0-9_+=.-][A-Za-z0-9_+/=.-]*")
RUN = re.compile(r"[A-Za-z0-9+/=_.~!*#$%&@^:-]+")
FULLWIDTH = {
    c: chr(ord(c) + 0xFEE0) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
}
SLOT = "\x00"


def value_and_context(sample: Sample) -> tuple[str, str] | None:
    """The whole value the sample's secret is part of, and the text with a slot where it stood."""
    at = sample.text.find(sample.secret)
    if at < 0:
        return None
    for run in RUN.finditer(sample.text):
        if run.start() <= at and run.end() >= at + len(sample.secret):
            value, start = run[0].rstrip(".,;:"), run.start()
            # "NAME=value" and "name:value" keep the name in the context.
            for separator in ("=", ":"):
                head, _, tail = value.partition(separator)
                named = re.fullmatch(r"[A-Za-z_][A-Za-z_.-]{0,39}", head) and not tail.startswith("/")
                if tail and sample.secret in tail and named:
                    start, value = start + len(head) + 1, tail
            if not SIMPLE.fullmatch(value) or len(value) < 16:
                return None
            return value, sample.text[:start] + SLOT + sample.text[start + len(value) :]
    return None


def disguises(rng: random.Random, value: str) -> Iterator[tuple[str, str]]:
    cut = rng.randrange(4, len(value) - 4)
    yield (
        "zero-width",
        value[:cut] + rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) + value[cut:],
    )
    yield "soft hyphen", value[:cut] + "\u00ad" + value[cut:]
    yield "bidi", value[:cut] + rng.choice(["\u202e", "\u2066", "\u202d"]) + value[cut:]
    yield "fullwidth, all", "".join(FULLWIDTH.get(c, c) for c in value)
    yield (
        "fullwidth, six",
        value[:cut] + "".join(FULLWIDTH.get(c, c) for c in value[cut : cut + 6]) + value[cut + 6 :],
    )
    yield "percent, every character", "".join(f"%{ord(c):02X}" for c in value)
    yield "percent, quoted", urllib.parse.quote(value, safe="")
    yield "split", value[:cut] + "\n" + value[cut:]
    yield "split, indented", value[:cut] + "\n    " + value[cut:]
    yield "split, backslash", value[:cut] + "\\\n  " + value[cut:]
    yield "base64", base64.b64encode(value.encode()).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules")
    parser.add_argument("--contexts", type=int, default=6, help="other parts' contexts per value")
    parser.add_argument("--list", type=int, default=0, help="print this many misses of each probe")
    args = parser.parse_args()
    rules = load_rules(args.rules)
    started = time.monotonic()
    pairs: dict[str, list[tuple[str, str, str]]] = {}
    for name, build in PARTS.items():
        pairs[name] = []
        for sample in build():
            if not (sample.is_credential and sample.disguise == "plain" and rules.find_secrets(sample.text)):
                continue
            if (found := value_and_context(sample)) is not None:
                pairs[name].append((sample.kind, *found))
    rng = random.Random(7)
    moved, moved_missed, missed_kinds, examples = 0, 0, Counter[str](), []
    for name, own in pairs.items():
        others = [context for other, theirs in pairs.items() if other != name for _, _, context in theirs]
        for kind, value, _ in own:
            for context in rng.sample(others, args.contexts):
                text = context.replace(SLOT, value)
                moved += 1
                if not rules.find_secrets(text):
                    moved_missed += 1
                    missed_kinds[kind] += 1
                    examples.append(text)
    values = sum(len(own) for own in pairs.values())
    print(
        f"values moved: {values} plain credentials of 6 parts, each into {args.contexts} contexts of the others"
    )
    print(
        f"caught in another part's context: {moved - moved_missed}/{moved} = {1 - moved_missed / moved:.2%}"
    )
    print("missed kinds: " + ", ".join(f"{kind} {count}" for kind, count in missed_kinds.most_common(12)))
    for text in rng.sample(examples, min(args.list, len(examples))):
        print(f"  MISS {text[:160]!r}")
    total, missed = Counter[str](), Counter[str]()
    disguised_examples = []
    for own in pairs.values():
        for _kind, value, context in own:
            for disguise, hidden in disguises(rng, value):
                total[disguise] += 1
                text = context.replace(SLOT, hidden)
                if not rules.find_secrets(text):
                    missed[disguise] += 1
                    disguised_examples.append(text)
    print("disguised in place, caught:")
    for disguise, count in total.items():
        print(f"  {disguise}: {count - missed[disguise]}/{count} = {1 - missed[disguise] / count:.2%}")
    for text in rng.sample(disguised_examples, min(args.list, len(disguised_examples))):
        print(f"  MISS {text[:160]!r}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
