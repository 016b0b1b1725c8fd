"""A small process manager for the cluster: starts each process in a process group of its own, restarts
any that exits while the cluster runs (as systemd's Restart=always or Docker's restart: unless-stopped
would), and records every start and exit with its time, so recovery can be measured."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

# A process that exits again and again is restarted with a growing delay (a port still held by the
# killed process, the database still down), up to this.
MAX_BACKOFF_S = 4.0


@dataclass
class Service:
    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path
    cwd: Path
    # When root: run as this user (PostgreSQL and PgBouncer refuse to run as root).
    uid: int | None = None
    gid: int | None = None
    process: subprocess.Popen | None = None
    events: list[tuple[float, str, int]] = field(
        default_factory=list
    )  # (monotonic, "start"/"exit", pid/code)
    backoff: float = 0.25

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def starts(self) -> int:
        return sum(kind == "start" for _t, kind, _v in self.events)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class Supervisor:
    def __init__(self) -> None:
        self.services: dict[str, Service] = {}
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)

    def add(self, service: Service) -> Service:
        self.services[service.name] = service
        self._start(service)
        if not self._thread.is_alive():
            self._thread.start()
        return service

    def _start(self, service: Service) -> None:
        extra = (
            {"user": service.uid, "group": service.gid, "extra_groups": []} if service.uid is not None else {}
        )
        with open(service.log_path, "a") as log:
            service.process = subprocess.Popen(
                service.argv,
                cwd=service.cwd,
                env=service.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **extra,
            )
        service.events.append((time.monotonic(), "start", service.process.pid))

    def _watch(self) -> None:
        while not self._stopping.wait(0.1):
            with self._lock:
                for service in self.services.values():
                    code = service.process.poll() if service.process else None
                    if code is None or self._stopping.is_set():
                        continue
                    now = time.monotonic()
                    if not service.events or service.events[-1][1] != "exit":
                        service.events.append((now, "exit", code))
                        # The rest of the group (gunicorn's workers, qcluster's children) goes with it.
                        with suppress(ProcessLookupError):
                            os.killpg(service.process.pid, signal.SIGKILL)
                    if now - service.events[-1][0] < service.backoff:
                        continue
                    previous_start = max((t for t, kind, _v in service.events if kind == "start"), default=0)
                    # Up for a while before this exit: a fresh failure, restart at once next time too.
                    up_for = service.events[-1][0] - previous_start
                    service.backoff = 0.25 if up_for > 30 else min(MAX_BACKOFF_S, service.backoff * 2)
                    self._start(service)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> float:
        """Send `sig` to the whole process group of `name` (SIGKILL: a machine or container dying); the
        time it was sent."""
        service = self.services[name]
        with suppress(ProcessLookupError):
            os.killpg(service.process.pid, sig)
        return time.monotonic()

    def restarted_at(self, name: str, after: float) -> float | None:
        """When `name` was started again after `after`, if it was."""
        return next((t for t, kind, _v in self.services[name].events if kind == "start" and t > after), None)

    def stop_all(self, stages: list[list[str]]) -> None:
        """Stop the services stage by stage (the balancer and Kenfold first, the database last): SIGTERM to
        every group of a stage, up to 20 s for them to end, then SIGKILL to what is left."""
        self._stopping.set()
        with self._lock:
            for stage in stages:
                services = [self.services[name] for name in stage if name in self.services]
                for service in services:
                    with suppress(ProcessLookupError):
                        os.killpg(service.process.pid, signal.SIGTERM)
                deadline = time.monotonic() + 20
                for service in services:
                    with suppress(subprocess.TimeoutExpired):
                        service.process.wait(timeout=max(0.1, deadline - time.monotonic()))
                    with suppress(ProcessLookupError):
                        os.killpg(service.process.pid, signal.SIGKILL)
                    with suppress(subprocess.TimeoutExpired):
                        service.process.wait(timeout=5)
