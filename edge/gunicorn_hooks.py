"""gunicorn server hooks for `manage.py serve` (loaded with `--config python:edge.gunicorn_hooks`).

Workers die with their master: when the master is killed (kill -9, OOM killer), orphaned workers used to
keep the listening socket for 10-15 s, accepting connections they never answered, and a restarted
`serve` could not take over cleanly (issue 14). gunicorn's own check of the parent runs once a second and
then shuts down, which took seconds more. Here the kernel kills a worker the moment its master dies
(SIGKILL): the socket is closed at once and a new `serve` can bind it. Requests in flight are cut off,
which loses nothing acknowledged: a write is acknowledged by its response, and PostgreSQL rolls back
the transaction of a vanished client.

The access log keeps no query strings (`AccessLogWithoutQueries`): they may carry credentials.
"""

import ctypes
import os
import signal
import sys
import threading
from typing import Any

from gunicorn.glogging import Logger

PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LOADER = "kenfold-load-models"


def post_fork(server: Any, worker: Any) -> None:
    if not sys.platform.startswith("linux"):
        return  # elsewhere gunicorn's once-a-second parent check remains
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        server.log.warning("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
    # The master may have died between fork() and prctl(); the signal would then never come.
    if os.getppid() != worker.ppid:
        os._exit(1)


def post_worker_init(worker: Any) -> None:
    """Load the local embedding models in the background as soon as the worker has the app, so that the
    first searches after a (re)start do not each wait for the load (seconds under load; issue 14). In a
    thread: the worker answers (health checks, requests that need no model) meanwhile."""
    from memories.providers.configured import load_local_models  # the app, and so Django, is loaded by now

    def load() -> None:
        try:
            load_local_models()
        except Exception:  # the first request that needs a model reports the failure with its own error
            worker.log.warning("loading the local embedding models at start failed", exc_info=True)

    threading.Thread(target=load, name=_LOADER, daemon=True).start()


def worker_exit(server: Any, worker: Any) -> None:
    """A worker stopped while its models were still loading (Ctrl-C just after start) ends here, at once.

    A normal exit would run the embedding runtime's C++ destructors under its still-working threads, which
    aborts the process ("terminate called without an active exception"; gunicorn then reports the worker
    "was sent SIGABRT!"). Nothing is lost: the worker has finished its requests by now."""
    if any(thread.name == _LOADER and thread.is_alive() for thread in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


REDACTED = "[redacted]"


def without_query(target: str) -> str:
    """A URL or path with its query string replaced by a marker: ``/api/v1/refs?[redacted]``.

    Query strings carry what a log must not keep: a remote URL with a token in its credentials
    (``?project=https://x-access-token:ghp_…@github.com/o/r.git``), an OAuth authorization code. Even
    the parameter names go: a token pasted as a bare ``?ghp_…`` is a name.
    """
    path, question, _ = target.partition("?")
    return f"{path}?{REDACTED}" if question else target


class AccessLogWithoutQueries(Logger):
    """gunicorn's logger, with query strings left out of every access log atom that holds one: the
    request line, the query, the referer, and the raw environ and header values."""

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)
        uri = without_query(environ.get("RAW_URI") or "")
        atoms["r"] = f"{environ['REQUEST_METHOD']} {uri} {environ['SERVER_PROTOCOL']}"
        atoms["q"] = REDACTED if atoms.get("q") else ""
        atoms["f"] = without_query(atoms["f"])
        for key in ("{raw_uri}e", "{query_string}e", "{referer}i", "{http_referer}e"):
            if key in atoms:
                atoms[key] = REDACTED
        return atoms


# gunicorn reads its settings from this module's names (`--config python:edge.gunicorn_hooks`).
logger_class = AccessLogWithoutQueries
