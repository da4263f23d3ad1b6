"""``wh40k build``: extract, parse, validate and load the raw snapshots into the database."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.cli import app
from pipeline.cli.output import cell, console
from pipeline.database import DEFAULT_DB
from pipeline.wh40k import end_without_teardown

if TYPE_CHECKING:  # the build (sqlalchemy, pyarrow) and rich are imported when the command runs
    from rich.table import Table
    from rich.text import Text

    from pipeline.build import BuildReport
    from schemas.records import Accounting


_COUNTS = ("input", "loaded", "duplicates", "rejected")


def _accounting(report: BuildReport, width: int) -> list[Text | Table]:
    """The accounting as one table, or, when that does not fit ``width`` columns (a log, a pipe,
    a narrow terminal), a heading line per source followed by that source's rows. No cell is
    ever cut short: a cell too long for its column folds onto the next line.
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    def counts(a: Accounting) -> list[Text]:
        return [cell(n) for n in (a.input_rows, a.loaded, a.duplicates, a.rejected)]

    title = "Accounting per source (input = loaded + duplicates + rejected)"
    wide = Table(title=title, title_justify="left")
    for col in ("source", "stage", "table", *_COUNTS):
        wide.add_column(col, justify="right" if col in _COUNTS else "left", overflow="fold")
    for a in report.accounting:
        wide.add_row(cell(a.source_id), cell(a.stage), cell(a.table_name), *counts(a))
    natural = console(width=10_000).measure(wide).maximum  # the width it takes uncut
    if natural <= width:
        return [wide]
    parts: list[Text | Table] = [Text(title, style="italic")]
    for source_id in dict.fromkeys(a.source_id for a in report.accounting):
        parts.append(Text(f"source {source_id}", style="bold"))
        rows = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 1), collapse_padding=True)
        for col in ("stage", "table", *_COUNTS):
            rows.add_column(col, justify="right" if col in _COUNTS else "left", overflow="fold")
        for a in report.accounting:
            if a.source_id == source_id:
                rows.add_row(cell(a.stage), cell(a.table_name), *counts(a))
        parts.append(rows)
    return parts


def _summary(report: BuildReport) -> None:
    """The build's summary on stderr: rows per table, the accounting, the totals."""
    from rich.table import Table
    from rich.text import Text

    err = console(stderr=True)
    table = Table(title=cell(f"Built {report.db_path}"), title_justify="left")
    table.add_column("table", overflow="fold")
    table.add_column("rows", justify="right", overflow="fold")
    for name, n in report.rows.items():
        table.add_row(cell(name), cell(n))
    err.print(table)
    for part in _accounting(report, err.width):
        err.print(part, soft_wrap=isinstance(part, Text))
    for a in report.inconsistent:
        err.print(Text(f"accounting does not add up: {a.source_id} {a.stage} {a.table_name}", style="red"),
                  soft_wrap=True)
    dropped = sum(report.boilerplate.values())
    if report.skipped:
        err.print(f"skipped (not fetched): {', '.join(report.skipped)}; `wh40k fetch` brings them", soft_wrap=True)
    err.print(
        f"{sum(report.rows.values())} rows in {len(report.rows)} tables; "
        f"{report.duplicates} duplicates collapsed; {report.rejected} rejected (see table rejects); "
        f"{dropped} boilerplate lines dropped",
        soft_wrap=True,
    )
    if report.seconds:
        err.print(timing_line(report.seconds), soft_wrap=True)


def timing_line(seconds: dict[str, float]) -> str:
    """The build's wall time by stage, with the slowest sources named.

    >>> timing_line({"parse a": 2.0, "parse b": 0.5, "validate and merge": 1.0, "load": 0.25})
    'time: parse 2.5 s (slowest: a 2.0 s, b 0.5 s), validate and merge 1.0 s, load 0.2 s'
    """
    parses = sorted(((k.removeprefix("parse "), v) for k, v in seconds.items() if k.startswith("parse ")),
                    key=lambda kv: -kv[1])
    slowest = ", ".join(f"{name} {t:.1f} s" for name, t in parses[:3])
    parts = [f"parse {sum(t for _, t in parses):.1f} s" + (f" (slowest: {slowest})" if slowest else "")]
    parts += [f"{k} {v:.1f} s" for k, v in seconds.items() if not k.startswith("parse ")]
    return "time: " + ", ".join(parts)


#: Exit statuses after a signal, as a shell reports them (128 + the signal's number).
EXIT_INTERRUPTED, EXIT_TERMINATED = 128 + signal.SIGINT, 128 + signal.SIGTERM


@contextmanager
def _sigterm_as_interrupt(received: list[int]) -> Iterator[None]:
    """While inside, SIGTERM stops the build as Ctrl-C does (``KeyboardInterrupt``, so every
    ``finally`` removes its temporary file), and is noted in ``received``.

    A process forked meanwhile (the parse's worker) is simply ended by it, as by default.
    """
    parent = os.getpid()

    def on_sigterm(signum: int, _frame: object) -> None:
        if os.getpid() != parent:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        received.append(signum)
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _identity(path: Path) -> tuple[int, ...] | None:
    """What tells one file at ``path`` from another that replaced it (None: no file)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def stopped_message(db: Path, before: tuple[int, ...] | None, terminated: bool) -> str:
    """The one line printed when a build is stopped, true to whether ``db`` was replaced meanwhile.

    ``before``: ``_identity(db)`` when the build started. The new database is renamed into place
    only when complete, so the file at ``db`` is the old one or a complete new one.
    """
    what = "Terminated (SIGTERM)" if terminated else "Interrupted"
    after = _identity(db)
    if after == before:
        return f"{what}: {db} was not changed"
    if after is None:
        return f"{what}: {db} is gone (removed by something else than the build meanwhile)"
    if before is None:
        return f"{what}: {db} was written: the build had completed the new database before it stopped"
    return f"{what}: {db} was replaced: the build had completed the new database before it stopped"


@app.command("build")
def build_command(
    raw: Path = typer.Option(Path("raw"), "--raw", help="Folder with manifest.toml and the snapshots."),
    db: str = typer.Option(
        str(DEFAULT_DB), "--db",
        help="Database to write: a DuckDB file, sqlite:///FILE.sqlite or postgresql://USER@HOST/DBNAME.",
    ),
    allow_shrink: bool = typer.Option(
        False, "--allow-shrink",
        help="Replace the database even when a source's table loses more than half its rows (or all).",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary."),
) -> None:
    """Build the database from the raw snapshots (what `make build-db` runs).

    Ctrl-C or SIGTERM stop it (exit status 130 or 143) and leave the previous database, unless
    the new one was already complete and renamed into place (the message says which).

    Example: wh40k build --raw raw --db db/wh40k.duckdb (or --db sqlite:///db/wh40k.sqlite)
    """
    received: list[int] = []
    try:  # the build's modules (some 0.1 s): a signal meanwhile has changed nothing
        with _sigterm_as_interrupt(received):
            from pipeline.build import build
            from pipeline.targets import parse_target

            from pipeline.cli.progress import progress_messages
    except KeyboardInterrupt:
        what = "Terminated (SIGTERM)" if received else "Interrupted"
        print(f"{what}: nothing was changed", file=sys.stderr)
        raise typer.Exit(EXIT_TERMINATED if received else EXIT_INTERRUPTED) from None

    target = parse_target(db)
    before = _identity(target.path) if target.is_file else None
    try:
        with _sigterm_as_interrupt(received), progress_messages(
                "build", quiet, steps=("parsed ", "validated ", "loaded ")) as progress:
            report = build(raw, target, progress, allow_shrink=allow_shrink, keep=end_without_teardown())
    except KeyboardInterrupt:
        # the build writes a temporary file of its own, removed on the way out (PostgreSQL: one
        # transaction, rolled back)
        if target.is_file:
            print(stopped_message(target.path, before, bool(received)), file=sys.stderr)
        else:
            what = "Terminated (SIGTERM)" if received else "Interrupted"
            print(f"{what}: {target} was not changed (the build's transaction was rolled back)", file=sys.stderr)
        raise typer.Exit(EXIT_TERMINATED if received else EXIT_INTERRUPTED) from None
    if not quiet:
        _summary(report)
