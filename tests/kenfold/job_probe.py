"""A background job for tests/kenfold/test_jobs_run_once.py that records each of its runs in a file."""

import os
import time


def record(path: str, label: str) -> None:
    """Append `label pid start end` to `path`: one line per run, whichever worker runs it."""
    started = time.time()
    time.sleep(0.5)  # long enough for a second worker to claim the same task if the claim let it
    with open(path, "a") as runs:
        runs.write(f"{label} {os.getpid()} {started:.3f} {time.time():.3f}\n")
