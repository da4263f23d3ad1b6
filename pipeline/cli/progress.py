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
