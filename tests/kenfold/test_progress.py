"""The progress bar of long commands (export, import, scan): drawn on a terminal only."""

import io

from kenfold.management.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_drawn_on_a_terminal_and_ended_with_a_newline() -> None:
    stream = Terminal()
    bar = ProgressBar("exporting", stream=stream)
    bar.update(50, 200)
    bar.update(200, 200)
    bar.close()
    assert stream.getvalue() == (
        "\rexporting [#######.......................] 50/200"
        "\rexporting [##############################] 200/200\n"
    )


def test_silent_in_a_pipe_or_a_log() -> None:
    stream = io.StringIO()
    bar = ProgressBar("exporting", stream=stream)
    bar.update(50, 200)
    bar.close()
    assert stream.getvalue() == ""
