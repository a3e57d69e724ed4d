"""Progress of waiting commands: a spinner line on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from submit.cli.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    p = Progress(out)
    p.tick("waiting")
    p.line("state=Running")
    p.sleep(0.01, "waiting")
    p.done()
    assert out.getvalue() == "state=Running\n"


def test_a_spinner_line_on_a_terminal() -> None:
    out = _Tty()
    p = Progress(out)
    p.tick("waiting for w1: Running")
    assert out.getvalue() == "\r\033[K| waiting for w1: Running (0m00s)"
    p.line("state=Completed")
    p.done()
    assert out.getvalue().endswith("\r\033[Kstate=Completed\n")
