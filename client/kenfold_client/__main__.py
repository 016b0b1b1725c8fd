"""The ``kenfold`` command (also ``python -m kenfold_client``): ``kenfold refs sync``, ``kenfold docs sync|lint``,
``kenfold hook`` and ``kenfold connect|doctor`` (kenfold_client.connect).

Exit codes: 0 success, 2 wrong usage (options, URL, API key source), 1 any other failure. Errors go to
stderr as one line; ``--quiet`` silences the summary, never an error. ``kenfold hook`` itself always exits
0: an agent reads another exit code as "block this prompt" or "the session failed".
"""

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from kenfold_client import connect, git
from kenfold_client.docs import default_selection, docs_sync
from kenfold_client.docs_lint import format_report, lint_folder
from kenfold_client.errors import ClientError, UsageError
from kenfold_client.hook import (
    DEFAULT_CLIENT_NAME,
    DEFAULT_SEND_SECONDS,
    MAX_INPUT_BYTES,
    HookOutcome,
    HookSettings,
    failure,
    run_hook,
)
from kenfold_client.hook_config import CLIENTS, hooks_config, install_hooks, settings_file, uninstall_hooks
from kenfold_client.hook_state import state_dir
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
# The options of `kenfold hook` that take a value (the next word, unless written `--url=...`).
HOOK_VALUE_OPTIONS = ("--url", "--key-file", "--key-env", "--client", "--send-timeout")


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
    _add_server_options(sync)
    sync.add_argument("--quiet", action="store_true", help="print nothing on success")
    _add_hook_parsers(commands)
    _add_docs_parsers(commands)
    connect.add_parsers(commands)
    return parser


def _add_docs_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    docs = commands.add_parser(
        "docs", help="the project's Markdown docs as memory", description="A project's docs as memory."
    )
    docs_commands = docs.add_subparsers(dest="docs_command", metavar="COMMAND", required=True)
    sync = docs_commands.add_parser(
        "sync",
        help="send the checkout's changed Markdown pages to the server, retire deleted ones",
        description=(
            "Read the Markdown docs at HEAD (by default docs/**/*.md and README.md), cut them into "
            "sections by heading, and send the pages whose SHA-256 changed to the Kenfold server, where "
            "agents find them with recall and get_context. Pages gone from HEAD are retired. Run it from "
            "a git post-commit hook to keep the docs current."
        ),
    )
    lint = docs_commands.add_parser(
        "lint",
        help="report what keeps agents from finding the docs (score per page; exit 1 on errors)",
        description=(
            "Check the Markdown docs on disk for what hurts retrieval: pages too short, relates_to links "
            "to missing pages, sections merged away by chunking, generic headings, missing title or tags. "
            "Each page scores 0-100; any error exits 1."
        ),
    )
    for command in (sync, lint):
        command.add_argument(
            "--dir",
            type=Path,
            help="the docs folder (default: docs/ and README.md of the checkout containing .)",
        )
        command.add_argument(
            "--glob", help="which files under --dir, such as 'guides/*.md' (default: '**/*.md')"
        )
        command.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_server_options(sync)
    sync.add_argument("--quiet", action="store_true", help="print nothing on success")


def _docs(arguments: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if arguments.dir is not None and not arguments.dir.is_dir():
        parser.error(f"--dir {arguments.dir} is not a directory")
    start = arguments.dir or Path.cwd()
    try:
        repo = git.toplevel(start)
        if arguments.docs_command == "lint":
            return _docs_lint(arguments, repo=repo, start=start)
        folder = None
        if arguments.dir is not None and repo is not None:
            folder = arguments.dir.resolve().relative_to(repo.resolve()).as_posix().removeprefix(".")
        mcp_url = arguments.url or mcp_url_from_environment()
        api_key = read_api_key(key_file=arguments.key_file, key_env=arguments.key_env)
        with KenfoldApi(mcp_url=mcp_url, api_key=api_key) as api:
            outcome = docs_sync(
                directory=start, api=api, folder=folder, glob=arguments.glob, progress=_progress_bar()
            )
    except ClientError as error:
        print(for_terminal(f"kenfold: error: {error}"), file=sys.stderr)
        return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILURE
    if arguments.json:
        print(
            json.dumps(
                {
                    "project": outcome.project,
                    **outcome.counts,
                    "sent": outcome.sent,
                    "deleted": outcome.deleted,
                    "refused": outcome.refused,
                },
                ensure_ascii=False,
            )
        )
    elif not arguments.quiet or outcome.refused:
        print(for_terminal(outcome.summary))
    return EXIT_FAILURE if outcome.refused else 0


def _docs_lint(arguments: argparse.Namespace, *, repo: Path | None, start: Path) -> int:
    if repo is None:
        # Outside a checkout: any folder of Markdown.
        root, selection = start, default_selection("", arguments.glob)
    else:
        folder = None
        if arguments.dir is not None:
            folder = arguments.dir.resolve().relative_to(repo.resolve()).as_posix().removeprefix(".")
        root, selection = repo, default_selection(folder, arguments.glob)
    report = lint_folder(root=root, selection=selection)
    if arguments.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
    else:
        print(for_terminal(format_report(report)))
    return EXIT_FAILURE if report.errors else 0


def _progress_bar() -> "Callable[[int, int], None] | None":
    """A one-line progress report on stderr, only on a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if total > 1:
            width = 30
            filled = width * done // total
            end = "\n" if done == total else ""
            print(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} requests",
                end=end,
                file=sys.stderr,
            )

    return show


def _add_server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help=f"the server's MCP URL (default: $KENFOLD_URL, else {DEFAULT_MCP_URL})")
    key = parser.add_mutually_exclusive_group()
    key.add_argument("--key-file", type=Path, help=f"file holding the API key (default: ${API_KEY_VARIABLE})")
    key.add_argument("--key-env", metavar="NAME", help="environment variable holding the API key")


def _add_hook_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    hook = commands.add_parser(
        "hook",
        help="session hook for Claude Code and Codex (reads the hook's JSON on stdin)",
        description=(
            "Run by the agent at SessionStart (loads the project's memory), UserPromptSubmit, Stop and "
            "PostCompact (records the session locally, redacted, no network) and SessionEnd (sends the "
            "session summary). Always exits 0; a failure is shown to the user as one line. To set it up, "
            "run `kenfold hook install claude-code` or `kenfold hook install codex`."
        ),
    )
    _add_server_options(hook)
    hook.add_argument(
        "--client",
        default=DEFAULT_CLIENT_NAME,
        metavar="NAME",
        help=f"the client name sent to the server; it names the agent when no API key does (default: {DEFAULT_CLIENT_NAME})",
    )
    hook.add_argument(
        "--no-capture", action="store_true", help="only load memory; record nothing, send no summary"
    )
    hook.add_argument("--no-refs", action="store_true", help="do not sync code references at SessionStart")
    hook.add_argument(
        "--send-timeout",
        type=float,
        default=DEFAULT_SEND_SECONDS,
        metavar="SECONDS",
        help=f"how long SessionEnd waits for the server (default: {DEFAULT_SEND_SECONDS}); an unsent summary is sent at the next SessionStart",
    )
    setup = hook.add_subparsers(dest="hook_command", metavar="COMMAND")
    for name, summary in (
        ("config", "print the hooks configuration for a client (JSON)"),
        ("install", "merge the hooks configuration into the client's own settings file"),
    ):
        command = setup.add_parser(
            name,
            help=summary,
            description=(
                f"{summary[0].upper()}{summary[1:]}: Claude Code's ~/.claude/settings.json, Codex's "
                "~/.codex/hooks.json. Every entry you wrote yourself is kept; a backup is written first. "
                "It installs nothing unless the key file reads and the server answers and accepts the key."
                if name == "install"
                else f"{summary[0].upper()}{summary[1:]}, to add by hand or to check before `kenfold hook install`."
            ),
        )
        command.add_argument("client", choices=CLIENTS, help="the agent that runs the hooks")
        command.add_argument(
            "--url", help="the server's MCP URL the hooks use (default: $KENFOLD_URL when they run)"
        )
        command.add_argument(
            "--key-file",
            type=Path,
            help="file holding the agent's API key (default: $KENFOLD_API_KEY when they run)",
        )
        if name == "install":
            command.add_argument(
                "--file", type=Path, help="the settings file to merge into (default: the client's own)"
            )
    uninstall = setup.add_parser(
        "uninstall",
        help="remove the Kenfold hooks from the client's settings file, keeping everything else",
        description=(
            "Remove every entry that runs `kenfold hook` from Claude Code's ~/.claude/settings.json and "
            "Codex's ~/.codex/hooks.json (or only the named client's). Every other entry is kept; a backup "
            "is written first."
        ),
    )
    uninstall.add_argument(
        "client", nargs="?", choices=CLIENTS, help="the agent whose hooks to remove (default: both)"
    )
    uninstall.add_argument(
        "--file", type=Path, help="the settings file to remove them from (default: the client's own)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    # An agent runs `kenfold hook [options]`; a word after `hook` that is not an option is a command a
    # person typed (`kenfold hook uninstal`), which gets argparse's usage and exit 2 like any other.
    running_hook = words[:1] == ["hook"] and _first_word(words[1:]) is None
    try:
        arguments = parser.parse_args(words)
    except SystemExit as exit:
        if not running_hook or not exit.code:
            raise
        # A hook that exits 2 would block the user's prompt: report the bad configuration instead.
        _print_hook_outcome(failure("Kenfold hook is misconfigured", "see `kenfold hook --help`"))
        return 0
    if arguments.command == "hook":
        return _hook(arguments)
    if arguments.command == "docs":
        return _docs(arguments, parser)
    if arguments.command in connect.COMMANDS:
        return connect.run(arguments)
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


def _hook(arguments: argparse.Namespace) -> int:
    if arguments.hook_command is not None:
        return _hook_setup(arguments)
    try:
        settings = HookSettings(
            mcp_url=arguments.url or mcp_url_from_environment(),
            api_key=read_api_key(key_file=arguments.key_file, key_env=arguments.key_env),
            client_name=arguments.client,
            state_dir=state_dir(),
            capture=not arguments.no_capture,
            refs=not arguments.no_refs,
            send_timeout=arguments.send_timeout,
        )
    except ClientError as error:
        outcome = failure("Kenfold hook is misconfigured", error)
    else:
        try:
            outcome = run_hook(raw=sys.stdin.buffer.read(MAX_INPUT_BYTES + 1), settings=settings)
        except Exception as error:
            # A bug of ours must not end the user's session: the agent reads a traceback and a non-zero
            # exit as a failed (or, with exit 2, blocked) hook. The kind of error is enough to report it.
            outcome = failure("Kenfold hook failed unexpectedly", type(error).__name__)
    _print_hook_outcome(outcome)
    return 0


def _print_hook_outcome(outcome: HookOutcome) -> None:
    for warning in outcome.warnings or []:
        print(for_terminal(warning), file=sys.stderr)
    if outcome.output is not None:
        # json.dumps escapes every control character, so memory text cannot break the agent's parser.
        print(json.dumps(outcome.output))


def _first_word(words: Sequence[str]) -> str | None:
    """The first word that is neither an option of `kenfold hook` nor an option's value."""
    rest = iter(words)
    for word in rest:
        if word == "--":
            return next(rest, None)
        if not word.startswith("-"):
            return word
        if word in HOOK_VALUE_OPTIONS:
            next(rest, None)
    return None


def _hook_setup(arguments: argparse.Namespace) -> int:
    try:
        if arguments.hook_command == "uninstall":
            if arguments.file is not None:
                paths = [arguments.file]
            else:
                paths = [
                    settings_file(client) for client in ([arguments.client] if arguments.client else CLIENTS)
                ]
            for path in paths:
                print(for_terminal(uninstall_hooks(path=path)))
            return 0
        config = hooks_config(client=arguments.client, url=arguments.url, key_file=arguments.key_file)
        if arguments.hook_command == "config":
            print(json.dumps(config, indent=2))
            return 0
        path = arguments.file or settings_file(arguments.client)
        connect.require_working_hooks(client=arguments.client, url=arguments.url, key_file=arguments.key_file)
        print(for_terminal(install_hooks(client=arguments.client, config=config, path=path)))
    except ClientError as error:
        print(for_terminal(f"kenfold: error: {error}"), file=sys.stderr)
        return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILURE
    return 0


if __name__ == "__main__":
    sys.exit(main())
