"""Project identity as a fixed point, with many more examples than `make test` runs and a fresh seed.

    .venv/bin/python bench/identity_fixed_point.py [--examples 20000]

The inputs and the property are the test's (bench/support/identity_inputs.py); a failure prints
the smallest input hypothesis found, to add to the test's examples.
"""

import argparse
import sys
import time
from pathlib import Path

from hypothesis import given, settings

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client"))

from bench.support.identity_inputs import assert_fixed_point, project_inputs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=20_000)
    args = parser.parse_args()

    @settings(max_examples=args.examples, deadline=None, database=None)
    @given(project_inputs)
    def fixed_point(project: str) -> None:
        assert_fixed_point(project)

    started = time.monotonic()
    fixed_point()
    print(
        f"{args.examples} examples: normalize_project is a fixed point ({time.monotonic() - started:.1f} s)"
    )


if __name__ == "__main__":
    main()
