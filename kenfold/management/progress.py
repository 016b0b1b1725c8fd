"""A progress bar for long commands, drawn on stderr only when stderr is a terminal (never into a log or a
pipe a script reads)."""

import sys
from typing import TextIO


class ProgressBar:
    WIDTH = 30

    def __init__(self, label: str, *, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.shown = self.stream.isatty()
        self.drawn = False

    def update(self, done: int, total: int | None = None) -> None:
        if not self.shown:
            return
        if total:
            filled = self.WIDTH * min(done, total) // total
            bar = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total}"
        else:
            bar = f"{done}"
        self.stream.write(f"\r{self.label} {bar}")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
