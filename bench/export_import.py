"""Every export imports, with many more generated stores than `make test` runs and a fresh seed.

    .venv/bin/python -m bench.export_import [--examples 300] [--same-seed]

Runs tests/archive/test_every_export_imports.py's property (stores built through the services, exported,
imported, compared column by column) through scripts/test.sh, so it gets a throwaway embedded PostgreSQL
of its own like `make test`. A failure prints the smallest store hypothesis found.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--examples", type=int, default=300, help="generated stores to round-trip (default 300)"
    )
    parser.add_argument(
        "--same-seed", action="store_true", help="the test's fixed seed instead of a fresh one"
    )
    args = parser.parse_args()
    env = os.environ | {"HYPOTHESIS_EXAMPLES": str(args.examples)}
    if not args.same_seed:
        env["HYPOTHESIS_FRESH_SEED"] = "1"
    test = "tests/archive/test_every_export_imports.py::test_every_generated_store_exports_and_imports_identically"
    # One process: the property is one test, and -n would only add a second cluster database.
    result = subprocess.run(["scripts/test.sh", "-n", "0", "-q", test], cwd=REPO, env=env, check=False)
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
