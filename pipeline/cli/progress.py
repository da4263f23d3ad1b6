"""A progress bar (rich) on stderr, for the commands that report progress.

Shown only when stderr is a terminal and the work takes longer than a second (rich's live
display starts after ``DELAY_SECONDS``), never with ``--quiet``: a log, a pipe and the tests'
captured output see no bar.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: A bar appears only for work still running after this many seconds.
DELAY_SECONDS = 1.0


def wants_bar(quiet: bool, stream=None) -> bool:
    """Whether to draw a bar: not ``quiet`` and ``stream`` (default stderr) is a terminal.

    >>> import io
    >>> wants_bar(False, io.StringIO()), wants_bar(True, io.StringIO())
    (False, False)
    """
    stream = sys.stderr if stream is None else stream
    return not quiet and hasattr(stream, "isatty") and stream.isatty()


@contextmanager
def progress_bar(what: str, total: int | None, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Yield ``advance(label)``, which moves a bar of ``total`` steps (None: unknown) on by one.

    The bar is drawn on stderr after ``DELAY_SECONDS`` when ``wants_bar(quiet)``; otherwise
    ``advance`` does nothing.
    """
    if not wants_bar(quiet):
        yield lambda _label: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=True, auto_refresh=True)
    task = progress.add_task(what, total=total)
    timer = threading.Timer(DELAY_SECONDS, progress.start)
    timer.daemon = True
    timer.start()

    def advance(label: str) -> None:
        progress.update(task, advance=1, description=f"{what}: {label}")

    try:
        yield advance
    finally:
        timer.cancel()
        timer.join()
        progress.stop()


@contextmanager
def progress_messages(what: str, quiet: bool = False, total: int | None = None,
                      steps: tuple[str, ...] = (), stream=None) -> Iterator[Callable[[str], None]]:
    """Yield ``report(message)`` for a command's progress lines (``build``, ``fetch``).

    ``quiet``: nothing is printed. Otherwise each message is a line on stderr, as before; on a
    terminal a bar is drawn below the lines as well (after ``DELAY_SECONDS``), moved on by one
    for each message that starts with one of ``steps``; a message ``read manifest: N sources``
    sets its total to N plus the other steps when ``total`` is None. ``stream``: where to write
    (default stderr).

    >>> with progress_messages("build", quiet=True) as report:
    ...     report("parsed x")  # prints nothing
    """
    if quiet:
        yield lambda _message: None
        return
    stream = sys.stderr if stream is None else stream
    if not wants_bar(quiet, stream):
        yield lambda message: print(message, file=stream)
        return
    import re

    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(file=stream, force_terminal=True)
    progress = Progress(SpinnerColumn(), TextColumn(what), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                        TimeElapsedColumn(), console=console, transient=True)
    task = progress.add_task(what, total=total)
    timer = threading.Timer(DELAY_SECONDS, progress.start)
    timer.daemon = True
    timer.start()
    other_steps = sum(1 for s in steps if s != "parsed ")

    def report(message: str) -> None:
        progress.console.print(message, markup=False, highlight=False, soft_wrap=True)
        listed = re.match(r"read manifest: (\d+) sources", message)
        if listed and total is None:
            progress.update(task, total=int(listed.group(1)) + other_steps)
        if message.startswith(steps):
            progress.update(task, advance=1)

    try:
        yield report
    finally:
        timer.cancel()
        timer.join()
        progress.stop()
