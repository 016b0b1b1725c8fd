"""`kenfold connect claude-code|codex` and `kenfold doctor`: one command to connect an agent, one to check it.

`connect` runs on the agent's machine: it checks that the server answers and that the key works (and
whether it is read-only), registers Kenfold's MCP server user-wide (Claude Code with its own CLI, Codex in
its config file), installs the session hooks with the same key file and URL, and ends with a round trip.
`doctor` runs the same checks on an existing setup, changing nothing. Each check is a ✓ or a ✗ with what
to do about it.

The key stays in its file: both agents get the bearer header from `kenfold auth-header --key-file F`,
which they run whenever they connect (Claude Code's `headersHelper`, Codex's `http_headers_helper`), and
the hooks read the same file. No configuration file holds the key.
"""

import argparse
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from kenfold_client.errors import ClientError, ServerError, UsageError
from kenfold_client.hook_config import (
    CLIENTS,
    TIMEOUTS,
    hooks_config,
    install_hooks,
    is_kenfold_handler,
    kenfold_command,
    replace_file,
    settings_file,
)
from kenfold_client.http import (
    DEFAULT_MCP_URL,
    KenfoldApi,
    api_base_from_mcp_url,
    mcp_url_from_environment,
    read_api_key,
    send_same_origin,
)
from kenfold_client.mcp import McpClient
from kenfold_common.text import for_terminal

COMMANDS = frozenset({"connect", "doctor", "auth-header"})
SERVER_NAME = "kenfold"
AGENT_TITLES = {"claude-code": "Claude Code", "codex": "Codex"}
# Where to get each agent's CLI, for the message that says it is missing.
INSTALL_HINTS = {
    "claude-code": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
}
# The variable an explicit path to the agent's CLI is read from before PATH (tests and unusual installs).
BINARY_VARIABLES = {"claude-code": "KENFOLD_CLAUDE_BIN", "codex": "KENFOLD_CODEX_BIN"}
BINARY_NAMES = {"claude-code": "claude", "codex": "codex"}
CLI_TIMEOUT_SECONDS = 60.0
CHECK_TIMEOUT_SECONDS = 10.0
EXIT_FAILURE = 1
EXIT_USAGE = 2


@dataclass
class Check:
    """One line of the report: what was checked, whether it holds, and what to do when it does not."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}

    def text(self) -> str:
        lines = [f"{'✓' if self.ok else '✗'} {self.name}: {self.detail}"]
        if self.fix and not self.ok:
            lines += [f"    {line}" for line in self.fix.splitlines()]
        return "\n".join(lines)


@dataclass
class Report:
    client: str
    mcp_url: str
    key_file: Path
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "url": self.mcp_url,
            "key_file": str(self.key_file),
            "ok": self.ok,
            "checks": [check.as_json() for check in self.checks],
        }

    def text(self, *, connecting: bool) -> str:
        title = AGENT_TITLES[self.client]
        where = f"Kenfold at {self.mcp_url} (key file {self.key_file})"
        lines = [f"Connecting {title} to {where}" if connecting else f"Checking {title} with {where}"]
        lines += [check.text() for check in self.checks]
        failed = sum(not check.ok for check in self.checks)
        if failed:
            lines.append(
                f"{failed} {'problem' if failed == 1 else 'problems'}: do what the ✗ "
                f"{'line says' if failed == 1 else 'lines say'}, then run `kenfold doctor {self.client}`."
            )
        else:
            lines.append(f"{title} is connected: start a new {title} session.")
        return "\n".join(lines)


def default_key_file(client: str) -> Path:
    """Where the dashboard's connect lines save an agent's key."""
    return Path.home() / ".config" / "kenfold" / f"{client}.key"


def _absolute(path: Path) -> Path:
    return path.expanduser().absolute()


# --- the server and the key --------------------------------------------------------------------------


def check_server(*, mcp_url: str) -> Check:
    base = api_base_from_mcp_url(mcp_url)
    health = base.copy_with(path=base.path.removesuffix("/api/v1") + "/healthz")
    fix = f"start the server (`make run` where Kenfold is installed), or pass its address with --url (it ends in /mcp, for example {DEFAULT_MCP_URL})"
    try:
        with httpx.Client(timeout=CHECK_TIMEOUT_SECONDS) as client:
            response = send_same_origin(client, client.build_request("GET", health), authenticated=False)
    except ClientError as error:
        return Check("server", False, str(error), fix)
    try:
        healthy = response.json() == {"status": "ok"}
    except ValueError:
        healthy = False
    if not healthy:
        return Check(
            "server",
            False,
            f"{health} answered {response.status_code}, not Kenfold's health check",
            fix,
        )
    return Check("server", True, f"Kenfold answers at {health}")


@dataclass(frozen=True)
class KeyStatus:
    check: Check
    key: str | None


def check_key(*, mcp_url: str, key_file: Path, client: str) -> KeyStatus:
    """Read the key file and ask the server who the key is (`GET /api/v1/whoami`)."""
    save = (
        f"save the agent's key there: mkdir -p {shlex.quote(str(key_file.parent))} && "
        f"(umask 077 && printf '%s\\n' 'kf_…' > {shlex.quote(str(key_file))}), "
        "with a key from the dashboard's Clients page or `manage.py key create "
        f"{client}`; or pass --key-file"
    )
    if not key_file.is_file():
        return KeyStatus(Check("key", False, f"there is no key file at {key_file}", save), None)
    try:
        key = read_api_key(key_file=key_file)
    except UsageError as error:
        return KeyStatus(Check("key", False, str(error), save), None)
    assert key is not None  # read_api_key never returns None for a file
    try:
        with KenfoldApi(mcp_url=mcp_url, api_key=key) as api:
            who = api.whoami(timeout=CHECK_TIMEOUT_SECONDS)
    except ServerError as error:
        if error.status_code == 401:
            return KeyStatus(
                Check(
                    "key",
                    False,
                    f"the server refused the key in {key_file} ({error})",
                    "ask the owner for a new key (dashboard, Clients page) and save it in the key file",
                ),
                None,
            )
        # An older server has no /whoami; anything else (a Host the server refuses, a proxy's page) is
        # explained by the error itself.
        fix = "update the Kenfold server, then run this again" if error.status_code == 404 else None
        return KeyStatus(Check("key", False, str(error), fix), None)
    agent, read_only = str(who.get("agent")), bool(who.get("read_only"))
    detail = f"valid, {'read-only' if read_only else 'read and write'}, writes as {agent}"
    if read_only:
        detail += " (the agent can search memory but not remember; session summaries will be refused)"
    if agent != client:
        detail += f"; note: it is {agent}'s key, so what {AGENT_TITLES[client]} writes is recorded as {agent}"
    return KeyStatus(Check("key", True, detail), key)


def require_working_hooks(*, client: str, url: str | None, key_file: Path | None) -> None:
    """Refuse `kenfold hook install` for hooks that could not work, with the check's reason and fix: the
    server must answer at the URL the hooks will use (``--url``, else $KENFOLD_URL), and a named key file
    must read and be accepted. A mistake shows now, in the terminal, not as a notice in every session."""
    mcp_url = url or mcp_url_from_environment()
    check = check_server(mcp_url=mcp_url)
    if check.ok and key_file is not None:
        check = check_key(mcp_url=mcp_url, key_file=_absolute(key_file), client=client).check
    if not check.ok:
        fix = f" {check.fix[0].upper()}{check.fix[1:]}" if check.fix else ""
        raise ClientError(f"{check.detail}; nothing was installed.{fix}")


def check_key_file_private(*, key_file: Path) -> Check:
    mode = stat.S_IMODE(key_file.stat().st_mode)
    if mode & 0o077:
        return Check(
            "key file",
            False,
            f"{key_file} can be read by other users (mode {mode:o})",
            f"chmod 600 {shlex.quote(str(key_file))}",
        )
    return Check("key file", True, "readable only by you")


def round_trip(*, mcp_url: str, key: str, client: str) -> Check:
    """One MCP tool call with the key, as the agent will make it: a recall of nothing in particular."""
    try:
        with McpClient(mcp_url=mcp_url, api_key=key, client_name=client) as mcp:
            result = mcp.call_tool(
                name="recall",
                arguments={"query": "kenfold connect check", "limit": 1},
                timeout=CHECK_TIMEOUT_SECONDS,
            )
    except ClientError as error:
        return Check(
            "round trip", False, str(error), "run `kenfold doctor` again; the server log has details"
        )
    found = len(result.get("memories") or [])
    return Check(
        "round trip", True, f"an MCP recall answered ({found} {'memory' if found == 1 else 'memories'})"
    )


# --- MCP registration: Claude Code -------------------------------------------------------------------


def agent_binary(client: str) -> str | None:
    """The agent's CLI: `KENFOLD_CLAUDE_BIN` / `KENFOLD_CODEX_BIN` when set, else the one on PATH."""
    explicit = os.environ.get(BINARY_VARIABLES[client], "").strip()
    if explicit:
        return explicit
    return shutil.which(BINARY_NAMES[client])


def claude_config_file() -> Path:
    """Claude Code keeps user-scope MCP servers in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json)."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (Path(folder) if folder else Path.home()) / ".claude.json"


def auth_header_command(*, key_file: Path) -> str:
    return shlex.join([*kenfold_command(), "auth-header", "--key-file", str(key_file)])


def claude_server_entry(*, mcp_url: str, key_file: Path) -> dict[str, Any]:
    # headersHelper is run by Claude Code (through a shell) whenever it connects; what it prints is the
    # request headers. So ~/.claude.json names the key file, never the key.
    return {"type": "http", "url": mcp_url, "headersHelper": auth_header_command(key_file=key_file)}


def claude_add_arguments(*, mcp_url: str, key_file: Path) -> list[str]:
    entry = json.dumps(claude_server_entry(mcp_url=mcp_url, key_file=key_file))
    return ["mcp", "add-json", "--scope", "user", SERVER_NAME, entry]


def _run_cli(binary: str, arguments: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *arguments], capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS, check=False
    )


def register_claude(*, mcp_url: str, key_file: Path, key: str) -> Check:
    arguments = claude_add_arguments(mcp_url=mcp_url, key_file=key_file)
    by_hand = shlex.join(["claude", *arguments])
    binary = agent_binary("claude-code")
    if binary is None:
        return Check(
            "MCP",
            False,
            "claude is not on PATH (nor set in KENFOLD_CLAUDE_BIN), so Kenfold is not registered with Claude Code",
            f"install Claude Code ({INSTALL_HINTS['claude-code']}), then run:\n{by_hand}",
        )
    try:
        # add-json refuses a name that exists: the earlier registration (another URL or key) is replaced.
        _run_cli(binary, ["mcp", "remove", "--scope", "user", SERVER_NAME])
        added = _run_cli(binary, arguments)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check("MCP", False, f"running {binary} failed: {error}", f"run it by hand:\n{by_hand}")
    if added.returncode != 0:
        said = (added.stderr or added.stdout).strip().splitlines()
        return Check(
            "MCP",
            False,
            f"`claude mcp add-json` failed (exit {added.returncode}): {said[-1] if said else 'no message'}",
            f"run it by hand:\n{by_hand}",
        )
    found = check_claude_registration(mcp_url=mcp_url, key_file=key_file, key=key)
    if found.ok:
        found.detail = f"registered user-wide with `claude mcp add-json`; {found.detail}"
    return found


def check_claude_registration(*, mcp_url: str, key_file: Path, key: str | None) -> Check:
    path = claude_config_file()
    fix = (
        f"run `kenfold connect claude-code --url {mcp_url} --key-file {key_file}`, or by hand:\n"
        + shlex.join(["claude", *claude_add_arguments(mcp_url=mcp_url, key_file=key_file)])
    )
    try:
        servers = json.loads(path.read_text()).get("mcpServers") or {}
    except FileNotFoundError:
        return Check("MCP", False, f"Claude Code has no user settings yet ({path} does not exist)", fix)
    except (OSError, ValueError, AttributeError) as error:
        return Check("MCP", False, f"cannot read {path}: {error}", fix)
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return Check("MCP", False, f"no user-wide MCP server named {SERVER_NAME} in {path}", fix)
    if entry.get("url") != mcp_url:
        return Check(
            "MCP", False, f"the {SERVER_NAME} MCP server in {path} points to {entry.get('url')}", fix
        )
    helper = entry.get("headersHelper")
    header = (entry.get("headers") or {}).get("Authorization")
    if isinstance(helper, str) and _option(helper, "--key-file") == str(key_file):
        return Check("MCP", True, f"{path} has {SERVER_NAME} at {mcp_url}, with the key read from {key_file}")
    if key is not None and header == f"Bearer {key}":
        return Check("MCP", True, f"{path} has {SERVER_NAME} at {mcp_url}, with the same key pasted in")
    return Check("MCP", False, f"the {SERVER_NAME} MCP server in {path} sends another key", fix)


def _option(command: str, name: str) -> str | None:
    """The value of option `name` in a shell command line (as `kenfold` wrote it), or None."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for index, word in enumerate(words[:-1]):
        if word == name:
            return words[index + 1]
    return None


# --- MCP registration: Codex -------------------------------------------------------------------------


def codex_config_file() -> Path:
    home = os.environ.get("CODEX_HOME", "").strip()
    return (Path(home) if home else Path.home() / ".codex") / "config.toml"


def codex_server_table(*, mcp_url: str, key_file: Path) -> str:
    # A TOML basic string is a JSON string for what a URL or a command line holds.
    helper = auth_header_command(key_file=key_file)
    return f"[mcp_servers.{SERVER_NAME}]\nurl = {json.dumps(mcp_url)}\nhttp_headers_helper = {json.dumps(helper)}\n"


def _is_kenfold_table_header(line: str) -> bool:
    stripped = line.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")) or stripped.startswith("[["):
        return False
    parts = [part.strip().strip('"') for part in stripped.strip("[]").split(".")]
    return parts[:2] == ["mcp_servers", SERVER_NAME]


def codex_config_with_server(original: str, *, mcp_url: str, key_file: Path, where: Path) -> str:
    """`original` with its `[mcp_servers.kenfold]` table (and sub-tables) replaced by ours; every other
    line kept as the user wrote it."""
    try:
        tomllib.loads(original)
    except tomllib.TOMLDecodeError as error:
        raise ClientError(
            f"{where} is not valid TOML ({error}); nothing was changed. Fix the file first"
        ) from None
    kept: list[str] = []
    skipping = False
    for line in original.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            skipping = _is_kenfold_table_header(line)
        if not skipping:
            kept.append(line)
    text = "".join(kept)
    if SERVER_NAME in (tomllib.loads(text).get("mcp_servers") or {}):
        raise ClientError(
            f"{where} defines mcp_servers.{SERVER_NAME} inline, which this command does not rewrite; nothing "
            f"was changed. Replace it by hand with:\n{codex_server_table(mcp_url=mcp_url, key_file=key_file)}"
        )
    # Our table goes last, after one blank line: connecting again gives the same file.
    text = text.rstrip() + "\n\n" if text.strip() else ""
    return text + codex_server_table(mcp_url=mcp_url, key_file=key_file)


def register_codex(*, mcp_url: str, key_file: Path, key: str) -> Check:
    path = codex_config_file()
    table = codex_server_table(mcp_url=mcp_url, key_file=key_file)
    try:
        original = path.read_text() if path.exists() else None
        updated = codex_config_with_server(original or "", mcp_url=mcp_url, key_file=key_file, where=path)
    except (OSError, ClientError) as error:
        return Check("MCP", False, str(error), f"add this table to {path} by hand:\n{table.rstrip()}")
    note = replace_file(path, original=original, text=updated) if updated != original else ""
    found = check_codex_registration(mcp_url=mcp_url, key_file=key_file, key=key)
    if found.ok:
        found.detail = f"wrote [mcp_servers.{SERVER_NAME}] in {path}{note}; {found.detail}"
        if agent_binary("codex") is None:
            found.detail += f"; codex itself is not on PATH yet ({INSTALL_HINTS['codex']})"
    return found


def check_codex_registration(*, mcp_url: str, key_file: Path, key: str | None) -> Check:
    path = codex_config_file()
    table = codex_server_table(mcp_url=mcp_url, key_file=key_file).rstrip()
    fix = f"run `kenfold connect codex --url {mcp_url} --key-file {key_file}`, or put in {path} by hand:\n{table}"
    try:
        config = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return Check("MCP", False, f"Codex has no config yet ({path} does not exist)", fix)
    except (OSError, tomllib.TOMLDecodeError) as error:
        return Check("MCP", False, f"cannot read {path}: {error}", fix)
    entry = (config.get("mcp_servers") or {}).get(SERVER_NAME)
    if not isinstance(entry, dict):
        return Check("MCP", False, f"no [mcp_servers.{SERVER_NAME}] in {path}", fix)
    if entry.get("url") != mcp_url:
        return Check("MCP", False, f"[mcp_servers.{SERVER_NAME}] in {path} points to {entry.get('url')}", fix)
    helper = entry.get("http_headers_helper")
    if isinstance(helper, str) and _option(helper, "--key-file") == str(key_file):
        return Check("MCP", True, f"{path} has {SERVER_NAME} at {mcp_url}, with the key read from {key_file}")
    # A table written by hand, as docs/clients.md showed before: the token from an environment variable.
    variable = entry.get("bearer_token_env_var")
    if isinstance(variable, str) and key is not None and os.environ.get(variable, "").strip() == key:
        return Check("MCP", True, f"{path} has {SERVER_NAME} at {mcp_url}, with the key from ${variable}")
    return Check(
        "MCP", False, f"[mcp_servers.{SERVER_NAME}] in {path} does not send the key of {key_file}", fix
    )


# --- hooks -------------------------------------------------------------------------------------------


def install_client_hooks(*, client: str, mcp_url: str, key_file: Path) -> Check:
    config = hooks_config(client=client, url=mcp_url, key_file=key_file)
    try:
        message = install_hooks(client=client, config=config, path=settings_file(client))
    except ClientError as error:
        return Check(
            "hooks",
            False,
            str(error),
            f"fix the file, then run `kenfold hook install {client} --url {mcp_url} --key-file {key_file}`",
        )
    return Check("hooks", True, message)


def check_hooks(*, client: str, mcp_url: str, key_file: Path) -> Check:
    path = settings_file(client)
    fix = f"kenfold hook install {client} --url {mcp_url} --key-file {shlex.quote(str(key_file))}"
    commands = installed_hook_commands(client)
    if commands is None:
        return Check("hooks", False, f"cannot read {path} as JSON", f"fix the file, then run:\n{fix}")
    missing = [event for event in TIMEOUTS[client] if event not in commands]
    if len(missing) == len(TIMEOUTS[client]):
        return Check("hooks", False, f"no Kenfold hooks in {path}", fix)
    if missing:
        return Check("hooks", False, f"{path} has no Kenfold hook for {', '.join(missing)}", fix)
    for event, command in commands.items():
        url, file = _option(command, "--url"), _option(command, "--key-file")
        if url != mcp_url:
            return Check("hooks", False, f"the {event} hook in {path} uses --url {url}", fix)
        if file is None:
            return Check("hooks", False, f"the {event} hook in {path} names no key file", fix)
        if _absolute(Path(file)) != key_file:
            return Check("hooks", False, f"the {event} hook in {path} reads the key from {file}", fix)
    return Check(
        "hooks",
        True,
        f"{path} runs kenfold hook for {', '.join(TIMEOUTS[client])} with the same URL and key file",
    )


def installed_hook_commands(client: str) -> dict[str, str] | None:
    """The command of the Kenfold handler of each event in the client's settings file; None when the file
    cannot be read as JSON (a missing file has none)."""
    path = settings_file(client)
    try:
        settings = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    found: dict[str, str] = {}
    for event, groups in (hooks if isinstance(hooks, dict) else {}).items():
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_kenfold_handler(handler):
                    found.setdefault(event, handler["command"])
    return found


# --- the two commands --------------------------------------------------------------------------------


def connect(*, client: str, mcp_url: str, key_file: Path) -> Report:
    """Check the server and key, then register MCP, install the hooks and make a round trip; stops before
    writing any configuration when the server or the key does not work."""
    report = Report(client=client, mcp_url=mcp_url, key_file=key_file, checks=[check_server(mcp_url=mcp_url)])
    if not report.ok:
        return report
    status = check_key(mcp_url=mcp_url, key_file=key_file, client=client)
    report.checks.append(status.check)
    if status.key is None:
        return report
    report.checks.append(check_key_file_private(key_file=key_file))
    if client == "claude-code":
        report.checks.append(register_claude(mcp_url=mcp_url, key_file=key_file, key=status.key))
    else:
        report.checks.append(register_codex(mcp_url=mcp_url, key_file=key_file, key=status.key))
    report.checks.append(install_client_hooks(client=client, mcp_url=mcp_url, key_file=key_file))
    report.checks.append(round_trip(mcp_url=mcp_url, key=status.key, client=client))
    return report


def doctor(*, client: str, mcp_url: str, key_file: Path) -> Report:
    """The checks of `connect` on the setup as it is; nothing is written."""
    report = Report(client=client, mcp_url=mcp_url, key_file=key_file, checks=[check_server(mcp_url=mcp_url)])
    status = check_key(mcp_url=mcp_url, key_file=key_file, client=client) if report.ok else None
    if status is not None:
        report.checks.append(status.check)
        if key_file.is_file():
            report.checks.append(check_key_file_private(key_file=key_file))
    key = status.key if status else None
    if client == "claude-code":
        report.checks.append(check_claude_registration(mcp_url=mcp_url, key_file=key_file, key=key))
    else:
        report.checks.append(check_codex_registration(mcp_url=mcp_url, key_file=key_file, key=key))
    report.checks.append(check_hooks(client=client, mcp_url=mcp_url, key_file=key_file))
    if key is not None:
        report.checks.append(round_trip(mcp_url=mcp_url, key=key, client=client))
    return report


def discovered_setup(*, client: str) -> tuple[str | None, Path | None]:
    """The URL and key file an existing setup uses: from the hooks, else from the MCP registration."""
    for command in (installed_hook_commands(client) or {}).values():
        url, file = _option(command, "--url"), _option(command, "--key-file")
        return url, _absolute(Path(file)) if file else None
    if client == "claude-code":
        try:
            entry = json.loads(claude_config_file().read_text())["mcpServers"][SERVER_NAME]
            file = _option(entry.get("headersHelper") or "", "--key-file")
            return entry.get("url"), _absolute(Path(file)) if file else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None, None
    try:
        entry = tomllib.loads(codex_config_file().read_text())["mcp_servers"][SERVER_NAME]
        file = _option(entry.get("http_headers_helper") or "", "--key-file")
        return entry.get("url"), _absolute(Path(file)) if file else None
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError):
        return None, None


def is_set_up(client: str) -> bool:
    """Whether the client shows any trace of Kenfold (hooks or an MCP registration)."""
    return discovered_setup(client=client) != (None, None) or bool(installed_hook_commands(client))


# --- the command line --------------------------------------------------------------------------------


def add_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    connect_parser = commands.add_parser(
        "connect",
        help="connect Claude Code or Codex on this machine: MCP, hooks and a round trip",
        description=(
            "Check that the server answers and the key works, register Kenfold's MCP server user-wide "
            "(Claude Code with `claude mcp add-json`, Codex in ~/.codex/config.toml; both read the key from "
            "the key file through `kenfold auth-header`), install the session "
            "hooks with the same URL and key file, and make one MCP call. Exit 1 if a check fails; each ✗ "
            "says what to do."
        ),
    )
    doctor_parser = commands.add_parser(
        "doctor",
        help="check an existing setup: server, key, MCP registration, hooks, round trip",
        description=(
            "Run the checks of `kenfold connect` without changing anything. The URL and key file default "
            "to those the installed hooks use. Exit 1 if a check fails."
        ),
    )
    connect_parser.add_argument("client", choices=CLIENTS, help="the agent to connect")
    doctor_parser.add_argument(
        "client", nargs="?", choices=CLIENTS, help="the agent to check (default: every agent set up here)"
    )
    for parser, default in (
        (connect_parser, f"$KENFOLD_URL, else {DEFAULT_MCP_URL}"),
        (doctor_parser, "the one the hooks use"),
    ):
        parser.add_argument("--url", help=f"the server's MCP URL, ending in /mcp (default: {default})")
        parser.add_argument(
            "--key-file",
            type=Path,
            help="file holding the agent's API key (default: ~/.config/kenfold/<client>.key)",
        )
        parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    header = commands.add_parser(
        "auth-header",
        help="print the Authorization header for a key file as JSON (the agents' MCP headers helper)",
        description='Print {"Authorization": "Bearer <key>"} for the key in --key-file.',
    )
    header.add_argument("--key-file", type=Path, required=True, help="file holding the API key")


def run(arguments: argparse.Namespace) -> int:
    """Run `connect`, `doctor` or `auth-header`; returns the exit code."""
    try:
        if arguments.command == "auth-header":
            key = read_api_key(key_file=arguments.key_file)
            print(json.dumps({"Authorization": f"Bearer {key}"}))
            return 0
        reports = [_connect_one(arguments)] if arguments.command == "connect" else _doctor_all(arguments)
    except ClientError as error:
        print(for_terminal(f"kenfold: error: {error}"), file=sys.stderr)
        return EXIT_USAGE if isinstance(error, UsageError) else EXIT_FAILURE
    if arguments.json:
        body: Any = reports[0].as_json() if arguments.command == "connect" else [r.as_json() for r in reports]
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        print(
            for_terminal(
                "\n\n".join(report.text(connecting=arguments.command == "connect") for report in reports)
            )
        )
    return 0 if all(report.ok for report in reports) else EXIT_FAILURE


def _connect_one(arguments: argparse.Namespace) -> Report:
    mcp_url = (arguments.url or mcp_url_from_environment()).strip()
    api_base_from_mcp_url(mcp_url)  # a wrong URL is a usage error before anything is checked
    key_file = _absolute(arguments.key_file or default_key_file(arguments.client))
    return connect(client=arguments.client, mcp_url=mcp_url, key_file=key_file)


def _doctor_all(arguments: argparse.Namespace) -> list[Report]:
    clients = [arguments.client] if arguments.client else [client for client in CLIENTS if is_set_up(client)]
    if not clients:
        raise ClientError(
            "no agent on this machine is set up for Kenfold; run `kenfold connect claude-code` or "
            "`kenfold connect codex` (see --help)"
        )
    return [_doctor_one(arguments, client) for client in clients]


def _doctor_one(arguments: argparse.Namespace, client: str) -> Report:
    found_url, found_key_file = discovered_setup(client=client)
    mcp_url = (arguments.url or found_url or mcp_url_from_environment()).strip()
    api_base_from_mcp_url(mcp_url)
    key_file = _absolute(arguments.key_file or found_key_file or default_key_file(client))
    return doctor(client=client, mcp_url=mcp_url, key_file=key_file)
