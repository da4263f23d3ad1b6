"""The expected failures of a command as the command line reports them, with no command-line
library loaded (``pipeline.cli.group.run`` and ``pipeline.cli.attack_command.run_plain`` share
them): one ``Error: <what, where, how to fix>`` line on stderr and exit status 1."""

from __future__ import annotations

import sys

from pipeline.errors import Wh40kError


def failure_status(exc: BaseException) -> int | None:
    """For an expected error (``Wh40kError``, or what DuckDB raises for a damaged database file or
    a refusal of the read-only sandbox: ``pipeline.database.database_failure``): print its
    ``Error: ...`` line on stderr and give 1. None for anything else (a bug: the caller re-raises
    it, with its traceback)."""
    failure = exc if isinstance(exc, Wh40kError) else _database_failure(exc)
    if failure is None:
        return None
    print(f"Error: {failure}", file=sys.stderr)
    return 1


def _database_failure(exc: BaseException) -> Wh40kError | None:
    """The one-line error for a DuckDB error of a damaged database or the sandbox (None for any
    other exception: a bug, which keeps its traceback)."""
    if "duckdb" not in sys.modules:  # nothing opened a database
        return None
    from pipeline.database import database_failure

    return database_failure(exc)


def undecodable_argument(argv) -> int | None:
    """The 1-based number of the first argument that holds bytes that are not UTF-8 (Python gives
    them as lone surrogates, ``'\\udcff'``), None when every argument is text.

    >>> undecodable_argument(["sql", "SELECT 1"]), undecodable_argument(["rule", "Cap\\udcfftain"])
    (None, 2)
    """
    for number, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return number
    return None
