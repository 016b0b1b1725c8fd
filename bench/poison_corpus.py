"""The poisoning screen on its labelled corpus: how many planted instructions it flags (catch rate) and
how many ordinary memories it flags (false positives), per part and per kind.

    .venv/bin/python -m bench.poison_corpus [--part tuning|aside|all] [--json] [--misses]

The corpus (bench/support/poison_world) has a tuning part, on which the rules were adjusted, and an aside
part, written before the rules and measured once; docs/security.md gives both figures.
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.support.poison_world import aside, measure, tuning  # noqa: E402

PARTS = {"tuning": tuning.cases, "aside": aside.cases}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all")
    parser.add_argument("--json", action="store_true", help="one JSON object per part")
    parser.add_argument("--misses", action="store_true", help="print the texts missed and wrongly flagged")
    args = parser.parse_args()
    parts = list(PARTS) if args.part == "all" else [args.part]
    results = {part: measure(PARTS[part]()) for part in parts}
    if args.json:
        print(
            json.dumps({p: {k: v for k, v in r.items() if not k.startswith("_")} for p, r in results.items()})
        )
        return
    for part, r in results.items():
        print(
            f"{part}: caught {r['caught']}/{r['planted']} planted ({r['catch_rate']:.1%}), "
            f"flagged {r['flagged']}/{r['ordinary']} ordinary ({r['false_positive_rate']:.1%}), "
            f"{r['cpu_microseconds_per_memory']} µs of CPU per memory"
        )
        if r["missed_by_kind"]:
            print(f"  missed by kind: {r['missed_by_kind']}")
        if args.misses:
            for text in r["_misses"]:
                print(f"  MISSED {text!r}")
            for text, reasons in r["_false_positives"]:
                print(f"  FLAGGED {reasons} {text!r}")


if __name__ == "__main__":
    main()
