"""The ``kenfold`` command (also ``python -m kenfold_client``): ``kenfold refs sync``.

Exit codes: 0 success, 2 wrong usage (options, URL, API key source), 1 any other failure. Errors go to
stderr as one line; ``--quiet`` silences the summary, never an error.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kenfold_client.errors import ClientError, UsageError
from kenfold_client.http import (
    API_KEY_VARIABLE,
    DEFAULT_MCP_URL,
    KenfoldApi,
    mcp_url_from_environment,
    read_api_key,
)
from kenfold_client.refs import refs_sync
from kenfold_common.text import for_terminal

# Run by hand or from a git hook, the sync may take longer than a session hook's 2 s: enough for the
# fetch and the report at their full HTTP timeout, with checking in between.
SYNC_BUDGET_SECONDS = 60.0
EXIT_FAILURE = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kenfold", description="Kenfold client for a git checkout.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    refs = commands.add_parser("refs", help="code references of memories", description="Code references.")
    refs_commands = refs.add_subparsers(dest="refs_command", metavar="COMMAND", required=True)
    sync = refs_commands.add_parser(
        "sync",
        help="check the project's code references against this checkout and report to the server",
        description=(
            "Fetch the files and symbols the project's memories refer to, hash them at HEAD (anchoring new "
            "ones, comparing anchored ones) and report the results to the Kenfold server."
        ),
    )
    sync.add_argument("--dir", type=Path, default=Path.cwd(), help="a directory in the checkout (default: .)")
    sync.add_argument("--url", help=f"the server's MCP URL (default: $KENFOLD_URL, else {DEFAULT_MCP_URL})")
    key = sync.add_mutually_exclusive_group()
    key.add_argument("--key-file", type=Path, help=f"file holding the API key (default: ${API_KEY_VARIABLE})")
    key.add_argument("--key-env", metavar="NAME", help="environment variable holding the API key")
    sync.add_argument("--quiet", action="store_true", help="print nothing on success")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    if not arguments.dir.is_dir():
        parser.error(f"--dir {arguments.dir} is not a directory")
    try:
        mcp_url = arguments.url or mcp_url_from_environment()
        api_key = read_api_key(key_file=arguments.key_file, key_env=arguments.key_env)
        with KenfoldApi(mcp_url=mcp_url, api_key=api_key) as api:
            outcome = refs_sync(directory=arguments.dir, api=api, budget_seconds=SYNC_BUDGET_SECONDS)
    except ClientError as error:
        # Errors and summaries carry text from the server and from git: escaped before they reach a terminal.
        print(for_terminal(f"kenfold: error: {error}"), file=sys.stderr)
        return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILURE
    if not arguments.quiet:
        print(for_terminal(outcome.summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
